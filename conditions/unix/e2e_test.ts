/**
 * The unix kind's own end-to-end cases: a socket file nobody listens on, and
 * a missing path. A listening socket, one created late or re-created, and
 * the timeout are the live conformance suite's (tests/conformance/live_test.ts).
 */

import { assert, assertEquals } from "../../tests/_assert.ts";
import { expectJson, runCli, usageErrorLine } from "../../tests/e2e/_cli.ts";

Deno.test("unix keeps retrying a socket nobody listens on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-unix-" });
  const path = `${dir}/dead.sock`;
  const l = Deno.listen({ transport: "unix", path });
  l.close(); // The socket file stays; connections are refused.
  try {
    const r = await expectJson(["--timeout", "500ms", "--interval", "100ms", "unix", path], {
      code: 1,
      status: "timeout",
    });
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
