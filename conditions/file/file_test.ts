import { assert, assertEquals } from "../../tests/_assert.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { conditionOf, optionsOf, probeOf } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import type { FileOptions } from "./mod.ts";
import { fileContains, SteadyTracker } from "./probe.ts";
import { FakeClock } from "../../engine/_fake_clock.ts";
import type { FileStamp } from "../_common/filestamp.ts";

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
    [["out.tar", "--unchanged-for", "1m30s"], {
      path: "out.tar",
      deleted: false,
      nonempty: false,
      contains: undefined,
      unchangedForMs: 90_000,
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

Deno.test("SteadyTracker: unchanged for long enough from the first look; a change restarts it", async () => {
  const clock = new FakeClock();
  const t = new SteadyTracker(2000, clock);
  const stamp = (size: number, mtime = 1): FileStamp => ({ size, mtime, ino: 7, dev: 1 });
  assertEquals(t.due, undefined);
  assertEquals(t.see(stamp(10)), { held: false, text: "unchanged for 0.0s of 2s" });
  assertEquals(t.due, 2000);
  await clock.advance(1500);
  assertEquals(t.see(stamp(10)), { held: false, text: "unchanged for 1.5s of 2s" });
  // The size changes (a write): counting starts again.
  assertEquals(t.see(stamp(15)).text, "unchanged for 0.0s of 2s");
  await clock.advance(1999);
  assertEquals(t.see(stamp(15)).held, false);
  // Only the modification time changes (same size, rewritten): a change too.
  await clock.advance(1);
  assertEquals(t.see(stamp(15, 2)).held, false);
  await clock.advance(2000);
  assertEquals(t.see(stamp(15, 2)), { held: true, text: "unchanged for 2s" });
  t.forget();
  assertEquals(t.due, undefined);
  assertEquals(t.see(stamp(15, 2)).held, false, "a file that went away starts again");
});

Deno.test("SteadyTracker.wakeups() yields when a seen stamp becomes old enough", async () => {
  const clock = new FakeClock();
  const t = new SteadyTracker(1000, clock);
  const stop = new AbortController();
  const it = t.wakeups(stop.signal)[Symbol.asyncIterator]();
  let woke = 0;
  const pump = (async () => {
    while (!(await it.next()).done) woke++;
  })();
  await clock.advance(2500);
  assertEquals(woke, 0, "nothing seen: no wake-up");
  t.see({ size: 1, mtime: 1, ino: 1, dev: 1 });
  await clock.advance(999);
  assertEquals(woke, 0);
  await clock.advance(1);
  assertEquals(woke, 1);
  await clock.advance(5000);
  assertEquals(woke, 1, "once per stamp");
  stop.abort();
  await clock.advance(1000);
  await pump;
});
