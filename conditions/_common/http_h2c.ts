/**
 * http `--h2c`: one request as HTTP/2 over cleartext with prior knowledge
 * (RFC 9113 §3.3: the client starts with the HTTP/2 preface, no upgrade),
 * through `node:http2`, on one address of the server (docs/contract.md §5
 * http). One session per request, closed with the answer, like the
 * HTTP/1.1 requests without keep-alive.
 *
 * @module
 */

import { onAbort } from "../../engine/abort.ts";
import { withHint } from "../../engine/errors.ts";
import { type HttpReply, RequestError } from "./httpx.ts";
import { nodeErrorHint } from "./hints.ts";
import { describeNodeError } from "./nodeerr.ts";

/** One h2c request. */
export interface H2cRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string | undefined;
  readonly signal: AbortSignal;
  /** The IP address to connect to (the URL's host still names `:authority`). */
  readonly address: string;
}

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2) or carries as pseudo-headers. */
const CONNECTION_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/**
 * A session or stream error as the short reason. Once connected, a failure before any answer
 * most likely means a server that speaks only HTTP/1.1: it answers the HTTP/2 preface with a
 * 400 and closes, which node sees as a reset, a closed connection or a protocol error.
 */
function describe(e: unknown, hostname: string, connected: boolean): RequestError {
  const code = (e as { code?: string }).code;
  const why = describeNodeError(e, hostname);
  if (connected) {
    return new RequestError(
      `no HTTP/2 answer over cleartext (h2c; does the server speak only HTTP/1.1?): ${why}`,
      code,
    );
  }
  return withHint(new RequestError(why, code), nodeErrorHint(e, hostname));
}

/** Sends one request over a new h2c session; throws a `RequestError` when no answer came. */
export async function h2cRequest(req: H2cRequest): Promise<HttpReply> {
  const http2 = await import("node:http2");
  const { signal, url } = req;
  signal.throwIfAborted();
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port === "" ? 80 : Number(url.port);
  const family = req.address.includes(":") ? 6 : 4;
  const session = http2.connect(`http://${url.host}`, {
    port,
    lookup: ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) => {
      if (o?.all) cb(null, [{ address: req.address, family }]);
      else cb(null, req.address, family);
    }) as unknown as import("node:net").LookupFunction,
  });
  const headers: Record<string, string> = {
    ":method": req.method,
    ":path": url.pathname + url.search,
    ":authority": url.host,
    ":scheme": "http",
  };
  for (const [k, v] of req.headers) {
    const name = k.toLowerCase();
    if (!CONNECTION_HEADERS.has(name)) headers[name] = v;
  }
  return await new Promise<HttpReply>((resolve, reject) => {
    let settled = false;
    let connected = false;
    session.once("connect", () => (connected = true));
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      off();
      session.destroy();
      reject(signal.aborted ? signal.reason : describe(e, hostname, connected));
    };
    // `on`, not `once`: a later error event without a listener would crash the process.
    session.on("error", fail);
    session.on("close", () => fail(new Error("connection closed before a response")));
    const stream = session.request(headers, { endStream: req.body === undefined });
    const off = onAbort(signal, () => fail(signal.reason));
    stream.on("error", fail);
    stream.once("response", (h) => {
      if (settled) return;
      settled = true;
      off();
      resolve(h2Reply(session, stream, h, signal));
    });
    if (req.body !== undefined) stream.end(req.body);
  });
}

/** The answer of `stream`; closing it (or an abort) closes the session. */
function h2Reply(
  session: import("node:http2").ClientHttp2Session,
  stream: import("node:http2").ClientHttp2Stream,
  headers: import("node:http2").IncomingHttpHeaders,
  signal: AbortSignal,
): HttpReply {
  let done = false;
  const close = () => {
    if (done) return;
    done = true;
    off();
    stream.destroy();
    session.destroy();
  };
  const off = onAbort(signal, close);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      stream.on("data", (chunk: Uint8Array) => {
        c.enqueue(new Uint8Array(chunk));
        if ((c.desiredSize ?? 1) <= 0) stream.pause();
      });
      stream.on("end", () => {
        try {
          c.close();
        } catch {
          // already closed or errored
        }
      });
      stream.on("error", (e) => {
        try {
          c.error(e);
        } catch {
          // already closed or errored
        }
      });
      stream.on("close", () => {
        try {
          c.error(new Error(signal.aborted ? "aborted" : "connection closed"));
        } catch {
          // already closed: the body ended first
        }
      });
    },
    pull() {
      stream.resume();
    },
    cancel: close,
  });
  return {
    status: Number(headers[":status"] ?? 0),
    // HTTP/2 has no reason phrase.
    statusText: "",
    header(name) {
      const v = headers[name.toLowerCase()];
      return Array.isArray(v) ? v.join(", ") : v;
    },
    body,
    close,
  };
}
