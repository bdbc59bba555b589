/**
 * The HTTP probe (http's, and any kind's that checks an HTTP answer the same way): one request
 * per attempt (and one per redirect followed), then the answer judged. Unreadable TLS files, connection failures and
 * broken answers are thrown: the engine reports them as pending attempts
 * (docs/contract.md §8).
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { readFlagFile } from "./flagfile.ts";
import type { TlsOptions } from "./httpx.ts";
import { attemptRoots } from "./roots.ts";
import { compileRegex, type UserRegex } from "./regex.ts";
import { judge } from "./http_judge.ts";
import type { HttpOptions } from "./http_options.ts";
import { send } from "./http_send.ts";

/** Most redirects followed per attempt. */
export const MAX_REDIRECTS = 10;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Makes the probe of one condition whose options are an HTTP request's. */
export function createHttpProbe(o: HttpOptions, env: ProbeEnv): Probe {
  const matches = o.matches === undefined ? undefined : compileRegex(o.matches, "m");
  const headerRes = o.expectHeaders.map((h) => compileRegex(h.regex));
  return {
    check: ({ signal }) => attempt(o, { matches, headerRes }, env, signal),
  };
}

/** The TLS files, read on every attempt (they may be written or renewed meanwhile). */
async function readTls(o: HttpOptions, env: ProbeEnv["env"]): Promise<TlsOptions> {
  const read = (flag: string, path: string | undefined) =>
    path === undefined ? undefined : readFlagFile(flag, path);
  return {
    ca: await attemptRoots(o, env),
    cert: await read("client-cert", o.certFile),
    key: await read("client-key", o.keyFile),
    insecure: o.insecure,
  };
}

/** One attempt: the request (following redirects), then the status and body checks. */
async function attempt(
  o: HttpOptions,
  { matches, headerRes }: { matches: UserRegex | undefined; headerRes: readonly UserRegex[] },
  { env, secrets }: ProbeEnv,
  signal: AbortSignal,
): Promise<ProbeResult> {
  const tls = await readTls(o, env);
  let url = new URL(o.url);
  let method = o.method;
  // Read on every attempt, like the TLS files: another process may still be writing it.
  let body = o.bodyFile === undefined ? o.body : await readFlagFile("body-file", o.bodyFile);
  let headers = o.headers;
  for (let hop = 0;; hop++) {
    const reply = await send({
      url,
      method,
      headers,
      body,
      tls,
      env,
      signal,
      socketPath: o.socketPath,
      h2c: o.h2c,
    });
    try {
      const location = reply.header("location");
      if (o.follow && REDIRECTS.has(reply.status) && location !== undefined) {
        if (hop >= MAX_REDIRECTS) {
          return { status: "pending", error: `too many redirects (more than ${MAX_REDIRECTS})` };
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          return {
            status: "pending",
            error: `redirect to an invalid URL ${JSON.stringify(location)}`,
          };
        }
        if (next.protocol !== "http:" && next.protocol !== "https:") {
          return { status: "pending", error: `redirect to unsupported URL ${next.protocol}//…` };
        }
        if (
          reply.status === 303 ||
          ((reply.status === 301 || reply.status === 302) && method === "POST")
        ) {
          if (method !== "HEAD") method = "GET";
          body = undefined;
        }
        if (next.origin !== url.origin) headers = headers.filter((h) => !h.secret);
        url = next;
        continue;
      }
      return await judge(o, matches, reply, method, signal, secrets, headerRes);
    } catch (e) {
      if (signal.aborted) throw e;
      throw new Error(`reading the response: ${describeError(e)}`);
    } finally {
      reply.close();
    }
  }
}
