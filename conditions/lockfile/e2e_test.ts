import { assert, assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { inTempDir, sh } from "../../tests/services/_util.ts";
import {
  assertKindUsageErrors,
  expectJson,
  runCli,
  runJson,
  runLate,
} from "../../tests/e2e/_cli.ts";
import { usageRows } from "../../tests/_suite.ts";

/** The kind's usage errors, from its folder (conditions/lockfile/_suite.ts). */
const USAGE = await usageRows("lockfile");

const FAST = ["--interval", "100ms"];

Deno.test("lockfile waits for a lock held by flock to be released and removed", () =>
  inTempDir("waitcmd-lockfile-")(async (dir) => {
    const lock = `${dir}/build.lock`;
    const free = await runJson(["--timeout", "5s", "lockfile", lock]);
    assertEquals([free.code, free.json.conditions[0]!.detail], [0, "no lock file"]);

    // A real holder: flock creates the file and holds it while its command runs, which
    // removes the lock file when done (as build tools do).
    const holder = new Deno.Command("flock", {
      args: [lock, "sh", "-c", `read _ ; rm -f ${lock}`],
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    for (let i = 0; i < 100; i++) {
      if (await Deno.stat(lock).then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const r = await runLate(["--timeout", "20s", ...FAST, "lockfile", lock], async () => {
      const w = holder.stdin.getWriter();
      await w.write(new TextEncoder().encode("done\n"));
      await w.close();
      await holder.status;
    });
    assertEquals(r.code, 0);
    const c = r.report.conditions[0]!;
    assertEquals(c.name, `lockfile ${lock}`);
    assert(/^lock file exists \(modified (under 1s|\d+s) ago\)$/.test(c.last_error), c.last_error);
    assertEquals(c.detail, "no lock file");
  }));

Deno.test("lockfile --present waits for a lock to appear; --older-than for it to go stale", () =>
  inTempDir("waitcmd-lockfile-")(async (dir) => {
    const lock = `${dir}/run.lock`;
    const r = await runLate(
      ["--timeout", "20s", ...FAST, "lockfile", lock, "--present"],
      () => sh("flock", [lock, "true"]),
    );
    assertEquals([r.code, r.report.conditions[0]!.last_error], [0, "does not exist"]);

    // Made just now, it turns stale after 1 s.
    await Deno.remove(lock);
    await sh("touch", [lock]);
    const stale = await expectJson([
      ...["--timeout", "20s"],
      ...FAST,
      ...["lockfile", lock, "--present", "--older-than", "1s"],
    ], { code: 0, error: "lock file modified under 1s ago, not yet 1s" });
    assertStringIncludes(stale.json.conditions[0]!.detail, ", stale)");

    await sh("touch", ["-d", "2 hours ago", lock]);
    const old = await runJson([
      ...["--timeout", "5s", "lockfile", lock, "--present", "--older-than", "1h"],
    ]);
    assertEquals(old.json.conditions[0]!.detail, "lock file exists (modified 2h ago, stale)");
  }));

Deno.test("lockfile times out while the lock stays held", () =>
  inTempDir("waitcmd-lockfile-")(async (dir) => {
    await sh("touch", ["-d", "90 seconds ago", `${dir}/held.lock`]);
    const r = await runCli(["--timeout", "400ms", ...FAST, "lockfile", `${dir}/held.lock`]);
    assertEquals([r.code, r.stdout], [1, ""]);
    assertStringIncludes(r.stderr, `[..] lockfile ${dir}/held.lock attempt 1 (`);
    assertStringIncludes(
      r.stderr,
      `not satisfied: lockfile ${dir}/held.lock: lock file exists (modified 1m3`,
    );
    const missing = await runJson([
      ...["--timeout", "300ms"],
      ...FAST,
      ...["lockfile", `${dir}/none`, "--present"],
    ]);
    assertEquals([missing.code, missing.json.conditions[0]!.last_error], [1, "does not exist"]);
  }));

Deno.test("lockfile usage errors", () => assertKindUsageErrors("lockfile", USAGE));
