/**
 * Signals before and during the wait (docs/contract.md §3, docs/reliability.md):
 * every phase before the run (reading a recipe, validating a key, --explain)
 * answers SIGINT, SIGTERM and SIGQUIT at once, a FIFO nobody writes
 * included, and SIGQUIT during the run is a cancellation like SIGTERM
 * (summary, report, exit 131, no process left). Each test signals once waitcmd
 * is blocked where the test wants it (opening the FIFO, reading stdin), read
 * from /proc.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { cliTest, timing, WAITCMD } from "../e2e/_cli.ts";
import { blockedIn, type Ended, groupsRunning, killGroups, spawnWaitcmd, until } from "./_proc.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** A temporary directory with a FIFO in it (`fifo`), removed by `close()`. */
async function fifoDir(): Promise<{ dir: string; fifo: string; close(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-sig-" });
  const fifo = `${dir}/fifo`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert(made.success, "mkfifo failed");
  return { dir, fifo, close: () => Deno.remove(dir, { recursive: true }) };
}

const BEFORE = (sig: string) => `waitcmd: cancelled by ${sig} before the wait started\n`;

cliTest(
  "signals: -f FIFO that nobody writes: refused before it is opened (exit 2), never waited on",
  async () => {
    const f = await fifoDir();
    try {
      const w = spawnWaitcmd(["--timeout", "60s", "-f", f.fifo]);
      const r = await w.ended();
      assert(!r.hung, `waitcmd waited on the FIFO: ${r.stderr}`);
      assertEquals([r.code, r.signal, r.stdout], [2, null, ""]);
      assertStringIncludes(r.stderr, "not a regular file (a named pipe)");
    } finally {
      await f.close();
    }
  },
);

cliTest(
  "signals: --explain -f - while stdin stays silent: SIGINT exits 130, nothing explained",
  async () => {
    const w = spawnWaitcmd(["--explain", "-f", "-"], { stdin: "piped" });
    await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
    w.child.kill("SIGINT");
    const r = await w.ended();
    await w.child.stdin.close().catch(() => {});
    assert(!r.hung, `waitcmd ignored SIGINT while reading the recipe: ${r.stderr}`);
    assertEquals([r.code, r.stdout, r.stderr], [130, "", BEFORE("SIGINT")]);
  },
);

// A named pipe is refused before it is opened (docs/contract.md §9); a pipe already open that
// stays silent (standard input, as /dev/stdin) is where a read can still wait.
for (
  const [flag, sig, code] of [["key", "SIGTERM", 143], ["trusted-root", "SIGINT", 130]] as const
) {
  Deno.test({
    name:
      `signals: cosign --${flag} /dev/stdin that stays silent (validated before the run): ${sig} exits ${code}`,
    ...opts,
    fn: async () => {
      const f = await fifoDir();
      try {
        await Deno.writeTextFile(`${f.dir}/blob`, "x");
        const words = flag === "key"
          ? ["--signature", `${f.dir}/blob`, "--key", "/dev/stdin"]
          : ["--bundle", `${f.dir}/blob`, "--trusted-root", "/dev/stdin"];
        const w = spawnWaitcmd(
          ["--timeout", "60s", "cosign", "--blob", `${f.dir}/blob`, ...words],
          {
            stdin: "piped",
          },
        );
        await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
        w.child.kill(sig);
        const r = await w.ended();
        await w.child.stdin.close().catch(() => {});
        assert(!r.hung, `waitcmd ignored ${sig} while reading --${flag}: ${r.stderr}`);
        assertEquals([r.code, r.stdout, r.stderr], [code, "", BEFORE(sig)]);
      } finally {
        await f.close();
      }
    },
  });
}

cliTest(
  "signals: --explain with a silent --key /dev/stdin: SIGQUIT exits 131, nothing explained",
  async () => {
    const f = await fifoDir();
    try {
      await Deno.writeTextFile(`${f.dir}/blob`, "x");
      const w = spawnWaitcmd([
        ...["--explain", "cosign", "--blob", `${f.dir}/blob`, "--signature", `${f.dir}/blob`],
        ...["--key", "/dev/stdin"],
      ], { stdin: "piped" });
      await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
      w.child.kill("SIGQUIT");
      const r = await w.ended();
      await w.child.stdin.close().catch(() => {});
      assert(!r.hung, `waitcmd ignored SIGQUIT: ${r.stderr}`);
      assertEquals([r.code, r.signal, r.stdout, r.stderr], [131, null, "", BEFORE("SIGQUIT")]);
    } finally {
      await f.close();
    }
  },
);

for (const input of ["-f /dev/zero", "-f - </dev/zero"]) {
  Deno.test({
    name: `signals: ${input} is a usage error at once (the 4 MiB cap), not gigabytes`,
    ...opts,
    fn: async () => {
      // Through a shell, for the redirection.
      const child = new Deno.Command("sh", {
        args: ["-c", `exec "$0" ${input} --timeout 5s`, WAITCMD],
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const out = await child.output();
      clearTimeout(guard);
      const stderr = new TextDecoder().decode(out.stderr);
      assertEquals(out.signal, null, "killed: the read was not bounded");
      assertEquals(out.code, 2);
      const path = input.endsWith("zero") && input.includes("<") ? "-" : "/dev/zero";
      assertEquals(
        stderr,
        `waitcmd: --config: cannot read ${path}: larger than 4 MiB (see: waitcmd --help)\n`,
      );
    },
  });
}

cliTest(
  "signals: SIGQUIT during the run: summary, report file, exit 131, no exec group left",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-quit-" });
    const marker = `waitcmd-quit-${crypto.randomUUID()}`;
    try {
      const w = spawnWaitcmd([
        ...timing("60s", "100ms"),
        ...["--report", `${dir}/report.json`, "tcp", "127.0.0.1:1"],
        ...["--", "exec"],
        ...["--", "sh", "-c", `echo started > ${dir}/started; sleep 1000; : ${marker}`],
      ]);
      await until(() => {
        try {
          return Deno.statSync(`${dir}/started`).isFile;
        } catch {
          return false;
        }
      }, "the exec command to start");
      w.child.kill("SIGQUIT");
      const r = await w.ended();
      assert(!r.hung, "waitcmd ignored SIGQUIT");
      assertEquals([r.code, r.signal], [131, null], r.stderr);
      assertStringIncludes(r.stderr, "waitcmd: cancelled by SIGQUIT after ");
      const report = JSON.parse(await Deno.readTextFile(`${dir}/report.json`));
      assertEquals(report.status, "cancelled");
      assertEquals([...groupsRunning(marker)], []);
    } finally {
      killGroups(groupsRunning(marker));
      await Deno.remove(dir, { recursive: true });
    }
  },
);

for (const end of ["deadline", "SIGTERM"] as const) {
  Deno.test({
    name:
      `signals: an http --ca-file /dev/stdin read at every attempt, silent: the ${end} still wins`,
    ...opts,
    fn: async () => {
      const f = await fifoDir();
      try {
        const w = spawnWaitcmd([
          "--timeout",
          end === "deadline" ? "2s" : "60s",
          "--interval",
          "100ms",
          "--output",
          "json",
          "http",
          "https://127.0.0.1:1/",
          "--ca-file",
          "/dev/stdin",
        ], { stdin: "piped" });
        await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
        if (end === "SIGTERM") w.child.kill("SIGTERM");
        const r = await w.ended();
        await w.child.stdin.close().catch(() => {});
        assert(!r.hung, `waitcmd did not end at the ${end}: ${r.stderr}`);
        const report = JSON.parse(r.stdout);
        assertEquals(
          [r.code, report.status],
          end === "deadline" ? [1, "timeout"] : [143, "cancelled"],
        );
      } finally {
        await f.close();
      }
    },
  });
}

/** What the shared machine may add to a measured answer, beyond the promised 100 ms. */
const CI_MARGIN_MS = 400;

/** A recipe of `n` conditions in a new temporary directory. */
async function bigRecipe(n: number, entry: (i: number) => string): Promise<{
  dir: string;
  recipe: string;
}> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-big-" });
  const recipe = `${dir}/big.yaml`;
  const lines = ["conditions:"];
  for (let i = 0; i < n; i++) lines.push(`  - ${entry(i)}`);
  await Deno.writeTextFile(recipe, lines.join("\n") + "\n");
  return { dir, recipe };
}

/**
 * Spawns `args`, sends SIGTERM after `ms`: what it ended with and how long after the signal;
 * undefined when it ended before (a machine that got faster meanwhile).
 */
async function termAfter(
  args: string[],
  ms: number,
): Promise<(Ended & { late: number }) | undefined> {
  const w = spawnWaitcmd(args);
  await new Promise((r) => setTimeout(r, ms));
  const sent = performance.now();
  try {
    w.child.kill("SIGTERM");
  } catch {
    await w.ended();
    return undefined;
  }
  const r = await w.ended(120_000);
  return { ...r, late: Math.round(performance.now() - sent) };
}

cliTest(
  "signals: --explain of a recipe of 30,000 conditions: SIGTERM while it is read, parsed or explained exits 143 within 100 ms, nothing explained",
  async () => {
    const { dir, recipe } = await bigRecipe(
      30_000,
      (i) => `{kind: file, target: /nonexistent/${i}}`,
    );
    try {
      const args = ["--explain", "-f", recipe];
      // How long the whole explanation takes on this machine, now: the signals fall inside it.
      const started = performance.now();
      const full = await spawnWaitcmd(args).ended(120_000);
      const whole = performance.now() - started;
      assertEquals(full.code, 0, full.stderr);
      const late: number[] = [];
      for (const at of [0.2, 0.45, 0.7]) {
        const r = await termAfter(args, whole * at);
        if (r === undefined) continue;
        late.push(r.late);
        assertEquals([r.code, r.stdout, r.stderr], [143, "", BEFORE("SIGTERM")], `at ${at}`);
      }
      console.log(
        `explain of 30,000 conditions: ${Math.round(whole)} ms; SIGTERM answered ${
          late.join(", ")
        } ms late`,
      );
      // The YAML is composed in a worker, and the rest takes turns of the event loop every
      // 10 ms (docs/contract.md §3). Before, composing the document (one call of the package,
      // seconds on a busy machine), the words' parse and the explanation held the signal.
      assert(late.length > 0, "every run ended before its signal");
      assert(
        Math.max(...late) <= 100 + CI_MARGIN_MS,
        `answered ${late.join(", ")} ms late (whole: ${Math.round(whole)} ms)`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

cliTest(
  "signals: a run of a recipe of 30,000 tcp conditions: SIGTERM while it is read and parsed, answered within 100 ms, and the wait never starts",
  async () => {
    const { dir, recipe } = await bigRecipe(30_000, () => `{kind: tcp, target: "127.0.0.1:1"}`);
    try {
      // How long reading and explaining it takes on this machine, now: the run's own start
      // comes after about as long.
      const started = performance.now();
      const full = await spawnWaitcmd(["--explain", "-f", recipe]).ended(120_000);
      const whole = performance.now() - started;
      assertEquals(full.code, 0, full.stderr);
      const args = ["-t", "120s", "-i", "1s", "-q", "-f", recipe];
      const late: number[] = [];
      // Before the wait: a signal during the run itself waits for the end of 30,000 attempts
      // and the summary (docs/reliability.md, not yet covered).
      for (const at of [0.25, 0.5, 0.75]) {
        const r = await termAfter(args, whole * at);
        assert(r !== undefined, `the run ended before a signal at ${at}`);
        late.push(r.late);
        assertEquals([r.code, r.signal, r.stdout], [143, null, ""], `at ${at}: ${r.stderr}`);
        // Read and parsed in slices: a signal then is answered before the wait, not after it.
        if (at <= 0.5) assertEquals(r.stderr, BEFORE("SIGTERM"), `at ${at}`);
      }
      console.log(
        `a run of 30,000 tcp conditions (explained in ${Math.round(whole)} ms): SIGTERM answered ${
          late.join(", ")
        } ms late`,
      );
      assert(
        Math.max(...late) <= 100 + CI_MARGIN_MS,
        `answered ${late.join(", ")} ms late (explained in ${Math.round(whole)} ms)`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

cliTest(
  "signals: --explain orch -f DIR of four manifests of 3 MiB: SIGTERM while they are parsed exits 143 within 100 ms",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-manifests-" });
    try {
      // One object a file, holding a list of 3 MiB of short texts: seconds of YAML each.
      const data = [];
      for (let i = 0; i < 80_000; i++) data.push(`  - "value number ${i} of the list"`);
      for (let f = 0; f < 4; f++) {
        await Deno.writeTextFile(
          `${dir}/m${f}.yaml`,
          `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big-${f}}\nitems:\n${
            data.join("\n")
          }\n`,
        );
      }
      const args = ["--explain", "orch", "-f", dir];
      const started = performance.now();
      const full = await spawnWaitcmd(args).ended(120_000);
      const whole = performance.now() - started;
      assertEquals(full.code, 0, full.stderr);
      assertStringIncludes(full.stdout, "orch configmap/big-3");
      const late: number[] = [];
      for (const at of [0.2, 0.45, 0.7]) {
        const r = await termAfter(args, whole * at);
        if (r === undefined) continue;
        late.push(r.late);
        assertEquals([r.code, r.stdout, r.stderr], [143, "", BEFORE("SIGTERM")], `at ${at}`);
      }
      console.log(
        `--explain orch -f of 4 x 3 MiB: ${Math.round(whole)} ms; SIGTERM answered ${
          late.join(", ")
        } ms late`,
      );
      assert(late.length > 0, "every run ended before its signal");
      assert(
        Math.max(...late) <= 100 + CI_MARGIN_MS,
        `answered ${late.join(", ")} ms late (whole: ${Math.round(whole)} ms)`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/** When a run's lines arrived, read from outside: ms on this process's clock. */
interface RunTimes {
  code: number;
  /** The header (`waitcmd: waiting for …`): the run's clock starts with it. */
  header: number;
  /** The first bytes of the summary (`summaryStart` in them). */
  summary: number;
  /** The process's exit. */
  exit: number;
  /** The signal's sending, when one was sent. */
  signalled?: number;
  /** The summary's text, from its start to the end of stderr. */
  tail: string;
}

/** How a timed run is started: under a limit of open files, its stderr into a file. */
interface RunSetting {
  /** `ulimit -n`. */
  readonly openFiles?: number;
  /** A file for stderr (as a CI job's log), read as it grows, instead of a pipe. */
  readonly logFile?: string;
}

/**
 * Runs waitcmd with text output, timing from outside when its header, its summary (the first
 * bytes holding `summaryStart`) and its exit came; with `termAfterMs`, SIGTERM that long
 * after the header.
 */
async function timedRun(
  args: string[],
  summaryStart: string,
  termAfterMs?: number,
  setting: RunSetting = {},
): Promise<RunTimes> {
  const { openFiles, logFile } = setting;
  // The shell execs waitcmd: the process signalled is waitcmd itself.
  const script = `${openFiles === undefined ? "" : `ulimit -n ${openFiles} && `}exec "$0" "$@"${
    logFile === undefined ? "" : ' 2>"$TEST_STDERR_LOG"'
  }`;
  const child = new Deno.Command("sh", {
    args: ["-c", script, WAITCMD, ...args],
    env: { NO_COLOR: "1", ...(logFile === undefined ? {} : { TEST_STDERR_LOG: logFile }) },
    stdin: "null",
    stdout: "null",
    stderr: logFile === undefined ? "piped" : "null",
  }).spawn();
  const guard = setTimeout(() => child.kill("SIGKILL"), 180_000);
  const decoder = new TextDecoder();
  let header = NaN;
  let summary = NaN;
  let signalled: number | undefined;
  let seen = "";
  let tail = "";
  const chunks = logFile === undefined ? child.stderr : grown(logFile, child.status);
  for await (const chunk of chunks) {
    const now = performance.now();
    // The last bytes of the chunk before, so a marker cut between two chunks is found.
    const text = seen.slice(-200) + decoder.decode(chunk, { stream: true });
    if (Number.isNaN(header) && text.includes("waitcmd: waiting for")) {
      header = now;
      if (termAfterMs !== undefined) {
        setTimeout(() => {
          signalled = performance.now();
          child.kill("SIGTERM");
        }, termAfterMs);
      }
    }
    if (Number.isNaN(summary) && text.includes(summaryStart)) summary = now;
    if (!Number.isNaN(summary)) tail += text.slice(Math.min(200, seen.length));
    seen = text;
  }
  const { code } = await child.status;
  const exit = performance.now();
  clearTimeout(guard);
  if (!Number.isNaN(summary)) tail = tail.slice(tail.indexOf(summaryStart));
  return { code, header, summary, exit, signalled, tail };
}

/** What is written to `path`, read every 2 ms until `ended` and once after. */
async function* grown(path: string, ended: Promise<unknown>): AsyncGenerator<Uint8Array> {
  let done = false;
  ended.then(() => done = true);
  let file: Deno.FsFile | undefined;
  const buf = new Uint8Array(1 << 16);
  try {
    for (;;) {
      const last = done;
      file ??= await Deno.open(path).catch(() => undefined);
      for (let n = await file?.read(buf); n; n = await file!.read(buf)) yield buf.slice(0, n);
      if (last) return;
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    file?.close();
  }
}

/**
 * The process's own end, from its summary to its exit, measured run by run: the kernel freeing
 * a large run's memory, under 2 s even on a machine at load 20 (a run that went on working
 * after its summary would take longer).
 */
function assertProcessEnd(toSummary: number[], toExit: number[]): void {
  const ends = toExit.map((t, i) => t - toSummary[i]!);
  assert(Math.max(...ends) <= 2000, `the process ended ${ends.join(", ")} ms after its summary`);
}

/** The machine's load average over the last minute (the figures below depend on it). */
function load(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ")[0]!;
}

cliTest(
  "signals: a run of 20,000 tcp conditions to a closed port writes its verdict within 100 ms of its deadline, then exits",
  async () => {
    const { dir, recipe } = await bigRecipe(20_000, () => `{kind: tcp, target: "127.0.0.1:1"}`);
    try {
      const toSummary: number[] = [];
      const toExit: number[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await timedRun(["-t", "3s", "-f", recipe], "waitcmd: timed out after 3s");
        assertEquals(r.code, 1, r.tail.slice(0, 500));
        // Every condition's line, in one write (the summary is one write; docs/contract.md §3).
        assertEquals(
          r.tail.split("\n").filter((l) => l.startsWith("waitcmd: timed out")).length,
          20_000,
        );
        const deadline = r.header + 3000;
        toSummary.push(Math.round(r.summary - deadline));
        toExit.push(Math.round(r.exit - deadline));
      }
      console.log(
        `20,000 tcp conditions, -t 3s (load ${load()}): the summary came ${
          toSummary.join(", ")
        } ms after the deadline, the exit ${toExit.join(", ")} ms after it`,
      );
      // At the deadline the verdict is written and `Deno.exit` called: nothing is done a
      // condition but its summary line (engine/condition.ts, `end`), and nothing is written
      // after the summary, so its arrival is when waitcmd's own work ended.
      assert(
        Math.max(...toSummary) <= 100 + CI_MARGIN_MS,
        `summary ${toSummary.join(", ")} ms after the deadline`,
      );
      // Then the process's own end: the kernel closes the thousands of sockets of connections
      // under way and frees its 180 MB before this process sees the exit, 117-127 ms at load 7
      // (docs/reliability.md, Not yet covered). Bounded so that no work is left after the summary.
      assertProcessEnd(toSummary, toExit);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/**
 * The runtime's main event loop was seen to call a signal listener 0.6-1.6 s after a SIGTERM sent
 * a second into the wait of 30,000 conditions (10 of 40 runs under `ulimit -n 8000`, 3 of 22
 * with 20,000 files), and rarely never, while its timers ran on time; a run of 2,000 conditions
 * or more hears its signals in a worker too (cli/off_thread_signals.ts; docs/reliability.md,
 * "Signals in large runs"). Six runs: a late answer in a quarter of them fails the test 5 times
 * in 6.
 */
cliTest(
  "signals: SIGTERM during a run of 30,000 tcp conditions (the wait under way, 8,000 open files, stderr into a file): the verdict within 100 ms, then exit 143",
  async () => {
    const { dir, recipe } = await bigRecipe(30_000, () => `{kind: tcp, target: "127.0.0.1:1"}`);
    try {
      const toSummary: number[] = [];
      const toExit: number[] = [];
      for (let i = 0; i < 6; i++) {
        // A second into the wait: the conditions start, and their first attempts end.
        const r = await timedRun(
          ["-t", "20s", "-f", recipe],
          "waitcmd: cancelled by SIGTERM",
          1000,
          { openFiles: 8000, logFile: `${dir}/stderr-${i}.log` },
        );
        assertEquals(r.code, 143, r.tail.slice(0, 500));
        assert(r.signalled !== undefined, "no signal was sent");
        assertStringIncludes(r.tail, "; not satisfied: tcp 127.0.0.1:1, tcp 127.0.0.1:1");
        toSummary.push(Math.round(r.summary - r.signalled));
        toExit.push(Math.round(r.exit - r.signalled));
      }
      console.log(
        `30,000 tcp conditions, 8,000 open files, stderr into a file, SIGTERM 1 s into the wait (load ${load()}): the summary came ${
          toSummary.join(", ")
        } ms after the signal, the exit ${toExit.join(", ")} ms after it`,
      );
      assert(
        Math.max(...toSummary) <= 100 + CI_MARGIN_MS,
        `summary ${toSummary.join(", ")} ms after the signal`,
      );
      assertProcessEnd(toSummary, toExit);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
