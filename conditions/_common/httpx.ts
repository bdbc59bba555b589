/**
 * HTTP requests, shared by the http and orch kinds: two transports of one
 * shape and the one describer of their failures (docs/contract.md §8); the
 * status reasons are http_status.ts's.
 *
 * - `fetchTransport`: Deno's `fetch` with its own client (CA, client
 *   certificate, proxy). It honours the proxy environment variables and keeps
 *   connections alive between requests.
 * - `nodeTransport`: `node:http`/`node:https`, for what `fetch` cannot do:
 *   connecting to one given address of a name, skipping certificate
 *   verification, checking the certificate against another name.
 *
 * A request that fails before an answer throws a `RequestError` whose message
 * is already the short reason; an abort throws the signal's reason.
 *
 * @module
 */

import { onAbort } from "../../engine/abort.ts";
import { describeError, withHint } from "../../engine/errors.ts";
import { nodeErrorHint } from "./hints.ts";
import { canonicalIp } from "./net.ts";
import { describeNodeError, tlsReason } from "./nodeerr.ts";

/** TLS material and checks of a transport (PEM texts). */
export interface TlsOptions {
  /**
   * The roots to trust: node:https trusts these alone (`--ca-file`'s; the default roots and
   * `--extra-ca-file`'s, conditions/_common/roots.ts); Deno's fetch trusts them besides its own.
   */
  readonly ca?: string | readonly string[];
  /** Client certificate; used together with `key`. */
  readonly cert?: string;
  readonly key?: string;
  /** Do not verify the server's certificate (node transport only). */
  readonly insecure?: boolean;
  /** The name the server's certificate must hold, when not the URL's host (node transport only). */
  readonly servername?: string;
}

/** One request. */
export interface HttpRequest {
  readonly url: string | URL;
  /** Default GET. */
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>> | readonly (readonly [string, string])[];
  readonly body?: string;
  readonly signal: AbortSignal;
  /** `follow` lets fetch follow redirects itself; the node transport never does. Default `manual`. */
  readonly redirect?: "manual" | "follow";
}

/** An answer whose body has not been read yet. */
export interface HttpReply {
  readonly status: number;
  /** The reason phrase the server sent (may be empty). */
  readonly statusText: string;
  /** A response header's value. */
  header(name: string): string | undefined;
  /** The body; it errors when the request's signal aborts. */
  readonly body: ReadableStream<Uint8Array>;
  /** Releases the answer (an unread body is dropped). Idempotent. */
  close(): void;
}

/** Sends requests with one set of TLS options. */
export interface HttpTransport {
  request(req: HttpRequest): Promise<HttpReply>;
  /** Closes the kept-alive connections. Idempotent. */
  close(): void;
}

/** A request that failed before an answer; the message is the short reason. */
export class RequestError extends Error {
  override name = "RequestError";
  /** The system's error code (`ECONNREFUSED`), when there is one. */
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

function headerPairs(h: HttpRequest["headers"]): (readonly [string, string])[] {
  if (h === undefined) return [];
  return Array.isArray(h)
    ? [...h as readonly (readonly [string, string])[]]
    : Object.entries(h as Record<string, string>);
}

function emptyBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (c) => c.close() });
}

/** Options of `fetchTransport`. */
export interface FetchOptions extends Pick<TlsOptions, "ca" | "cert" | "key"> {
  /** Proxy URL for every request (else the proxy environment variables apply). */
  readonly proxy?: string;
}

/** Deno's fetch with its own HTTP client; `close` closes the client. */
export function fetchTransport(opts: FetchOptions = {}): HttpTransport {
  const init: Deno.CreateHttpClientOptions & { cert?: string; key?: string } = {};
  if (opts.ca !== undefined) init.caCerts = typeof opts.ca === "string" ? [opts.ca] : [...opts.ca];
  if (opts.cert !== undefined && opts.key !== undefined) {
    init.cert = opts.cert;
    init.key = opts.key;
  }
  if (opts.proxy) init.proxy = { url: opts.proxy };
  const client = Deno.createHttpClient(init);
  let closed = false;
  return {
    async request(req) {
      let res: Response;
      try {
        res = await fetch(req.url, {
          method: req.method ?? "GET",
          headers: headerPairs(req.headers) as [string, string][],
          body: req.body,
          redirect: req.redirect ?? "manual",
          signal: req.signal,
          client,
        });
      } catch (e) {
        if (req.signal.aborted) throw req.signal.reason ?? e;
        const host = new URL(req.url).hostname.replace(/^\[|\]$/g, "");
        throw new RequestError(describeRequestError(e, host));
      }
      let done = false;
      return {
        status: res.status,
        statusText: res.statusText,
        header: (name) => res.headers.get(name) ?? undefined,
        body: res.body ?? emptyBody(),
        close() {
          if (done) return;
          done = true;
          res.body?.cancel().catch(() => {});
        },
      };
    },
    close() {
      if (closed) return;
      closed = true;
      client.close();
    },
  };
}

/** Options of `nodeTransport`. */
export interface NodeOptions extends TlsOptions {
  /** Keep connections open between requests (until `close`). */
  readonly keepAlive?: boolean;
  /**
   * Connect to this IP address instead of resolving the URL's host, which
   * still names the Host header and the TLS server.
   */
  readonly address?: string;
  /** Connect to this Unix domain socket instead (http --unix-socket); the URL still gives Host. */
  readonly socketPath?: string;
}

type NodeAgent = { destroy(): void };
type LookupFn = NonNullable<import("node:https").RequestOptions["lookup"]>;

/** A lookup that answers every name with `address`. */
function pinnedLookup(address: string): LookupFn {
  const family = address.includes(":") ? 6 : 4;
  return ((_host: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (o?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFn;
}

/** `node:http`/`node:https` requests; `close` destroys the kept-alive connections. */
export function nodeTransport(opts: NodeOptions = {}): HttpTransport {
  const agents = new Map<string, NodeAgent>();
  return {
    async request(req) {
      const url = typeof req.url === "string" ? new URL(req.url) : req.url;
      const secure = url.protocol === "https:";
      const mod = secure ? await import("node:https") : await import("node:http");
      const { signal } = req;
      signal.throwIfAborted();
      const hostname = url.hostname.replace(/^\[|\]$/g, "");
      const headers: Record<string, string> = {};
      for (const [k, v] of headerPairs(req.headers)) headers[k] = v;
      if (!Object.keys(headers).some((k) => k.toLowerCase() === "host")) headers.Host = url.host;
      if (req.body !== undefined) {
        headers["Content-Length"] = String(new TextEncoder().encode(req.body).length);
      }
      const options: import("node:https").RequestOptions = {
        host: hostname,
        port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
        path: url.pathname + url.search,
        method: req.method ?? "GET",
        headers,
      };
      if (opts.address !== undefined) options.lookup = pinnedLookup(opts.address);
      if (opts.socketPath !== undefined) options.socketPath = opts.socketPath;
      const servername = opts.servername ??
        (canonicalIp(hostname) === undefined ? hostname : undefined);
      if (secure) {
        if (servername !== undefined) options.servername = servername;
        if (opts.ca !== undefined) {
          options.ca = typeof opts.ca === "string" ? opts.ca : [...opts.ca];
        }
        if (opts.cert !== undefined) options.cert = opts.cert;
        if (opts.key !== undefined) options.key = opts.key;
        options.rejectUnauthorized = !opts.insecure;
      }
      if (opts.keepAlive) {
        let agent = agents.get(url.protocol);
        if (!agent) {
          agent = new mod.Agent({ keepAlive: true, ...(secure ? tlsOf(options) : {}) });
          agents.set(url.protocol, agent);
        }
        options.agent = agent as import("node:https").Agent;
      } else {
        options.agent = false;
      }
      return await new Promise<HttpReply>((resolve, reject) => {
        const r = mod.request(options);
        const off = onAbort(
          signal,
          () => r.destroy(signal.reason instanceof Error ? signal.reason : undefined),
        );
        // `on`, not `once`: a later error event without a listener would crash the process.
        r.on("error", (e) => {
          off();
          if (signal.aborted) return reject(signal.reason ?? e);
          const code = (e as { code?: string }).code;
          const name = servername ?? hostname;
          reject(
            withHint(new RequestError(describeNodeError(e, name), code), nodeErrorHint(e, name)),
          );
        });
        r.once("response", (res) => {
          off();
          resolve(nodeReply(r, res, signal));
        });
        if (req.body !== undefined) r.write(req.body);
        r.end();
      });
    },
    close() {
      for (const a of agents.values()) a.destroy();
      agents.clear();
    },
  };
}

function tlsOf(o: import("node:https").RequestOptions): import("node:https").AgentOptions {
  return {
    ca: o.ca,
    cert: o.cert,
    key: o.key,
    rejectUnauthorized: o.rejectUnauthorized,
    servername: o.servername,
  };
}

/**
 * Wraps a node response: its body as a stream (read with back-pressure),
 * ended by an abort at once rather than by the socket's events. The stream
 * is made when the body is first read: most attempts judge the status alone,
 * and a stream with its listeners is about a tenth of a request's CPU
 * (docs/performance.md, "Cost per condition"). The body is read, when it is,
 * right after the answer arrives (no I/O in between), so no event of the
 * response is missed.
 */
function nodeReply(
  r: import("node:http").ClientRequest,
  res: import("node:http").IncomingMessage,
  signal: AbortSignal,
): HttpReply {
  let ended = false;
  let endError: Error | undefined;
  let complete = false;
  let ctl: ReadableStreamDefaultController<Uint8Array> | undefined;
  let body: ReadableStream<Uint8Array> | undefined;
  // Replaced below; a signal that has already aborted calls `end` from within `onAbort`.
  let off = () => {};
  const end = (e?: Error) => {
    off();
    if (ended) return;
    ended = true;
    endError = e;
    if (e) ctl?.error(e);
    else ctl?.close();
  };
  off = onAbort(signal, () => {
    r.destroy();
    end(new Error("aborted"));
  });
  const makeBody = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        ctl = c;
        if (ended) {
          if (endError) c.error(endError);
          else c.close();
          return;
        }
        res.on("data", (chunk: Uint8Array) => {
          if (ended) return;
          c.enqueue(new Uint8Array(chunk));
          if ((c.desiredSize ?? 1) <= 0) res.pause();
        });
        res.on("end", () => {
          complete = true;
          end();
        });
        res.on("error", (e) => end(e));
        // Closed before its end: the connection broke.
        res.on("close", () => end(new Error("connection closed")));
      },
      pull() {
        res.resume();
      },
      cancel() {
        ended = true;
        off();
        r.destroy();
      },
    });
  const headers = res.headers;
  return {
    status: res.statusCode ?? 0,
    statusText: res.statusMessage ?? "",
    header(name) {
      const v = headers[name.toLowerCase()];
      return Array.isArray(v) ? v.join(", ") : v;
    },
    get body() {
      return body ??= makeBody();
    },
    close() {
      off();
      if (complete) return;
      if (!ended) {
        ended = true;
        try {
          ctl?.close();
        } catch {
          // already errored
        }
      }
      r.destroy();
    },
  };
}

/**
 * A failed request (fetch or node) as a short lower-case reason:
 * `connection refused`, `cannot resolve host`, `certificate not trusted
 * (unknown issuer)`. `hostname` names the server in certificate errors.
 */
export function describeRequestError(e: unknown, hostname = ""): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code !== "") {
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "cannot resolve host";
    return describeNodeError(e, hostname);
  }
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  let t = cause instanceof Error ? cause.message : String(cause);
  const m = /client error \([A-Za-z]+\): (.*)$/s.exec(t);
  if (m) t = m[1]!;
  t = t.replace(/^error sending request[^:]*\): /, "").replace(/^tcp connect error: /, "");
  const peer = /invalid peer certificate: (.*)$/is.exec(t);
  if (peer) return certificateReason(peer[1]!);
  if (/certificate verify failed|UnknownIssuer/i.test(t)) return certificateReason(t);
  if (/dns error|failed to lookup address/i.test(t)) return "cannot resolve host";
  // rustls's words (and a docs.rs link) for a TLS connection the server dropped.
  if (/peer closed connection without sending TLS close_notify/i.test(t)) {
    return "connection closed by the server (TLS)";
  }
  // hyper and h2 for a pooled connection the server closed: node's EPIPE and `socket hang up`.
  if (/broken pipe/i.test(t)) return "connection closed by peer";
  if (/connection closed before message completed/i.test(t)) {
    return "connection closed before a response";
  }
  return describeError(t);
}

/** A rustls verification failure in the words of `tlsReason`. */
function certificateReason(why: string): string {
  const name = /not valid for name "([^"]*)"/.exec(why);
  if (name) return `certificate is not valid for ${name[1]}`;
  if (/UnknownIssuer/i.test(why)) return tlsReason("UNABLE_TO_GET_ISSUER_CERT_LOCALLY")!;
  if (/NotValidYet|not valid yet/i.test(why)) return tlsReason("CERT_NOT_YET_VALID")!;
  if (/expired/i.test(why)) return tlsReason("CERT_HAS_EXPIRED")!;
  return `certificate not trusted (${describeError(why.split(";")[0]!)})`;
}
