import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { freePort } from "../services/_util.ts";
import { runCli, runJson, usageErrorLine } from "./_cli.ts";

Deno.test("tcp is satisfied by a listening port", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  try {
    const r = await runJson(["--timeout", "5s", "tcp", `127.0.0.1:${port}`]);
    assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"]);
    const c = r.json.conditions[0]!;
    assertEquals([c.name, c.satisfied, c.attempts, c.detail, c.last_error], [
      `tcp 127.0.0.1:${port}`,
      true,
      1,
      `connected to 127.0.0.1:${port}`,
      "",
    ]);
    const text = await runCli(["--timeout", "5s", "tcp", `127.0.0.1:${port}`]);
    assertEquals(text.stdout, "");
    assertMatch(
      text.stderr,
      new RegExp(`\\[ok\\] tcp 127\\.0\\.0\\.1:${port} attempt 1 \\(\\d+\\.\\ds\\): connected`),
    );
  } finally {
    l.close();
  }
});

Deno.test("tcp retries a refused port until it listens", async () => {
  const port = freePort();
  let l: Deno.Listener | undefined;
  const r = await runJson(["--timeout", "10s", "--interval", "100ms", "tcp", `localhost:${port}`], {
    started: async () => {
      await new Promise((res) => setTimeout(res, 600));
      l = Deno.listen({ hostname: "127.0.0.1", port });
    },
  });
  l?.close();
  assertEquals(r.code, 0);
  const c = r.json.conditions[0]!;
  assert(c.attempts > 1, `attempts ${c.attempts}`);
  assertEquals(c.last_error, "connection refused");
});

Deno.test("tcp times out with the connection error", async () => {
  const port = freePort();
  const r = await runJson([
    "--timeout",
    "700ms",
    "--interval",
    "200ms",
    "tcp",
    `127.0.0.1:${port}`,
  ]);
  assertEquals([r.code, r.json.status], [1, "timeout"]);
  assertEquals(r.json.conditions[0]!.last_error, "connection refused");
  const text = await runCli([
    "--timeout",
    "500ms",
    "--interval",
    "200ms",
    "tcp",
    `127.0.0.1:${port}`,
  ]);
  assertEquals(text.code, 1);
  assertStringIncludes(text.stderr, `[..] tcp 127.0.0.1:${port} attempt 1 (`);
  assertStringIncludes(
    text.stderr,
    `waitcmd: timed out after 500ms; not satisfied: tcp 127.0.0.1:${port}: connection refused`,
  );
});

Deno.test("tcp connects to an IPv6 literal", async () => {
  let l: Deno.Listener;
  try {
    l = Deno.listen({ hostname: "::1", port: 0 });
  } catch {
    console.error("SKIP: no IPv6 loopback on this machine");
    return;
  }
  const port = (l.addr as Deno.NetAddr).port;
  try {
    const r = await runJson(["--timeout", "5s", "tcp", `[::1]:${port}`]);
    assertEquals(r.code, 0);
    assertEquals(r.json.conditions[0]!.name, `tcp [::1]:${port}`);
  } finally {
    l.close();
  }
});

Deno.test("tcp rejects malformed addresses with exit 2", async () => {
  for (
    const [target, msg] of [
      ["localhost", `expected HOST:PORT or [IPv6]:PORT, got "localhost"`],
      ["db:0", `port must be from 1 to 65535, got "0"`],
      ["db:http", `expected HOST:PORT`],
    ]
  ) {
    const line = usageErrorLine(await runCli(["tcp", target!]));
    assertStringIncludes(line, `waitcmd: condition 1 (tcp): ${msg}`);
    assertStringIncludes(line, "(see: waitcmd help tcp)");
  }
});
