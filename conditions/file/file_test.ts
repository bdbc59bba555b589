import { assert, assertEquals } from "../../tests/_assert.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { conditionOf, optionsOf, probeOf } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { stepUsageErrors } from "../../tests/_usage_rows.ts";
import type { FileOptions } from "./mod.ts";
import { fileContains } from "./probe.ts";

Deno.test("file parse() rejects contradictions and empty values", (t) =>
  stepUsageErrors(t, "file"));

Deno.test("file parse() options", async (t) => {
  const rows: [string[], FileOptions][] = [
    [["/x"], { path: "/x", deleted: false, nonempty: false, contains: undefined }],
    [["/x", "--exists"], { path: "/x", deleted: false, nonempty: false, contains: undefined }],
    [["/x", "--deleted"], { path: "/x", deleted: true, nonempty: false, contains: undefined }],
    [["/x", "--deleted=false", "--nonempty"], {
      path: "/x",
      deleted: false,
      nonempty: true,
      contains: undefined,
    }],
    [["rel/cfg.json", "--nonempty", "--contains", '"ready": true'], {
      path: "rel/cfg.json",
      deleted: false,
      nonempty: true,
      contains: '"ready": true',
    }],
  ];
  for (const [flags, want] of rows) {
    await t.step(flags.join(" "), () => {
      assertEquals(optionsOf<FileOptions>(["file", ...flags]), want);
    });
  }
  const c = conditionOf(["file", "/var/run/app.pid", "--deleted"]);
  assertEquals([c.name, c.target], ["file /var/run/app.pid", "/var/run/app.pid"]);
});

Deno.test("file check() reports each state; watch is offered", () =>
  inTempDir("waitcmd-file-")(async (dir) => {
    const signal = new AbortController().signal;
    const check = async (args: string[]) => checkOnce(await probeOf(["file", ...args]), signal, 1);
    const f = `${dir}/cfg`;
    assertEquals(await check([f]), { status: "pending", error: "does not exist" });
    assertEquals(await check([f, "--deleted"]), { status: "satisfied", detail: "does not exist" });
    await Deno.writeTextFile(f, "");
    assertEquals(await check([f, "--deleted"]), { status: "pending", error: "still exists" });
    assertEquals(await check([f, "--nonempty"]), {
      status: "pending",
      error: "exists but is empty",
    });
    await Deno.writeTextFile(f, "state\nready: true\n");
    assertEquals(await check([f, "--nonempty"]), { status: "satisfied", detail: "exists (18 B)" });
    assertEquals(await check([f, "--contains", "ready: true"]), {
      status: "satisfied",
      detail: `contains "ready: true" (18 B)`,
    });
    assertEquals(await check([f, "--contains", "absent"]), {
      status: "pending",
      error: `does not contain "absent" (18 B)`,
    });
    assertEquals(await check([dir]), { status: "satisfied", detail: "exists (directory)" });
    assertEquals(await check([dir, "--contains", "x"]), {
      status: "pending",
      error: "is a directory, not a file",
    });
    assert((await probeOf(["file", f])).watch !== undefined, "file conditions are event-driven");
  }));

Deno.test("fileContains() finds a text across its 1 MiB read chunks", () =>
  inTempDir("waitcmd-file-")(async (dir) => {
    const f = `${dir}/big`;
    for (const at of [0, (1 << 20) - 3, (1 << 20) - 6, 1 << 20, 3 * (1 << 20) - 1]) {
      await Deno.writeTextFile(f, "x".repeat(at) + "NEEDLE" + "y".repeat(100));
      assertEquals(await fileContains(f, "NEEDLE"), true, `at ${at}`);
      assertEquals(await fileContains(f, "NEEDLEZ"), false, `at ${at}`);
    }
    await Deno.writeTextFile(f, "");
    assertEquals(await fileContains(f, "N"), false);
  }));
