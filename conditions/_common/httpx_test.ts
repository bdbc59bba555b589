import { assert, assertEquals } from "../../tests/_assert.ts";
import {
  describeRequestError,
  fetchTransport,
  type HttpTransport,
  nodeTransport,
  RequestError,
} from "./httpx.ts";
import { statusLine } from "./http_status.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** A local server answering `host=<Host header>` and, on /slow, a body that never ends. */
function serve(): { port: number; stop(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (new URL(req.url).pathname === "/slow") {
      const body = new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("x")) });
      return new Response(body);
    }
    return new Response(`host=${req.headers.get("host")}`, {
      status: 201,
      headers: { "x-test": "yes" },
    });
  });
  return { port: server.addr.port, stop: () => server.shutdown() };
}

async function text(t: HttpTransport, url: string): Promise<[number, string, string?]> {
  const r = await t.request({ url, signal: AbortSignal.timeout(5000) });
  try {
    return [r.status, await new Response(r.body).text(), r.header("X-Test")];
  } finally {
    r.close();
    r.close();
  }
}

Deno.test("statusLine() adds the usual reason unless the server gave one", () => {
  assertEquals(statusLine(404), "404 Not Found");
  assertEquals(statusLine(410), "410 Gone");
  assertEquals(statusLine(200, "Fine"), "200 Fine");
  assertEquals(statusLine(599), "599");
});

Deno.test("describeRequestError() reads fetch, rustls and node failures alike", () => {
  const fetchErr = (cause: string) => new TypeError("fetch failed", { cause: new Error(cause) });
  const prefix = "error sending request for url (https://h/): client error (Connect): ";
  assertEquals(
    describeRequestError(fetchErr(`${prefix}invalid peer certificate: UnknownIssuer`)),
    "certificate not trusted (unknown issuer)",
  );
  assertEquals(
    describeRequestError(
      fetchErr(
        `${prefix}invalid peer certificate: certificate not valid for name "localhost"; certificate is only valid for DnsName("other.test")`,
      ),
    ),
    "certificate is not valid for localhost",
  );
  assertEquals(
    describeRequestError(
      fetchErr(`${prefix}dns error: failed to lookup address information: Name or service`),
    ),
    "cannot resolve host",
  );
  assertEquals(
    describeRequestError(
      fetchErr(
        "error sending request for url (https://h/): client error (SendRequest): connection error: peer closed connection without sending TLS close_notify: https://docs.rs/rustls/latest/rustls/manual/_03_howto/index.html#unexpected-eof",
      ),
    ),
    "connection closed by the server (TLS)",
  );
  const send = "error sending request for url (https://h/): client error (SendRequest): ";
  assertEquals(
    describeRequestError(fetchErr(`${send}http2 error: stream closed because of a broken pipe`)),
    "connection closed by peer",
  );
  assertEquals(
    describeRequestError(fetchErr(`${send}connection closed before message completed`)),
    "connection closed before a response",
  );
  const code = (c: string) => Object.assign(new Error("x"), { code: c });
  assertEquals(describeRequestError(code("ENOTFOUND")), "cannot resolve host");
  assertEquals(describeRequestError(code("ECONNRESET")), "connection reset by peer");
  assertEquals(
    describeRequestError(code("ERR_TLS_CERT_ALTNAME_INVALID"), "api.test"),
    "certificate is not valid for api.test",
  );
});

Deno.test(
  "nodeTransport() connects to a pinned address, keeping the URL's host",
  opts,
  async () => {
    const srv = serve();
    const t = nodeTransport({ address: "127.0.0.1" });
    try {
      assertEquals(await text(t, `http://pinned.invalid:${srv.port}/`), [
        201,
        `host=pinned.invalid:${srv.port}`,
        "yes",
      ]);
    } finally {
      t.close();
      t.close();
      await srv.stop();
    }
  },
);

Deno.test("fetchTransport() and a kept-alive nodeTransport() answer alike", opts, async () => {
  const srv = serve();
  const url = `http://127.0.0.1:${srv.port}/`;
  const want: [number, string, string] = [201, `host=127.0.0.1:${srv.port}`, "yes"];
  const f = fetchTransport();
  const n = nodeTransport({ keepAlive: true });
  try {
    assertEquals(await text(f, url), want);
    assertEquals(await text(n, url), want);
    assertEquals(await text(n, url), want);
  } finally {
    f.close();
    n.close();
    await srv.stop();
  }
});

Deno.test(
  "a refused request is a RequestError with its code; an abort ends a body",
  opts,
  async () => {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const dead = (l.addr as Deno.NetAddr).port;
    l.close();
    const t = nodeTransport();
    const refused = await t.request({
      url: `http://127.0.0.1:${dead}/`,
      signal: AbortSignal.timeout(5000),
    })
      .then(() => undefined, (e) => e);
    assert(refused instanceof RequestError, String(refused));
    assertEquals([refused.message, refused.code], ["connection refused", "ECONNREFUSED"]);

    const srv = serve();
    try {
      for (const transport of [nodeTransport(), fetchTransport()]) {
        const ctl = new AbortController();
        const r = await transport.request({
          url: `http://127.0.0.1:${srv.port}/slow`,
          signal: ctl.signal,
        });
        const reading = new Response(r.body).text().then(() => "ended", () => "errored");
        setTimeout(() => ctl.abort(new Error("stop")), 50);
        assertEquals(await reading, "errored");
        r.close();
        transport.close();
      }
    } finally {
      await srv.stop();
    }
  },
);

Deno.test(
  "a node reply's body made after the answer: empty after close(), an error after an abort",
  opts,
  async () => {
    const srv = serve();
    const t = nodeTransport();
    try {
      // Judged by its status alone, then released: the body read afterwards ends at once.
      const closed = await t.request({
        url: `http://127.0.0.1:${srv.port}/`,
        signal: AbortSignal.timeout(5000),
      });
      assertEquals(closed.status, 201);
      closed.close();
      assertEquals(await new Response(closed.body).text(), "");

      // The attempt aborted before the body was read: reading it fails instead of waiting.
      const ctl = new AbortController();
      const aborted = await t.request({
        url: `http://127.0.0.1:${srv.port}/slow`,
        signal: ctl.signal,
      });
      ctl.abort(new Error("stop"));
      const outcome = await new Response(aborted.body).text().then(() => "ended", (e) => String(e));
      assertEquals(outcome, "Error: aborted");
      aborted.close();

      // Read right after the answer, as the probes do: the whole body.
      const read = await t.request({
        url: `http://127.0.0.1:${srv.port}/`,
        signal: AbortSignal.timeout(5000),
      });
      assertEquals(await new Response(read.body).text(), `host=127.0.0.1:${srv.port}`);
      read.close();
    } finally {
      t.close();
      await srv.stop();
    }
  },
);
