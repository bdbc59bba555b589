/**
 * Event-driven waiting (docs/contract.md §10): file, log and glob conditions react to
 * file-system events instead of waiting for the next `--interval`.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { inTempDir, sh } from "../services/_util.ts";
import { ignoreWithout } from "../_kit.ts";
import { startCli, timing } from "./_cli.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const withDir = inTempDir("waitcmd-events-");

/** The loose bound of the issue; the real latency is measured by scripts/bench/log_bench.ts. */
const BOUND_MS = 2000;

/**
 * Starts waitcmd with a 30 s interval, waits for its first attempt, makes the
 * change and returns how long after the change the process exited.
 */
async function reaction(
  args: string[],
  change: () => Promise<void>,
): Promise<{ code: number; ms: number; stderr: string }> {
  const cli = startCli(["--timeout", "25s", "--interval", "30s", ...args]);
  await cli.waitFor("stderr", /^\[\.\.\] .* attempt 1 /);
  const t0 = performance.now();
  await change();
  const r = await cli.done();
  return { code: r.code, ms: r.exitedAt - t0, stderr: r.stderr };
}

Deno.test("file, log and glob with --interval 30s are satisfied within 2 s of the change", async (t) => {
  await withDir(async (dir) => {
    const cases: [string, string[], () => Promise<void>][] = [
      ["file", ["file", `${dir}/ready`], () => Deno.writeTextFile(`${dir}/ready`, "")],
      [
        "file --contains",
        ["file", `${dir}/cfg`, "--contains", "ready: true"],
        () => Deno.writeTextFile(`${dir}/cfg`, "ready: true\n"),
      ],
      [
        "log",
        ["log", `${dir}/app.log`, "--contains", "started"],
        () => Deno.writeTextFile(`${dir}/app.log`, "server started\n", { append: true }),
      ],
      [
        "glob",
        ["glob", `${dir}/out/*.csv`, "--min-count", "2"],
        async () => {
          await Deno.writeTextFile(`${dir}/out/a.csv`, "");
          await Deno.writeTextFile(`${dir}/out/b.csv`, "");
        },
      ],
      [
        "glob --absent",
        ["glob", `${dir}/locks/*.lock`, "--absent"],
        () => Deno.remove(`${dir}/locks/x.lock`),
      ],
      [
        "glob **",
        ["glob", `${dir}/deep/**/*.done`],
        async () => {
          await Deno.mkdir(`${dir}/deep/a/b/c`, { recursive: true });
          await Deno.writeTextFile(`${dir}/deep/a/b/c/job.done`, "");
        },
      ],
    ];
    await Deno.writeTextFile(`${dir}/cfg`, "ready: false\n");
    await Deno.writeTextFile(`${dir}/app.log`, "");
    await Deno.mkdir(`${dir}/out`);
    await Deno.mkdir(`${dir}/locks`);
    await Deno.writeTextFile(`${dir}/locks/x.lock`, "");
    for (const [name, args, change] of cases) {
      await t.step(name, async () => {
        const r = await reaction(args, change);
        assertEquals(r.code, 0, r.stderr);
        assert(r.ms < BOUND_MS, `${name}: exited ${Math.round(r.ms)} ms after the change`);
      });
    }
  });
});

Deno.test("a watched directory deleted and created again is still watched", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(`${dir}/run`);
    // The event stream carries every attempt (human output folds repeated pending lines).
    const cli = startCli([
      ...["--output", "jsonl"],
      ...timing("25s", "30s"),
      ...["file", `${dir}/run/app.pid`],
    ]);
    await cli.waitFor("stdout", /"attempt":1,/);
    await Deno.remove(`${dir}/run`);
    await cli.waitFor("stdout", /"attempt":2,/); // the watch moved up and asked for an attempt
    await sleep(300);
    await Deno.mkdir(`${dir}/run`);
    await sleep(300); // the watch moves back down
    const t0 = performance.now();
    await Deno.writeTextFile(`${dir}/run/app.pid`, "123");
    const r = await cli.done();
    assertEquals(r.code, 0, r.stderr);
    assert(r.exitedAt - t0 < BOUND_MS, `exited ${Math.round(r.exitedAt - t0)} ms after the change`);
  });
});

/** `unshare` into a user namespace whose inotify limit is 0, or undefined when that is impossible. */
/** Runs a command with no inotify watches allowed (a user namespace lowers the limit). */
const NO_WATCHES = [
  ...["unshare", "--user", "--map-root-user", "sh"],
  ...["-c", 'echo 0 > /proc/sys/user/max_inotify_watches && exec "$@"', "sh"],
];

/** Why the wrapper cannot run here, or undefined. */
async function noWatchesMissing(): Promise<string | undefined> {
  try {
    await sh(NO_WATCHES[0]!, [...NO_WATCHES.slice(1), "true"]);
    return undefined;
  } catch (e) {
    return `cannot lower the inotify limit in a user namespace: ${e}`;
  }
}
const noWatches = await noWatchesMissing();

Deno.test({
  name: "without inotify watches, waitcmd says so once and polls",
  ignore: ignoreWithout("unshare", noWatches),
  fn: async () => {
    const wrapper = NO_WATCHES;
    await withDir(async (dir) => {
      const cli = startCli(
        ["--timeout", "15s", "--interval", "200ms", "file", `${dir}/ready`],
        { wrapper },
      );
      await cli.waitFor("stderr", /attempt 2 /);
      await Deno.writeTextFile(`${dir}/ready`, "");
      const r = await cli.done();
      assertEquals(r.code, 0, r.stderr);
      const notice =
        `waitcmd: file ${dir}/ready: cannot watch ${dir} (too many watches); polling every interval`;
      assertStringIncludes(r.stderr, notice + "\n");
      assertEquals(r.stderr.split(notice).length, 2, "the notice is said once");

      const json = startCli(
        ["--output", "json", ...timing("300ms", "100ms"), "log", `${dir}/a.log`, "--contains", "x"],
        { wrapper },
      );
      const j = await json.done();
      assertEquals(j.code, 1);
      assertEquals(j.stderr, "", "JSON mode keeps stderr empty");
      assertEquals(j.json?.conditions[0]?.last_error, "does not exist");
    });
  },
});
