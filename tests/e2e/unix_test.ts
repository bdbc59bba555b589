import { assert, assertEquals } from "../_assert.ts";
import { runCli, runJson, usageErrorLine } from "./_cli.ts";

Deno.test("unix is satisfied by a listening socket, created late", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-unix-" });
  const path = `${dir}/app.sock`;
  let l: Deno.Listener | undefined;
  try {
    const r = await runJson(["--timeout", "10s", "--interval", "100ms", "unix", path], {
      started: async () => {
        await new Promise((res) => setTimeout(res, 500));
        l = Deno.listen({ transport: "unix", path });
      },
    });
    assertEquals(r.code, 0);
    const c = r.json.conditions[0]!;
    assertEquals(c.name, `unix ${path}`);
    assert(c.attempts > 1);
    assertEquals(c.last_error, "no such file or directory");
  } finally {
    l?.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("unix keeps retrying a socket nobody listens on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-unix-" });
  const path = `${dir}/dead.sock`;
  const l = Deno.listen({ transport: "unix", path });
  l.close(); // The socket file stays; connections are refused.
  try {
    const r = await runJson(["--timeout", "500ms", "--interval", "100ms", "unix", path]);
    assertEquals([r.code, r.json.status], [1, "timeout"]);
    assert(
      /refused|no such file/.test(r.json.conditions[0]!.last_error),
      r.json.conditions[0]!.last_error,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("unix without a path is a usage error", async () => {
  assertEquals(
    usageErrorLine(await runCli(["unix"])),
    "waitcmd: condition 1 (unix): missing target PATH (see: waitcmd help unix)",
  );
});
