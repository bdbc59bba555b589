/**
 * Real HTTP(S) servers for the http kind's tests, run in the test process on
 * free loopback ports (the CLI under test reaches them as a separate
 * process): a plain HTTP server with test routes, one listening only on
 * [::1] (for `localhost` over IPv6), an HTTPS server with a CA made for the
 * run, one that requires a client certificate, a forward proxy, and the
 * routes over HTTP/2 over cleartext only (h2c).
 *
 * Routes of the plain, IPv6 and HTTPS servers:
 *
 * | route                         | answer                                                    |
 * | ----------------------------- | --------------------------------------------------------- |
 * | /ok                           | 200 "ready"                                               |
 * | /status/CODE                  | that status                                               |
 * | /json                         | 200, a JSON document ({@link JSON_DOC})                   |
 * | /text?body=TEXT               | 200 with that body                                        |
 * | /ready-after/KEY/N            | 503 {"status":"starting"} for the first N-1 requests of   |
 * |                               | KEY, then 200 {"status":"ok","requests":n}                |
 * | /slow/MS                      | 200 after MS milliseconds                                 |
 * | /redirect/N                   | 302 to /redirect/N-1; /redirect/0 is 200 "landed"         |
 * | /redirect-to?url=U&code=C     | C (default 302) to U                                      |
 * | /echo                         | 200 JSON {method, url, headers, body} of the request      |
 * | /large                        | 200, 11 MiB of "x" followed by "END"                      |
 * | /not-json                     | 200 "<html>not json</html>"                               |
 * | /headers?NAME=VALUE...        | 200 "headers" with each query pair as a response header   |
 * | /header-after/KEY/N?h=NAME    | 200 with header NAME: starting for the first N-1 requests |
 * |                               | of KEY, then NAME: ready                                  |
 * | /typed?type=CT&body=TEXT      | 200 with that body and Content-Type (none when empty)     |
 * | /page-after/KEY/N             | 200, a real-world HTML page ({@link htmlPage}) with one   |
 * |                               | item for the first N-1 requests of KEY, then three        |
 * | /items/N                      | 200, that page with N items                               |
 */

import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Pki } from "./tls.ts";

/** The document /json serves. */
export const JSON_DOC = {
  status: "ok",
  replicas: 3,
  version: "1.2.3",
  ready: true,
  items: [],
  conditions: [
    { type: "Available", status: "True" },
    { type: "Progressing", status: "False" },
  ],
};

/**
 * An HTML page as servers write them: a doctype, unclosed `<li>` and `<p>`,
 * `<br>`, attributes without quotes, an entity, a table without `<tbody>`,
 * a script holding `<` and `>`; `items` list items with class `item`.
 */
export function htmlPage(items: number): string {
  const lis = Array.from(
    { length: items },
    (_, i) => `<li class=item data-n=${i + 1}>item ${i + 1}`,
  )
    .join("\n");
  return `<!DOCTYPE html>
<html lang=en>
<head><meta charset=utf-8><title>Status &amp; health</title>
<script>if (1 < 2 && 3 > 2) { document.title = "</p>"; }</script>
</head>
<body>
<p>Services<br>below
<ul id=services>
${lis}
</ul>
<div id=state data-ready=${items > 2 ? "true" : "false"}>${items > 2 ? "Ready" : "Starting"}</div>
<table><tr><td>db<td>up</table>
</body>
</html>
`;
}

/** One running server. */
export interface RunningServer {
  /** Base URL without a trailing slash, e.g. "http://127.0.0.1:41234". */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** The forward proxy: it answers every request itself and records what it was asked. */
export interface ProxyServer extends RunningServer {
  /** Absolute URLs requested through the proxy. */
  readonly requests: string[];
}

/** A plain-HTTP/HTTPS router shared by the servers. */
export function makeHandler(): (req: Request) => Promise<Response> {
  const counts = new Map<string, number>();
  return async (req) => {
    const url = new URL(req.url);
    const parts = url.pathname.split("/").filter(Boolean);
    switch (parts[0]) {
      case "ok":
        return new Response("ready");
      case "status": {
        const status = Number(parts[1] ?? 500);
        const empty = status === 204 || status === 304 || status < 200;
        return new Response(empty ? null : `status ${status}`, { status });
      }
      case "json":
        return Response.json(JSON_DOC);
      case "text":
        return new Response(url.searchParams.get("body") ?? "");
      case "ready-after": {
        const key = parts[1] ?? "";
        const n = (counts.get(key) ?? 0) + 1;
        counts.set(key, n);
        return n < Number(parts[2] ?? 1)
          ? Response.json({ status: "starting", requests: n }, { status: 503 })
          : Response.json({ status: "ok", requests: n });
      }
      case "slow":
        await new Promise((r) => setTimeout(r, Number(parts[1] ?? 1000)));
        return new Response("slow but fine");
      case "redirect": {
        const n = Number(parts[1] ?? 0);
        if (n <= 0) return new Response("landed");
        return new Response(null, { status: 302, headers: { location: `/redirect/${n - 1}` } });
      }
      case "redirect-to":
        return new Response(null, {
          status: Number(url.searchParams.get("code") ?? 302),
          headers: { location: url.searchParams.get("url") ?? "/" },
        });
      case "echo":
        return Response.json({
          method: req.method,
          url: req.url,
          headers: Object.fromEntries(req.headers),
          body: await req.text(),
        });
      case "large": {
        const chunk = new Uint8Array(1 << 20).fill(120);
        let sent = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(ctl) {
            if (sent < 11) {
              sent++;
              ctl.enqueue(chunk);
            } else {
              ctl.enqueue(new TextEncoder().encode("END"));
              ctl.close();
            }
          },
        });
        return new Response(stream);
      }
      case "headers": {
        const headers = new Headers();
        for (const [k, v] of url.searchParams) headers.append(k, v);
        return new Response("headers", { headers });
      }
      case "header-after": {
        const key = `header-after/${parts[1] ?? ""}`;
        const n = (counts.get(key) ?? 0) + 1;
        counts.set(key, n);
        const state = n < Number(parts[2] ?? 1) ? "starting" : "ready";
        return new Response(state, {
          headers: { [url.searchParams.get("h") ?? "x-state"]: state },
        });
      }
      case "typed": {
        const type = url.searchParams.get("type") ?? "";
        const body = new TextEncoder().encode(url.searchParams.get("body") ?? "");
        // Bytes, not a string: a string body would get text/plain from Deno.
        return new Response(body, { headers: type === "" ? {} : { "content-type": type } });
      }
      case "items":
        return new Response(htmlPage(Number(parts[1] ?? 1)), {
          headers: { "content-type": "text/html" },
        });
      case "page-after": {
        const key = `page-after/${parts[1] ?? ""}`;
        const n = (counts.get(key) ?? 0) + 1;
        counts.set(key, n);
        const items = n < Number(parts[2] ?? 1) ? 1 : 3;
        return new Response(htmlPage(items), { headers: { "content-type": "text/html" } });
      }
      case "not-json":
        return new Response("<html>not json</html>", { headers: { "content-type": "text/html" } });
      default:
        return new Response("not found", { status: 404 });
    }
  };
}

function serve(
  opts: { hostname: string; cert?: string; key?: string },
  handler: (req: Request) => Promise<Response> | Response,
): RunningServer {
  const server = Deno.serve({ port: 0, onListen() {}, ...opts }, handler);
  const host = opts.hostname.includes(":") ? `[${opts.hostname}]` : opts.hostname;
  const scheme = opts.cert ? "https" : "http";
  return {
    url: `${scheme}://${host}:${server.addr.port}`,
    port: server.addr.port,
    async stop() {
      await server.shutdown();
    },
  };
}

/** The plain HTTP test server on 127.0.0.1. */
export function startHttpServer(): RunningServer {
  return serve({ hostname: "127.0.0.1" }, makeHandler());
}

/** The same routes on [::1] only: `http://localhost:PORT` reaches it only over IPv6. */
export function startHttpServerV6(): RunningServer {
  return serve({ hostname: "::1" }, makeHandler());
}

/** The routes over HTTPS on 127.0.0.1 with `cert`/`key` (PEM). */
export function startHttpsServer(cert: string, key: string): RunningServer {
  return serve({ hostname: "127.0.0.1", cert, key }, makeHandler());
}

/**
 * An HTTPS server on 127.0.0.1 that requires a client certificate signed by
 * the PKI's CA (node:https with requestCert); it answers "hello <client CN>".
 */
export async function startMutualTlsServer(pki: Pki): Promise<RunningServer> {
  const server = https.createServer(
    {
      cert: pki.server.certPem,
      key: pki.server.keyPem,
      ca: pki.ca.certPem,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket as unknown as {
        getPeerCertificate(): { subject?: { CN?: string } };
      };
      res.end(`hello ${socket.getPeerCertificate().subject?.CN ?? "nobody"}`);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * A forward HTTP proxy on 127.0.0.1 that never connects anywhere: it answers
 * every absolute-form request with 200 `proxied <url>` and records the URL.
 */
export function startProxy(): ProxyServer {
  const requests: string[] = [];
  const s = serve({ hostname: "127.0.0.1" }, (req) => {
    requests.push(req.url);
    return new Response(`proxied ${req.url}`);
  });
  return { ...s, requests };
}

/**
 * The routes over HTTP/2 over cleartext only (node:http2's `createServer`,
 * no HTTP/1.1 fallback): an HTTP/1.1 request gets no answer. Each answer
 * carries `x-protocol: h2c`.
 */
export async function startH2cServer(): Promise<RunningServer> {
  const http2 = await import("node:http2");
  const handler = makeHandler();
  const server = http2.createServer();
  const sessions = new Set<import("node:http2").ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", async (h2stream, headers) => {
    const stream = h2stream as import("node:http2").ServerHttp2Stream;
    try {
      const chunks: Uint8Array[] = [];
      for await (const c of stream) chunks.push(new Uint8Array(c as Uint8Array));
      const method = String(headers[":method"] ?? "GET");
      const h = new Headers();
      for (const [k, v] of Object.entries(headers)) {
        if (!k.startsWith(":") && v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
      }
      const body = method === "GET" || method === "HEAD"
        ? undefined
        : new Blob(chunks as BlobPart[]);
      const res = await handler(
        new Request(`http://${headers[":authority"]}${headers[":path"]}`, {
          method,
          headers: h,
          body,
        }),
      );
      const out: Record<string, string | number> = { ":status": res.status };
      res.headers.forEach((v, k) => (out[k] = v));
      out["x-protocol"] = "h2c";
      stream.respond(out);
      stream.end(new Uint8Array(await res.arrayBuffer()));
    } catch {
      stream.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}
