/**
 * http --unix-socket end to end: the CLI against Deno.serve listening on a
 * Unix domain socket, and against a private dockerd's API socket
 * (tests/services/docker.ts): every http flag works over the socket, and the
 * Host header comes from the URL.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { DOCKER_CLI, DOCKERD_BIN, startDocker } from "../../tests/services/docker.ts";
import {
  expectJson,
  runCli,
  runJson,
  runLate,
  timing,
  usageErrorLine,
} from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];

/** Deno.serve on `path`: /health (JSON with the Host and X-Check headers it got), /old -> /new. */
function serveOn(path: string) {
  const server = Deno.serve({ path, onListen() {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/old") {
      return new Response(null, { status: 302, headers: { location: "/new" } });
    }
    if (url.pathname === "/new") return new Response("moved here\n");
    return Response.json({
      status: "ok",
      host: req.headers.get("host"),
      check: req.headers.get("x-check"),
    });
  });
  return { stop: () => server.shutdown() };
}

Deno.test({
  name: "http --unix-socket against Deno.serve on a socket",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-httpunix-" });
    const sock = `${dir}/api.sock`;
    const s = serveOn(sock);
    try {
      await t.step("status, JSON, headers and Host from the URL", async () => {
        const j = await runJson([
          ...FAST,
          ...["http", "http://api.internal:8080/health", "--unix-socket", sock, "--status", "200"],
          ...["--header", "X-Check: yes", "--jsonpath", '.status == "ok"'],
          ...["--jsonpath", '.host == "api.internal:8080"', "--jsonpath", '.check == "yes"'],
        ]);
        assertEquals([j.code, j.stderr, j.json.status], [0, "", "satisfied"]);
        const c = j.json.conditions[0]!;
        assertEquals(c.name, "http http://api.internal:8080/health");
        assertStringIncludes(c.detail, "200 OK");
        const h = await runCli([...FAST, "http", "http://localhost/health", "--unix-socket", sock]);
        assertEquals(h.code, 0);
        assertMatch(
          h.stderr,
          /\[ok\] http http:\/\/localhost\/health attempt 1 \(\d+\.\ds\): 200 OK/,
        );
      });

      await t.step("redirects are followed over the socket", async () => {
        await expectJson([
          ...FAST,
          ...["http", "http://localhost/old", "--unix-socket", sock, "--contains", "moved here"],
        ], { code: 0 });
        await expectJson([
          ...FAST,
          ...["http", "http://localhost/old", "--unix-socket", sock, "--no-follow-redirects"],
          ...["--status", "302"],
        ], { code: 0 });
      });
    } finally {
      await s.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "http --unix-socket waits for the socket to appear (pending, then satisfied)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-httpunix-" });
    const sock = `${dir}/late.sock`;
    let s: ReturnType<typeof serveOn> | undefined;
    try {
      const late = await runLate(
        [...FAST, "http", "http://localhost/health", "--unix-socket", sock],
        () => Promise.resolve(s = serveOn(sock)),
      );
      assertEquals([late.code, late.report.status], [0, "satisfied"]);
      assertEquals(late.attempts[0]!.error, `socket ${sock}: no such file or directory`);
    } finally {
      await s?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("http --unix-socket times out on a socket nobody listens on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-httpunix-" });
  const sock = `${dir}/dead.sock`;
  // A socket bound but never listening: the file exists and connections are refused.
  await new Deno.Command("python3", {
    args: ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", sock],
  }).output();
  try {
    const h = await runCli([
      ...timing("700ms", "200ms"),
      ...["http", "http://localhost/", "--unix-socket", sock],
    ]);
    assertEquals(h.code, 1);
    assertStringIncludes(
      h.stderr,
      `not satisfied: http http://localhost/: socket ${sock}: connection refused`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("http --unix-socket usage errors exit 2", async () => {
  const line = usageErrorLine(await runCli(["http", "http://localhost/", "--unix-socket", ""]));
  assertEquals(
    line,
    "waitcmd: condition 1 (http): --unix-socket: expected a socket path, got an empty string (see: waitcmd help http)",
  );
});

/** Why the suite cannot start a dockerd here, or undefined when it can. */
let dockerMissing: string | undefined;
for (const bin of [DOCKERD_BIN, DOCKER_CLI]) {
  if (!(await Deno.stat(bin).then(() => true, () => false))) {
    dockerMissing ??= `${bin} is not installed`;
  }
}

Deno.test({
  name: "http --unix-socket against dockerd's API socket (/_ping, /version)",
  ignore: ignoreWithout("dockerd", dockerMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const d = await startDocker();
    try {
      await expectJson([
        ...FAST,
        ...["http", "http://localhost/_ping", "--unix-socket", d.socketPath, "--contains", "OK"],
      ], { code: 0, detail: '200 OK; body contains "OK"' });
      const version = await runJson([
        ...FAST,
        ...["http", "http://docker/version", "--unix-socket", d.socketPath],
        ...["--jsonpath", ".ApiVersion", "--jsonpath", '.Os == "linux"'],
      ]);
      assertEquals(version.code, 0, version.stdout);
      assert(version.json.conditions[0]!.detail.startsWith("200 OK"));
    } finally {
      await d.stop();
    }
  },
});
