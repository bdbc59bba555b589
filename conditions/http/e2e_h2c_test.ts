/**
 * http `--h2c` end to end: the CLI as a subprocess against a real server that
 * speaks only HTTP/2 over cleartext (node:http2, tests/services/http_servers.ts).
 */

import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { type RunningServer, startH2cServer } from "../../tests/services/http_servers.ts";
import { assertKindUsageErrors, expectJson } from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "8s", "--interval", "100ms"];
const SHORT = ["--timeout", "1200ms", "--interval", "100ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test("http --h2c against an HTTP/2-only cleartext server", opts, async (t) => {
  const srv: RunningServer = await startH2cServer();
  const u = srv.url;
  try {
    await t.step("satisfied over h2c; HTTP/1.1 gets no answer from it", async () => {
      await expectJson([
        ...FAST,
        ...["http", `${u}/json`, "--h2c", "--jsonpath", '$.status == "ok"'],
        ...["--expect-header", "x-protocol: ^h2c$"],
      ], {
        code: 0,
        detail: '200 OK; header x-protocol matches /^h2c$/; $.status == "ok" (got "ok")',
      });
      // node:http2's server answers an HTTP/1.1 request with HTTP/2 frames.
      await expectJson([...SHORT, "http", `${u}/json`], {
        code: 1,
        error: /^(not an HTTP answer|connection (closed|reset))/,
      });
    });

    await t.step("pending then satisfied; redirects and a body over h2c", async () => {
      const r = await expectJson([...FAST, "http", `${u}/ready-after/h2/3`, "--h2c"], {
        code: 0,
        detail: "200 OK",
        error: "status 503, expected 2xx",
      });
      assertEquals(r.json.conditions[0]!.attempts, 3);
      await expectJson([...FAST, "http", `${u}/redirect/2`, "--h2c", "--contains", "landed"], {
        code: 0,
        detail: '200 OK; body contains "landed"',
      });
      await expectJson([
        ...FAST,
        ...["http", `${u}/echo`, "--h2c", "--body", "ping", "--header", "X-Probe: 1"],
        ...["--jsonpath", '$.method == "POST"', "--jsonpath", '$.body == "ping"'],
        ...["--jsonpath", '$.headers["x-probe"] == "1"'],
      ], { code: 0 });
    });

    await t.step("timeout: a status that never comes, a port that refuses", async () => {
      await expectJson([...SHORT, "http", `${u}/status/503`, "--h2c"], {
        code: 1,
        error: "status 503, expected 2xx",
      });
      const closed = await expectJson([...SHORT, "http", "http://127.0.0.1:9/", "--h2c"], {
        code: 1,
      });
      assertStringIncludes(closed.json.conditions[0]!.last_error, "connection refused");
    });
  } finally {
    await srv.stop();
  }
});

Deno.test("http --h2c against an HTTP/1.1-only server names the likely cause", opts, async () => {
  // node:http speaks HTTP/1.1 only (Deno.serve would take h2c too).
  const http = await import("node:http");
  const server = http.createServer((_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  try {
    await expectJson([...SHORT, "http", `http://127.0.0.1:${port}/`, "--h2c"], {
      code: 1,
      error:
        /^no HTTP\/2 answer over cleartext \(h2c; does the server speak only HTTP\/1\.1\?\): (protocol error|connection (closed|reset) by peer)$/,
    });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

Deno.test("http --h2c: usage errors before any request", async () => {
  await assertKindUsageErrors("http", [
    [
      ["http", "https://127.0.0.1:9/", "--h2c"],
      "--h2c: needs an http:// URL: h2c is HTTP/2 over cleartext",
    ],
    [
      ["http", "http://localhost/", "--h2c", "--unix-socket", "/tmp/x.sock"],
      "--h2c: cannot be combined with --unix-socket",
    ],
  ]);
});
