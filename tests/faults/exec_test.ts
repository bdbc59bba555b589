/**
 * exec's commands under waitcmd's end (docs/contract.md §9, docs/reliability.md):
 * a command that ignores SIGTERM is killed with SIGKILL after the grace, at
 * `--attempt-timeout`, at the deadline and on every signal, so no process
 * group it started outlives waitcmd; and a command that writes without end
 * (`yes`) keeps waitcmd's memory flat (1 MiB of output is kept).
 */

import { assert, assertEquals } from "../_assert.ts";
import { killGroups, membersOf, peakRss, spawnWaitcmd, until } from "./_proc.ts";
import { cliTest, timing } from "../e2e/_cli.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** A command that ignores SIGTERM (and INT, QUIT, HUP) and records its group in `dir`/groups. */
function stubborn(dir: string): string[] {
  return [
    "exec",
    ...["--", "sh", "-c", `trap '' TERM INT QUIT HUP; echo $$ >> ${dir}/groups; sleep 1000`],
  ];
}

/** The groups the command recorded. */
async function recorded(dir: string): Promise<Set<number>> {
  const text = await Deno.readTextFile(`${dir}/groups`).catch(() => "");
  return new Set(text.split("\n").filter(Boolean).map(Number));
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

async function inDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-exec-" });
  try {
    await body(dir);
  } finally {
    killGroups(await recorded(dir)); // what a failing run left behind
    await Deno.remove(dir, { recursive: true });
  }
}

cliTest(
  "exec: commands ignoring SIGTERM are killed at --attempt-timeout and the deadline",
  () =>
    inDir(async (dir) => {
      const w = spawnWaitcmd([...timing("3s", "100ms", "500ms"), ...stubborn(dir)]);
      const r = await w.ended(20_000);
      assertEquals([r.code, r.hung], [1, false], r.stderr);
      const groups = await recorded(dir);
      assert(groups.size >= 3, `only ${groups.size} attempts started`);
      assertEquals(membersOf(groups), [], "processes left by the command");
    }),
);

for (const sig of ["SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP"] as const) {
  Deno.test({
    name: `exec: ${sig} to waitcmd ends a command that ignores it, with SIGKILL after the grace`,
    ...opts,
    fn: () =>
      inDir(async (dir) => {
        const w = spawnWaitcmd(["--timeout", "60s", ...stubborn(dir)]);
        await until(() => exists(`${dir}/groups`), "the command to start");
        w.child.kill(sig);
        const r = await w.ended(20_000);
        assertEquals([r.hung, r.signal], [false, null], r.stderr);
        assert(r.code > 128, `exit ${r.code}`);
        assertEquals(membersOf(await recorded(dir)), [], "processes left by the command");
      }),
  });
}

cliTest("exec: a command writing without end (yes) keeps waitcmd's memory flat", async () => {
  const w = spawnWaitcmd(["--timeout", "3s", "exec", "--", "yes"]);
  let peak = 0;
  const done = w.ended(20_000);
  let over = false;
  done.then(() => over = true);
  while (!over) {
    peak = Math.max(peak, peakRss(w.child.pid));
    await new Promise((r) => setTimeout(r, 50));
  }
  const r = await done;
  assertEquals([r.code, r.hung], [1, false], r.stderr);
  assert(peak > 0, "no memory figure read");
  assert(peak < 300 << 20, `peak RSS ${(peak / 1048576).toFixed(0)} MB`);
});
