/**
 * An HTTP request's options as plain data (no I/O), from http's flags and target: the URL and
 * its secrets, the expected status, the body checks, the request's shape and its TLS files, and
 * which proxy variable routes a URL. Shared by the kinds whose probe is the HTTP probe
 * (http_probe.ts), each declaring the flags it takes.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { isSecretHeader, redactUrl, safeDecode } from "../../engine/typed_secrets.ts";
import type { FlagSpec, KindInput } from "../../engine/types.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "./jsonpath.ts";
import { headerFormError, splitHeader } from "./headers.ts";
import { checkRegexSyntax, parseRegex } from "./textmatch.ts";
import { EXTRA_CA_FLAG } from "./roots.ts";
import { parseStatusSpec, type StatusSpec } from "./http_status.ts";

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What an http condition needs: plain data settled by `parse`. */
export interface HttpOptions {
  /** The URL without its user-info (sent as an Authorization header instead). */
  readonly url: string;
  readonly method: string;
  readonly headers: readonly Header[];
  readonly body: string | undefined;
  /** `--body-file`: the body is this file's text, read on every attempt. */
  readonly bodyFile: string | undefined;
  readonly status: StatusSpec;
  /** `--expect-header`: response headers whose values must match. */
  readonly expectHeaders: readonly ExpectHeader[];
  readonly contains: string | undefined;
  /** The `--matches` regular expression's source (`^` and `$` match at lines). */
  readonly matches: string | undefined;
  readonly jsonpaths: readonly JsonPathExpr[];
  /** `--xpath`: XPath 1.0 expressions on the body parsed as HTML or XML. */
  readonly xpaths: readonly string[];
  readonly caFile: string | undefined;
  /** --extra-ca-file: trusted besides the default roots. */
  readonly extraCaFile: string | undefined;
  readonly certFile: string | undefined;
  readonly keyFile: string | undefined;
  readonly insecure: boolean;
  readonly follow: boolean;
  /** --unix-socket: every request goes over this Unix domain socket (the URL gives path and Host). */
  readonly socketPath: string | undefined;
  /** --h2c: http:// requests are HTTP/2 over cleartext with prior knowledge. */
  readonly h2c: boolean;
}

/**
 * The TLS flags of an HTTP request, as http declares them and in its order; a kind that sends
 * its requests through this module takes those it needs.
 */
export const HTTP_TLS_FLAGS: readonly FlagSpec[] = [
  {
    name: "ca-file",
    type: "string",
    placeholder: "PATH",
    complete: "file",
    description: "trust the CA certificates of this PEM file",
  },
  EXTRA_CA_FLAG,
  {
    name: "client-cert",
    type: "string",
    placeholder: "PATH",
    complete: "file",
    description: "client certificate (PEM) for mutual TLS; needs --client-key",
  },
  {
    name: "client-key",
    type: "string",
    placeholder: "PATH",
    complete: "file",
    description: "private key (PEM) of --client-cert",
  },
  {
    name: "insecure",
    type: "boolean",
    description: "do not verify the server certificate",
  },
];

/** One `--expect-header 'NAME: REGEX'`: the response has header NAME whose value REGEX finds. */
export interface ExpectHeader {
  /** The header's name as given (matched case-insensitively). */
  readonly name: string;
  /** The regular expression's source; empty: any value, the header need only be there. */
  readonly regex: string;
}

/**
 * `--expect-header` values of `input` (`NAME: REGEX`, or wait4x's `NAME=REGEX`), each checked
 * against JavaScript's regex syntax.
 */
export function parseExpectHeaders(input: KindInput): ExpectHeader[] {
  return input.strings("expect-header").map((text) => {
    const split = splitHeader(text);
    if (split === undefined) {
      return input.fail(
        "expect-header",
        `expected 'NAME: REGEX' (or NAME=REGEX), got ${JSON.stringify(text)}`,
      );
    }
    checkRegexSyntax(input, "expect-header", split.value);
    return { name: split.name, regex: split.value };
  });
}

/** One request header. */
export interface Header {
  readonly name: string;
  readonly value: string;
  /** Dropped when a redirect leaves the origin. */
  readonly secret: boolean;
}

/**
 * The proxy environment variable that applies to `url`, or undefined when the
 * request goes direct (none set, or NO_PROXY lists the host).
 */
export function proxyFor(url: URL, env: Readonly<Record<string, string>>): string | undefined {
  const scheme = url.protocol === "https:" ? "https" : "http";
  const names = [`${scheme}_proxy`, `${scheme.toUpperCase()}_PROXY`, "all_proxy", "ALL_PROXY"];
  const name = names.find((n) => (env[n] ?? "") !== "");
  if (!name) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const noProxy = env.no_proxy ?? env.NO_PROXY ?? "";
  for (let entry of noProxy.split(/[\s,]+/)) {
    entry = entry.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return undefined;
    entry = entry.replace(/^\[(.*)\](:\d+)?$/, "$1").replace(/^([^:]+):\d+$/, "$1");
    const bare = entry.replace(/^\*?\./, "");
    if (host === bare || host.endsWith("." + bare)) return undefined;
  }
  return name;
}

/** Parses the target and flags, registering every secret; fails with usage errors. */
export function parseHttpOptions(input: KindInput): HttpOptions {
  const raw = input.target ?? "";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return input.fail(undefined, `expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    input.fail(undefined, `expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
  }
  if (url.hostname === "") input.fail(undefined, `missing host in ${JSON.stringify(raw)}`);
  for (const s of redactUrl(raw).secrets) input.secret(s);

  const headers: Header[] = [];
  const setHeader = (name: string, value: string, secret: boolean) => {
    const i = headers.findIndex((h) => h.name.toLowerCase() === name.toLowerCase());
    if (i >= 0) headers.splice(i, 1);
    headers.push({ name, value, secret });
    if (!secret) return;
    input.secret(value);
    // `Basic <base64>`, `Bearer <token>`: the credential alone too, as an echoing server or a
    // capture may show it without its scheme (docs/contract.md §9).
    const space = value.indexOf(" ");
    if (space > 0) input.secret(value.slice(space + 1).trim());
  };
  if (url.username !== "" || url.password !== "") {
    const user = safeDecode(url.username, false);
    const pass = safeDecode(url.password, false);
    input.secret(pass);
    setHeader("Authorization", basicAuth(user, pass), true);
    url.username = "";
    url.password = "";
  }

  let status = parseStatusSpec("2xx");
  const statusText = input.string("status");
  if (statusText !== undefined) status = orFail(input, "status", () => parseStatusSpec(statusText));

  const contains = input.string("contains");
  if (contains === "") input.fail("contains", "expected a text, got an empty string");
  // `^` and `$` match at lines.
  const matches = parseRegex(input, "m");
  const jsonpaths: JsonPathExpr[] = input.strings("jsonpath").map((text) =>
    orFail(input, "jsonpath", () => parseJsonPathExpr(text))
  );
  const expectHeaders = parseExpectHeaders(input);
  const xpaths = input.strings("xpath");
  if (xpaths.some((x) => x.trim() === "")) {
    input.fail("xpath", "expected an XPath expression like '//title', got an empty string");
  }

  const body = input.string("body");
  const bodyFile = parseBodyFile(input, body);
  let method = body !== undefined || bodyFile !== undefined ? "POST" : "GET";
  const methodText = input.string("method");
  if (methodText !== undefined) {
    if (!/^[A-Za-z]+$/.test(methodText)) {
      input.fail("method", `expected a method like GET or POST, got ${JSON.stringify(methodText)}`);
    }
    method = methodText.toUpperCase();
  }
  if (method === "HEAD") {
    for (const f of ["contains", "matches", "jsonpath", "xpath"]) {
      if (input.has(f)) input.fail(f, "needs a response body; HEAD responses have none");
    }
  }
  if (body !== undefined && (method === "GET" || method === "HEAD")) {
    input.fail("body", `cannot be sent with --method ${method}`);
  }
  if (bodyFile !== undefined && (method === "GET" || method === "HEAD")) {
    input.fail("body-file", `cannot be sent with --method ${method}`);
  }

  const basic = input.string("basic-auth-env");
  if (basic !== undefined) {
    const colon = basic.lastIndexOf(":");
    const user = basic.slice(0, colon);
    const envName = basic.slice(colon + 1);
    if (colon <= 0 || !ENV_NAME.test(envName)) {
      input.fail("basic-auth-env", `expected USER:ENVVAR, got ${JSON.stringify(basic)}`);
    }
    const pass = input.env[envName];
    if (pass === undefined) {
      return input.fail("basic-auth-env", `environment variable ${envName} is not set`);
    }
    input.secret(pass);
    setHeader("Authorization", basicAuth(user, pass), true);
  }
  for (const h of input.strings("header")) {
    // waitfor's `Name=value` too, with the same meaning (docs/contract.md §5 http).
    const split = splitHeader(h);
    if (split === undefined) return input.fail("header", headerFormError(h));
    setHeader(split.name, split.value, isSecretHeader(split.name));
  }
  for (const h of input.strings("header-env")) {
    const eq = h.indexOf("=");
    const name = h.slice(0, eq).trim();
    const envName = h.slice(eq + 1).trim();
    if (eq <= 0 || !TOKEN.test(name) || !ENV_NAME.test(envName)) {
      input.fail("header-env", `expected NAME=ENVVAR, got ${JSON.stringify(h)}`);
    }
    const value = input.env[envName];
    if (value === undefined) {
      return input.fail("header-env", `environment variable ${envName} is not set`);
    }
    setHeader(name, value, true);
  }

  const caFile = input.string("ca-file");
  const extraCaFile = input.string("extra-ca-file");
  const certFile = input.string("client-cert");
  const keyFile = input.string("client-key");
  const insecure = input.bool("insecure");
  for (
    const [flag, v] of [
      ["ca-file", caFile],
      ["extra-ca-file", extraCaFile],
      ["client-cert", certFile],
      ["client-key", keyFile],
    ]
  ) {
    if (v === "") input.fail(flag, "expected a path, got an empty string");
  }
  if (extraCaFile !== undefined && caFile !== undefined) {
    input.fail("extra-ca-file", "cannot be combined with --ca-file, which trusts only its own CAs");
  }
  if (certFile !== undefined && keyFile === undefined) {
    input.fail("client-cert", "needs --client-key");
  }
  if (keyFile !== undefined && certFile === undefined) {
    input.fail("client-key", "needs --client-cert");
  }
  for (const [flag, v] of [["ca-file", caFile], ["extra-ca-file", extraCaFile]]) {
    if (insecure && v !== undefined) input.fail("insecure", `cannot be combined with --${flag}`);
  }
  const socketPath = input.string("unix-socket");
  if (socketPath === "") input.fail("unix-socket", "expected a socket path, got an empty string");
  const h2c = input.bool("h2c");
  if (h2c && url.protocol !== "http:") {
    input.fail("h2c", "needs an http:// URL: h2c is HTTP/2 over cleartext");
  }
  if (h2c && socketPath !== undefined) input.fail("h2c", "cannot be combined with --unix-socket");
  if (insecure && url.protocol === "https:" && socketPath === undefined) {
    const proxy = proxyFor(url, input.env);
    if (proxy) {
      input.fail(
        "insecure",
        `cannot be used through a proxy (${proxy} is set); add the host to NO_PROXY`,
      );
    }
  }

  return {
    url: url.href,
    method,
    headers,
    body,
    bodyFile,
    status,
    expectHeaders,
    contains,
    matches,
    jsonpaths,
    xpaths,
    caFile,
    extraCaFile,
    certFile,
    keyFile,
    insecure,
    follow: !input.bool("no-follow-redirects"),
    socketPath,
    h2c,
  };
}

/**
 * `--body-file PATH`: a path, read on every attempt (a file another process may still be
 * writing stays pending, docs/contract.md §5 http); not with `--body`, not standard input.
 */
function parseBodyFile(input: KindInput, body: string | undefined): string | undefined {
  const path = input.string("body-file");
  if (path === undefined) return undefined;
  if (path === "") input.fail("body-file", "expected a path, got an empty string");
  if (path === "-") {
    input.fail("body-file", "expected a file: standard input cannot be read on every attempt");
  }
  if (body !== undefined) input.fail("body-file", "cannot be combined with --body");
  return path;
}

/** The value `parse` makes, or a usage error at `flag` with the message it threw. */
function orFail<T>(input: KindInput, flag: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    return input.fail(flag, (e as Error).message);
  }
}

/** `Basic base64(user:pass)`, the text encoded as UTF-8. */
function basicAuth(user: string, pass: string): string {
  // node:buffer's encoding, not `btoa(String.fromCharCode(...bytes))`: a spread of a long
  // password's bytes overflows the call stack.
  return `Basic ${Buffer.from(`${user}:${pass}`, "utf8").toString("base64")}`;
}
