/**
 * Judges an http answer: the status, then the body checks (`--contains`,
 * `--matches`, `--jsonpath`, `--xpath`) on at most `BODY_LIMIT` bytes of the body.
 *
 * @module
 */

import { clip, type SecretRegistry } from "../../engine/masking.ts";
import type { ProbeResult } from "../../engine/types.ts";
import { formatSize } from "./bytes.ts";
import type { HttpReply } from "./httpx.ts";
import { captureText } from "./captures.ts";
import { httpAuthHint } from "./hints.ts";
import { jsonSyntaxError, judgeJsonPaths } from "./jsonpath_lib.ts";
import { execText, type UserRegex } from "./regex.ts";
import { readCapped } from "./stream.ts";
import type { ExpectHeader, HttpOptions } from "./http_options.ts";
import { statusLine, statusMatches } from "./http_status.ts";
import { judgeXPaths } from "./xpath.ts";

/** Headers that carry credentials (a 401 then means they were refused, not missing). */
const CREDENTIAL_HEADER = /^(authorization|cookie|x-api-key|x-auth-token)$/i;

/** Most characters of a response header's value an error shows. */
const HEADER_SHOWN = 60;

/** Response headers whose values an error never shows (they carry sessions and credentials). */
const SECRET_REPLY_HEADER =
  /^(set-cookie|cookie|authorization|proxy-authorization|www-authenticate)$|token|secret|key|passw|auth/i;

/** Most body bytes read per response. */
export const BODY_LIMIT = 10 << 20;

/**
 * Whether `reply` (to a request with `method`) satisfies the condition.
 * Throws when reading the body fails.
 */
export async function judge(
  o: HttpOptions,
  matches: UserRegex | undefined,
  reply: HttpReply,
  method: string,
  signal: AbortSignal,
  secrets?: SecretRegistry,
  headerRes: readonly UserRegex[] = [],
): Promise<ProbeResult> {
  const line = statusLine(reply.status, reply.statusText);
  if (!statusMatches(o.status, reply.status)) {
    const error = `status ${reply.status}, expected ${o.status.text}`;
    const sent = o.headers.some((h) => CREDENTIAL_HEADER.test(h.name));
    const hint = httpAuthHint(reply.status, sent, reply.header("www-authenticate"));
    return hint === undefined ? { status: "pending", error } : { status: "pending", error, hint };
  }
  const parts = [line];
  let captures: Record<string, string> = {};
  for (const [i, expect] of o.expectHeaders.entries()) {
    const found = judgeHeader(expect, headerRes[i], reply, line, secrets);
    if ("error" in found) return { status: "pending", error: found.error };
    parts.push(found.detail);
    captures = { ...captures, ...found.captures };
  }
  const needsBody = o.contains !== undefined || matches !== undefined || o.jsonpaths.length > 0 ||
    o.xpaths.length > 0;
  if (!needsBody || method === "HEAD") {
    const detail = parts.join("; ");
    return Object.keys(captures).length > 0
      ? { status: "satisfied", detail, captures }
      : { status: "satisfied", detail };
  }
  const { bytes, truncated } = await readCapped(reply.body, BODY_LIMIT, { signal });
  const text = new TextDecoder().decode(bytes);
  const size = truncated ? `more than ${formatSize(BODY_LIMIT)}` : formatSize(bytes.length);
  if (o.contains !== undefined) {
    if (!text.includes(o.contains)) {
      return {
        status: "pending",
        error: `body does not contain ${JSON.stringify(o.contains)} (${line}, ${size})`,
      };
    }
    parts.push(`body contains ${JSON.stringify(o.contains)}`);
  }
  if (matches !== undefined) {
    const groups = await execText(matches, text, signal);
    if (groups === undefined) {
      return {
        status: "pending",
        error: `body does not match /${o.matches}/ (${line}, ${size})`,
      };
    }
    captures = { ...captures, ...groups };
    parts.push(`body matches /${o.matches}/`);
  }
  if (o.jsonpaths.length > 0) {
    if (truncated) {
      return {
        status: "pending",
        error: `body is larger than ${formatSize(BODY_LIMIT)}, not parsed as JSON`,
      };
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      const why = text.trim() === "" ? "it is empty" : jsonSyntaxError(e);
      return { status: "pending", error: `body is not JSON: ${why} (${line})` };
    }
    const v = await judgeJsonPaths(o.jsonpaths, doc, signal, secrets);
    if (!v.ok) return { status: "pending", error: v.error };
    parts.push(...v.details);
    captures.value = captureText(v.value);
  }
  if (o.xpaths.length > 0) {
    if (truncated) {
      return {
        status: "pending",
        error: `body is larger than ${formatSize(BODY_LIMIT)}, not parsed as HTML or XML`,
      };
    }
    const r = await judgeXPaths(
      o.xpaths,
      text,
      reply.header("content-type"),
      `${line}, ${size}`,
      signal,
      secrets,
    );
    if (!r.ok) return { status: "pending", error: r.error };
    parts.push(...r.details);
    captures.value = r.value;
  }
  return { status: "satisfied", detail: parts.join("; "), captures };
}

/**
 * One `--expect-header` on `reply`: its detail and captures, or why it does not hold. The
 * header's value is at most 16 KiB (node's limit on all headers), so RE2 runs on this thread;
 * the value of a header that carries credentials is never shown.
 */
function judgeHeader(
  expect: ExpectHeader,
  re: UserRegex | undefined,
  reply: HttpReply,
  line: string,
  secrets: SecretRegistry | undefined,
): { detail: string; captures: Record<string, string> } | { error: string } {
  const value = reply.header(expect.name);
  if (value === undefined) return { error: `no header ${expect.name} (${line})` };
  if (re === undefined || expect.regex === "") {
    return { detail: `header ${expect.name} present`, captures: {} };
  }
  const groups = re.exec(value);
  if (groups !== undefined) {
    return { detail: `header ${expect.name} matches /${expect.regex}/`, captures: { ...groups } };
  }
  const shown = SECRET_REPLY_HEADER.test(expect.name)
    ? `(${value.length} characters, not shown)`
    : JSON.stringify(clip(value, HEADER_SHOWN, secrets));
  return {
    error: `header ${expect.name} ${shown} does not match /${expect.regex}/ (${line})`,
  };
}
