/**
 * Sends one http request: through the proxy that applies (Deno's fetch,
 * which honours the proxy variables), else straight to the server on each
 * address of its name in turn (`node:http(s)`, docs/contract.md §5).
 *
 * @module
 */

import {
  fetchTransport,
  type HttpReply,
  nodeTransport,
  RequestError,
  type TlsOptions,
} from "./httpx.ts";
import { loopbackRefusal, NEXT_ADDRESS_CODES, onEveryAddress } from "./net.ts";
import { type Header, proxyFor } from "./http_options.ts";

/** One request of an attempt (a redirect makes another). */
export interface Outgoing {
  readonly url: URL;
  readonly method: string;
  readonly headers: readonly Header[];
  readonly body: string | undefined;
  readonly tls: TlsOptions;
  /** The environment whose proxy variables route the request. */
  readonly env: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /** Send over this Unix domain socket instead of the network (no proxy). */
  readonly socketPath?: string;
  /** http:// requests as HTTP/2 over cleartext with prior knowledge, straight to the server. */
  readonly h2c?: boolean;
}

/** Sends `out`; throws a `RequestError` (the short reason) when no answer came. */
export function send(out: Outgoing): Promise<HttpReply> {
  const headers: [string, string][] = out.headers.map((h) => [h.name, h.value]);
  const has = (name: string) => out.headers.some((h) => h.name.toLowerCase() === name);
  if (!has("user-agent")) headers.push(["User-Agent", "waitcmd"]);
  if (!has("accept")) headers.push(["Accept", "*/*"]);
  const req = { url: out.url, method: out.method, headers, body: out.body, signal: out.signal };
  if (out.socketPath !== undefined) return viaSocket(req, out.tls, out.socketPath);
  // h2c goes straight to the server: a forward proxy takes HTTP/1.1 (docs/contract.md §5 http).
  if (out.h2c && out.url.protocol === "http:") return viaH2c(out, headers);
  if (proxyFor(out.url, out.env)) {
    return viaFetch(req, out.tls);
  }
  const secure = out.url.protocol === "https:";
  const host = {
    hostname: out.url.hostname.replace(/^\[|\]$/g, ""),
    port: out.url.port === "" ? (secure ? 443 : 80) : Number(out.url.port),
  };
  return onEveryAddress(
    host,
    out.signal,
    (address) =>
      nodeTransport({ ...out.tls, address: address.hostname }).request(req).catch((e) =>
        loopbackRefusal(e, address)
      ),
    (e) => e instanceof RequestError && NEXT_ADDRESS_CODES.has(e.code ?? ""),
  );
}

/** One h2c request, on each address of the server's name in turn. */
function viaH2c(
  out: Outgoing,
  headers: readonly (readonly [string, string])[],
): Promise<HttpReply> {
  const host = {
    hostname: out.url.hostname.replace(/^\[|\]$/g, ""),
    port: out.url.port === "" ? 80 : Number(out.url.port),
  };
  return onEveryAddress(
    host,
    out.signal,
    (address) =>
      import("./http_h2c.ts").then(({ h2cRequest }) =>
        h2cRequest({
          url: out.url,
          method: out.method,
          headers,
          body: out.body,
          signal: out.signal,
          address: address.hostname,
        })
      ).catch((e) => loopbackRefusal(e, address)),
    (e) => e instanceof RequestError && NEXT_ADDRESS_CODES.has(e.code ?? ""),
  );
}

/**
 * One request over a Unix domain socket; the URL still gives the path, the
 * Host header and (https) the TLS name. A socket that is missing or refuses
 * is reported with its path.
 */
async function viaSocket(
  req: Parameters<ReturnType<typeof nodeTransport>["request"]>[0],
  tls: TlsOptions,
  socketPath: string,
): Promise<HttpReply> {
  try {
    return await nodeTransport({ ...tls, socketPath }).request(req);
  } catch (e) {
    if (!(e instanceof RequestError)) throw e;
    const why = e.code === "ENOENT"
      ? "no such file or directory"
      : e.code === "EACCES"
      ? "permission denied"
      : e.message;
    throw new RequestError(`socket ${socketPath}: ${why}`, e.code);
  }
}

/** One request through fetch with its own client, closed with the reply. */
async function viaFetch(
  req: Parameters<ReturnType<typeof fetchTransport>["request"]>[0],
  tls: TlsOptions,
): Promise<HttpReply> {
  const transport = fetchTransport({ ca: tls.ca, cert: tls.cert, key: tls.key });
  let reply: HttpReply;
  try {
    reply = await transport.request(req);
  } catch (e) {
    transport.close();
    throw e;
  }
  return {
    status: reply.status,
    statusText: reply.statusText,
    header: (name) => reply.header(name),
    body: reply.body,
    close() {
      reply.close();
      transport.close();
    },
  };
}
