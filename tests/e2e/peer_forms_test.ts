/**
 * Forms users paste from the peers' docs, through the CLI against real
 * servers: waitfor's `--header Key=Value` (http and websocket), wait4x's
 * `--expect-header Key=regex` (http). wait4x's
 * MySQL DSN `user:password@tcp(host:port)/db` is run against MariaDB in
 * conditions/mysql/e2e_test.ts.
 */

import { assert, assertEquals } from "../_assert.ts";
import { type RunningServer, startHttpServer } from "../services/http_servers.ts";
import { assertKindUsageErrors, expectJson } from "./_cli.ts";

const FAST = ["--timeout", "8s", "--interval", "100ms"];
const SHORT = ["--timeout", "1200ms", "--interval", "100ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test("http --header Key=Value (waitfor's form) sends the header", opts, async () => {
  const srv: RunningServer = startHttpServer();
  const token = "s3cr3t-token-value";
  try {
    const r = await expectJson([
      ...FAST,
      ...["http", `${srv.url}/echo`, "--header", "X-Probe=1", "--header", "X-Pair=a:b=c"],
      ...["--header", `Authorization=Bearer ${token}`, "--header", "X-Colon: d=e"],
      ...["--jsonpath", '$.headers["x-probe"] == "1"'],
      ...["--jsonpath", '$.headers["x-pair"] == "a:b=c"'],
      ...["--jsonpath", '$.headers["x-colon"] == "d=e"'],
      ...["--jsonpath", `$.headers.authorization == "Bearer ${token}"`],
    ], { code: 0 });
    assertEquals(r.json.conditions[0]!.attempts, 1);
    // The Authorization value is a secret in this form too.
    assert(!r.stdout.includes(token) && !r.stderr.includes(token), r.stdout + r.stderr);
  } finally {
    await srv.stop();
  }
});

Deno.test("http --expect-header Key=regex (wait4x's form) checks the header", opts, async () => {
  const srv: RunningServer = startHttpServer();
  const q = "X-Build=v1.4.2&X-Time=12:30";
  try {
    await expectJson([
      ...FAST,
      ...["http", `${srv.url}/headers?${q}`, "--expect-header", "X-Build=^v1\\."],
      ...["--expect-header", "x-time=\\d+:\\d+"],
    ], {
      code: 0,
      detail: "200 OK; header X-Build matches /^v1\\./; header x-time matches /\\d+:\\d+/",
    });
    await expectJson([
      ...SHORT,
      "http",
      `${srv.url}/headers?${q}`,
      "--expect-header",
      "X-Build=^v2",
    ], {
      code: 1,
      error: 'header X-Build "v1.4.2" does not match /^v2/ (200 OK)',
    });
  } finally {
    await srv.stop();
  }
});

Deno.test("websocket --header Key=Value (waitfor's form) sends the header", opts, async () => {
  // A real WebSocket server that refuses the upgrade without the header.
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    if (req.headers.get("x-probe") !== "1") return new Response("no probe", { status: 401 });
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => socket.send("ready");
    return response;
  });
  const url = `ws://127.0.0.1:${server.addr.port}/`;
  try {
    await expectJson([...FAST, "websocket", url, "--header", "X-Probe=1", "--contains", "ready"], {
      code: 0,
    });
    const r = await expectJson([...SHORT, "websocket", url, "--contains", "ready"], { code: 1 });
    assert(r.json.conditions[0]!.last_error.includes("401"), r.json.conditions[0]!.last_error);
  } finally {
    await server.shutdown();
  }
});

Deno.test("--header that is neither form shows both", async () => {
  await assertKindUsageErrors("http", [
    [
      ["http", "http://127.0.0.1:9/", "--header", "X-Probe"],
      `--header: expected 'Name: value' (or Name=value), got "X-Probe"`,
    ],
    [
      ["http", "http://127.0.0.1:9/", "--header", "=v"],
      `--header: expected 'Name: value' (or Name=value), got "=v"`,
    ],
    [
      ["http", "http://127.0.0.1:9/", "--expect-header", "X-Build"],
      `--expect-header: expected 'NAME: REGEX' (or NAME=REGEX), got "X-Build"`,
    ],
  ]);
});
