/**
 * Measuring helpers shared by the bench modules: timing a command from spawn
 * to exit, interleaved samples with medians and percentiles, a child's peak
 * RSS and CPU time (`/usr/bin/time` when installed, else `/proc` polling),
 * loopback listeners, and npm tools installed into a cache directory for
 * comparisons.
 *
 * Benchmarks measure; nothing here asserts a timing.
 *
 * @module
 */

import type { BenchRow } from "./_types.ts";
import { bundle, BUNDLE_DIR, bundleState, LAUNCHER } from "../bundle.ts";

/** Directory of the repository (scripts/bench/_lib.ts -> repo root). */
export const repoRoot: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
/** The project's pinned Deno (installs itself). */
export const denoScript = `${repoRoot}/scripts/deno`;
/** waitcmd from source. */
export const waitcmdScript = `${repoRoot}/scripts/waitcmd`;
/**
 * waitcmd from the release bundle (scripts/bundle.ts): `dist/bundle/waitcmd`
 * runs it with the compiled binary's flags. {@link ensureBundle} builds it.
 */
export const bundleLauncher = `${BUNDLE_DIR}/${LAUNCHER}`;

let bundleMemo: Promise<void> | undefined;
/** Builds the release bundle unless dist/bundle holds one of these sources (once per run). */
export function ensureBundle(): Promise<void> {
  bundleMemo ??= (async () => {
    if (await bundleState() === "fresh") return;
    progress("building the release bundle (scripts/deno task bundle)");
    await bundle({ log: progress });
  })();
  return bundleMemo;
}

/**
 * The two forms of waitcmd the start-up rows compare, for `args`: `name`
 * from the sources (scripts/waitcmd) and `name (bundle)` from the release
 * bundle, which is what ships.
 */
export function bothForms(name: string, args: readonly string[]): Record<string, string[]> {
  return {
    [name]: [waitcmdScript, ...args],
    [`${name} (bundle)`]: [bundleLauncher, ...args],
  };
}

/** Peak RSS (kB) and CPU (ms, user + system) of runs of one command. */
export interface Usage {
  readonly rssKb: readonly number[];
  readonly cpuMs: readonly number[];
}

/**
 * Peak RSS and CPU of `runs` runs of each form of waitcmd (bundle, then
 * sources, alternating, so that load hits both alike), exact from `wait4`
 * through the python3 wrapper (GNU time, else /proc polling, when python3 is
 * missing). A run that exits otherwise than `expectCode` makes it throw.
 */
export async function usageBothForms(
  args: readonly string[],
  runs: number,
  expectCode = 0,
): Promise<{ bundle: Usage; source: Usage }> {
  const py = await python3();
  const one = async (cmd: readonly string[]): Promise<{ rssKb: number; cpuMs: number }> => {
    if (py) {
      const file = await Deno.makeTempFile({ prefix: "waitcmd-bench-usage-" });
      try {
        const r = await runTimed(underWait4(py, file, cmd));
        if (r.code !== expectCode) throw new Error(`${cmd.join(" ")} exited ${r.code}`);
        const u = await readRusage(file);
        return { rssKb: u.peakRssKb > 0 ? u.peakRssKb : NaN, cpuMs: u.cpuSeconds * 1000 };
      } finally {
        await Deno.remove(file).catch(() => {});
      }
    }
    const r = await runWithResources(cmd);
    if (r.code !== expectCode) throw new Error(`${cmd.join(" ")} exited ${r.code}`);
    return { rssKb: r.peakRssKb, cpuMs: r.cpuSeconds * 1000 };
  };
  const b = { rssKb: [] as number[], cpuMs: [] as number[] };
  const s = { rssKb: [] as number[], cpuMs: [] as number[] };
  for (let i = 0; i < runs; i++) {
    for (const [form, cmd] of [[b, bundleLauncher], [s, waitcmdScript]] as const) {
      const u = await one([cmd, ...args]);
      if (Number.isFinite(u.rssKb)) form.rssKb.push(u.rssKb);
      form.cpuMs.push(u.cpuMs);
    }
  }
  return { bundle: b, source: s };
}

/** How many runs the peak RSS and CPU figures take (WAITCMD_BENCH_RSS_RUNS, default 7). */
export function rssRuns(): number {
  const n = Number(Deno.env.get("WAITCMD_BENCH_RSS_RUNS") ?? "7");
  return Number.isInteger(n) && n >= 1 ? n : 7;
}

/**
 * One start-up row: the time to verdict of `name` from the bundle and from
 * the sources (interleaved runs; the bundle's time against the sources' is
 * the median of the rounds' ratios, which load drifting over the run moves
 * least), their CPU and peak RSS, and the peer's time when there is one. The
 * target is the peer ratio when given (judged on the bundle, which ships)
 * and, always, that the bundle takes no more time, CPU or memory than the
 * sources.
 */
export function sideBySideRow(opts: {
  readonly name: string;
  readonly source: readonly number[];
  readonly bundle: readonly number[];
  readonly usage: { readonly bundle: Usage; readonly source: Usage };
  readonly peer?: {
    readonly name: string;
    readonly times: readonly number[];
    readonly ratio: number;
  };
  readonly peerMissing?: string;
  readonly extra?: string;
}): BenchRow {
  const src = median(opts.source);
  const bun = median(opts.bundle);
  const rounds = Math.min(opts.source.length, opts.bundle.length);
  const time = median(Array.from({ length: rounds }, (_, i) => opts.bundle[i]! / opts.source[i]!));
  const cpuB = median(opts.usage.bundle.cpuMs);
  const cpuS = median(opts.usage.source.cpuMs);
  const rssB = median(opts.usage.bundle.rssKb);
  const rssS = median(opts.usage.source.rssKb);
  const targets = ["bundle <= source in time, CPU and RSS"];
  const refs = [
    `bundle ${fmtSample(opts.bundle)}, CPU ${fmtMs(cpuB)}, peak RSS ${fmtKb(rssB)}`,
    `source ${fmtSample(opts.source)}, CPU ${fmtMs(cpuS)}, peak RSS ${fmtKb(rssS)}`,
    `CPU and RSS: median of ${opts.usage.bundle.cpuMs.length} runs each`,
  ];
  let peerOk = true;
  let peerText = "";
  if (opts.peer) {
    const theirs = median(opts.peer.times);
    peerOk = bun / theirs <= opts.peer.ratio;
    targets.unshift(`<= ${opts.peer.ratio}x ${opts.peer.name}`);
    peerText = `; ${(bun / theirs).toFixed(1)}x ${opts.peer.name}`;
    refs.push(`${opts.peer.name} ${fmtMs(theirs)}`);
  } else if (opts.peerMissing) {
    refs.push(opts.peerMissing);
  }
  if (opts.extra) refs.push(opts.extra);
  return {
    name: opts.name,
    figure: `bundle ${fmtMs(bun)}, ${fmtMs(cpuB)} CPU, ${fmtKb(rssB)}; source ${fmtMs(src)}, ${
      fmtMs(cpuS)
    } CPU, ${fmtKb(rssS)} (bundle ${time.toFixed(2)}x the time, ${
      (cpuB / cpuS).toFixed(2)
    }x the CPU, ${(rssB / rssS).toFixed(2)}x the RSS${peerText})`,
    target: targets.join("; "),
    reference: refs.join("; "),
    ok: time <= 1 && cpuB <= cpuS && rssB <= rssS && peerOk,
  };
}

/**
 * The Deno flags scripts/waitcmd adds for the npm packages, by the same test:
 * `--no-lock --node-modules-dir=manual` while scripts/packages' stamp in
 * node_modules is newer than deno.lock, else none. Runs that stand for
 * waitcmd's own start-up or imports (Deno alone, import costs) take them too.
 */
export async function launcherNpmFlags(): Promise<string[]> {
  const mtime = async (path: string) =>
    (await Deno.stat(path).catch(() => undefined))?.mtime?.getTime();
  const stamp = await mtime(`${repoRoot}/node_modules/.waitcmd-installed`);
  const lock = await mtime(`${repoRoot}/deno.lock`);
  if (stamp === undefined) return [];
  // Whole seconds, as scripts/waitcmd's shell may compare them (scripts/packages).
  return lock === undefined || Math.floor(stamp / 1000) > Math.floor(lock / 1000)
    ? ["--no-lock", "--node-modules-dir=manual"]
    : [];
}

/** Thrown by an entry whose result must fail the whole bench (exit 1) after its rows are shown. */
export class BenchFailure extends Error {
  constructor(message: string, readonly rows: readonly BenchRow[]) {
    super(message);
    this.name = "BenchFailure";
  }
}

// --- statistics ------------------------------------------------------------

/** The median of `xs` (NaN for none). */
export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/** The p-th percentile of `xs`, linear between neighbours (NaN for none). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

/** `12.3 ms`, `1.24 s`. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "n/a";
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

/** `41.2 MB` from kilobytes. */
export function fmtKb(kb: number): string {
  if (!Number.isFinite(kb)) return "n/a";
  return `${(kb / 1024).toFixed(1)} MB`;
}

/** `median 12.3 ms, p95 14.0 ms (n=25)`. */
export function fmtSample(xs: readonly number[]): string {
  return `median ${fmtMs(median(xs))}, p95 ${fmtMs(percentile(xs, 95))} (n=${xs.length})`;
}

/** How many repetitions timing entries use: WAITCMD_BENCH_RUNS, at least 5, default 25. */
export function benchRuns(): number {
  const n = Number(Deno.env.get("WAITCMD_BENCH_RUNS") ?? "25");
  return Number.isInteger(n) && n >= 5 ? n : 25;
}

/** A progress line on stderr (the table itself goes to stdout). */
export function progress(text: string): void {
  console.error(`bench: ${text}`);
}

// --- running commands ------------------------------------------------------

/** What one run of a command gave. */
export interface RunResult {
  readonly code: number;
  /** From just before spawn to the moment its exit status was known. */
  readonly wallMs: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of `runTimed`. */
export interface RunOptions {
  readonly cwd?: string;
  readonly env?: Record<string, string>;
  /** Capture stdout and stderr (default: discard them, the cheapest for timing). */
  readonly capture?: boolean;
  /** Kill the child after this long (default 120 s); the result then has code 124. */
  readonly timeoutMs?: number;
}

/** Runs `cmd` and times it from spawn to exit. */
export async function runTimed(cmd: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const capture = opts.capture ?? false;
  const t0 = performance.now();
  const child = new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
    stdout: capture ? "piped" : "null",
    stderr: capture ? "piped" : "null",
  }).spawn();
  const timer = setTimeout(() => killQuietly(child), opts.timeoutMs ?? 120_000);
  try {
    if (capture) {
      const out = await child.output();
      const wallMs = performance.now() - t0;
      return {
        code: out.signal ? 124 : out.code,
        wallMs,
        stdout: new TextDecoder().decode(out.stdout),
        stderr: new TextDecoder().decode(out.stderr),
      };
    }
    const status = await child.status;
    const wallMs = performance.now() - t0;
    return { code: status.signal ? 124 : status.code, wallMs, stdout: "", stderr: "" };
  } finally {
    clearTimeout(timer);
  }
}

function killQuietly(child: Deno.ChildProcess, sig: Deno.Signal = "SIGKILL"): void {
  try {
    child.kill(sig);
  } catch {
    // Already gone.
  }
}

/**
 * Runs each named command `n` times, interleaved (round-robin, the order
 * rotating every round) so that load on a shared machine hits all alike.
 * `warmup` rounds run first and are discarded. A run that exits with a code
 * other than `expectCode` makes it throw: a timing of a failed run means nothing.
 */
export async function interleave(
  commands: Record<string, readonly string[]>,
  n: number,
  opts: RunOptions & { warmup?: number; expectCode?: number } = {},
): Promise<Record<string, number[]>> {
  const names = Object.keys(commands);
  const out: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const warmup = opts.warmup ?? 2;
  for (let round = 0; round < warmup + n; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      const r = await runTimed(commands[name]!, opts);
      if (r.code !== (opts.expectCode ?? 0)) {
        const again = await runTimed(commands[name]!, { ...opts, capture: true });
        throw new Error(
          `${name}: ${commands[name]!.join(" ")} exited ${r.code}: ${
            again.stderr.trim().slice(-300)
          }`,
        );
      }
      if (round >= warmup) out[name]!.push(r.wallMs);
    }
  }
  return out;
}

// --- resources of a child ---------------------------------------------------

/** Peak RSS and CPU time of one finished run. */
export interface ResourceResult extends RunResult {
  /** Peak resident set size in kB. */
  readonly peakRssKb: number;
  /** User + system CPU seconds. */
  readonly cpuSeconds: number;
  /** How the figures were taken: `/usr/bin/time` or `/proc polling`. */
  readonly method: string;
}

let gnuTimePath: string | null | undefined;
/** `/usr/bin/time` if it is GNU time (it has -f and -o), else undefined. */
export async function gnuTime(): Promise<string | undefined> {
  if (gnuTimePath === undefined) {
    gnuTimePath = null;
    try {
      const out = await new Deno.Command("/usr/bin/time", {
        args: ["-f", "%M", "-o", "/dev/null", "true"],
        stdout: "null",
        stderr: "null",
      }).output();
      if (out.code === 0) gnuTimePath = "/usr/bin/time";
    } catch {
      // Not installed: poll /proc instead.
    }
  }
  return gnuTimePath ?? undefined;
}

/** `cmd` run under GNU time `gt`, which writes the child's rusage into `file` (see `readRusage`). */
export function underGnuTime(gt: string, file: string, cmd: readonly string[]): string[] {
  return [gt, "-f", "%M %U %S", "-o", file, ...cmd];
}

/**
 * Runs argv[2:] as its child and writes the child's rusage from `wait4` into
 * argv[1] as GNU time's `%M %U %S` would, but in microseconds: GNU time
 * prints hundredths, each cut down, so a run of 48 ms of CPU reads 0.03 +
 * 0.01. A child's maxrss may start from what the wrapper held when it
 * forked: one that is not above the wrapper's resident set at the fork is
 * written as 0, unknown, and the caller takes /proc's samples instead. (Not
 * the wrapper's own maxrss: that one starts from the bench process's, which
 * spawned the wrapper, and is far above a short run's.) The wrapper dies of
 * the signal that killed the child, or exits with its code. A fourth field
 * is the child's wall time, fork to reap, without the wrapper's own start.
 */
const WAIT4_PY = `
import os, signal, sys, time
def resident():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
floor = resident()
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as e:
        os.write(2, ("cannot run %s: %s\\n" % (sys.argv[2], e)).encode())
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
rss = ru.ru_maxrss if ru.ru_maxrss > floor else 0
with open(sys.argv[1], "w") as f:
    f.write("%d %.6f %.6f %.6f\\n" % (rss, ru.ru_utime, ru.ru_stime, wall))
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
os._exit(os.WEXITSTATUS(status))
`;

let python3Path: string | null | undefined;
/**
 * The python3 interpreter's own path if it runs, for `underWait4`; else
 * undefined. Not `python3` itself: on PATH it can be a shim (pyenv's is a
 * bash script that forks), and the tool must be the wrapper's first child.
 */
export async function python3(): Promise<string | undefined> {
  if (python3Path === undefined) {
    python3Path = null;
    try {
      const out = await new Deno.Command("python3", {
        args: ["-c", "import os, sys; os.wait4; print(sys.executable)"],
        stdout: "piped",
        stderr: "null",
      }).output();
      const exe = new TextDecoder().decode(out.stdout).trim();
      if (out.code === 0 && exe.startsWith("/")) python3Path = exe;
    } catch {
      // Not installed: GNU time instead.
    }
  }
  return python3Path ?? undefined;
}

/**
 * `cmd` run as the child of a python3 wrapper that writes the child's exact
 * rusage into `file` (see `readRusage`). Python's own start-up comes before
 * the child's, so the wrapper is for long runs, not for timing a spawn.
 */
export function underWait4(py: string, file: string, cmd: readonly string[]): string[] {
  return [py, "-c", WAIT4_PY, file, ...cmd];
}

/**
 * Peak RSS (kB) and user + system CPU seconds that `underGnuTime` or
 * `underWait4` left in `file`; `underWait4` also leaves the child's wall time.
 */
export async function readRusage(
  file: string,
): Promise<{ peakRssKb: number; cpuSeconds: number; wallMs?: number }> {
  // A failed command's file starts with a "Command exited with ..." line: the figures are last.
  const text = (await Deno.readTextFile(file)).trim().split("\n").at(-1) ?? "";
  const [rss, user, sys, wall] = text.split(/\s+/).map(Number);
  const u = { peakRssKb: rss ?? NaN, cpuSeconds: (user ?? NaN) + (sys ?? NaN) };
  return wall === undefined ? u : { ...u, wallMs: wall * 1000 };
}

/**
 * Runs `cmd` and reports its wall time, peak RSS and CPU seconds: from the
 * python3 `wait4` wrapper when python3 runs (exact CPU, and the wall time
 * without the wrapper's start), else from GNU time (`wait4` too, but CPU in
 * hundredths, each cut down, which cannot tell a 5% change of a 0.14 CPU-s
 * run), else from `/proc/PID` sampled every 5 ms (the last sample before
 * exit). A child whose peak RSS the wrapper cannot tell (see `underWait4`)
 * runs again under GNU time or /proc; a run killed before the wrapper
 * wrote has no figures (NaN).
 */
export async function runWithResources(
  cmd: readonly string[],
  opts: RunOptions = {},
): Promise<ResourceResult> {
  const py = await python3();
  if (py) {
    const file = await Deno.makeTempFile({ prefix: "waitcmd-bench-time-" });
    try {
      const r = await runTimed(underWait4(py, file, cmd), opts);
      const u = await readRusage(file).catch(() => undefined);
      // Killed before the wrapper could write (a timeout): no figures, and no second run.
      if (u?.wallMs === undefined) {
        return { ...r, peakRssKb: NaN, cpuSeconds: NaN, method: "wait4" };
      }
      if (u.peakRssKb > 0) return { ...r, ...u, wallMs: u.wallMs, method: "wait4" };
    } finally {
      await Deno.remove(file).catch(() => {});
    }
  }
  const gt = await gnuTime();
  if (gt) {
    const file = await Deno.makeTempFile({ prefix: "waitcmd-bench-time-" });
    try {
      const r = await runTimed(underGnuTime(gt, file, cmd), opts);
      return { ...r, ...await readRusage(file), method: "/usr/bin/time" };
    } finally {
      await Deno.remove(file).catch(() => {});
    }
  }
  const capture = opts.capture ?? false;
  const t0 = performance.now();
  const child = new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
    stdout: capture ? "piped" : "null",
    stderr: capture ? "piped" : "null",
  }).spawn();
  const sampler = sampleProc(child.pid, 5);
  const timer = setTimeout(() => killQuietly(child), opts.timeoutMs ?? 120_000);
  try {
    const out = capture ? await child.output() : undefined;
    const status = out ?? await child.status;
    const wallMs = performance.now() - t0;
    const s = sampler.stop();
    return {
      code: status.signal ? 124 : status.code,
      wallMs,
      stdout: out ? new TextDecoder().decode(out.stdout) : "",
      stderr: out ? new TextDecoder().decode(out.stderr) : "",
      peakRssKb: s.peakRssKb,
      cpuSeconds: s.cpuSeconds,
      method: "/proc polling",
    };
  } finally {
    clearTimeout(timer);
    sampler.stop();
  }
}

/** One reading of /proc/PID. */
export interface ProcSample {
  /** Current resident set size (VmRSS), kB. */
  readonly rssKb: number;
  /** Peak resident set size so far (VmHWM), kB. */
  readonly peakRssKb: number;
  /** User + system CPU seconds so far (all threads). */
  readonly cpuSeconds: number;
}

/** Kernel clock ticks per second of /proc/PID/stat (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/**
 * This process's command line. A child read between its fork and its exec
 * still shows it, and this process's memory: such a reading is skipped, or a
 * run's peak RSS would be the bench's own.
 */
const ownCmdline = (() => {
  try {
    return Deno.readTextFileSync("/proc/self/cmdline");
  } catch {
    return undefined;
  }
})();

/** Reads /proc/PID/status and /proc/PID/stat; undefined once the process is gone, or before its exec. */
export function readProc(pid: number): ProcSample | undefined {
  try {
    if (Deno.readTextFileSync(`/proc/${pid}/cmdline`) === ownCmdline) return undefined;
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1]);
    // Fields after the command name (which may contain spaces) start at ") ".
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    const rssKb = kb("VmRSS");
    if (!Number.isFinite(rssKb)) return undefined; // A zombie has no memory lines.
    return { rssKb, peakRssKb: kb("VmHWM"), cpuSeconds: (utime + stime) / USER_HZ };
  } catch {
    return undefined;
  }
}

/** Samples /proc/PID every `everyMs` until stopped; keeps the last good reading and the peak. */
export function sampleProc(
  pid: number,
  everyMs: number,
): { last(): ProcSample | undefined; stop(): { peakRssKb: number; cpuSeconds: number } } {
  let last: ProcSample | undefined;
  let peak = NaN;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const s = readProc(pid);
    if (s) {
      last = s;
      peak = Number.isFinite(peak) ? Math.max(peak, s.peakRssKb) : s.peakRssKb;
    }
    if (!stopped) timer = setTimeout(tick, everyMs);
  };
  tick();
  return {
    last: () => last,
    stop() {
      stopped = true;
      clearTimeout(timer);
      return { peakRssKb: peak, cpuSeconds: last?.cpuSeconds ?? NaN };
    },
  };
}

// --- loopback listeners ------------------------------------------------------

/** `n` TCP listeners on 127.0.0.1 that accept and close every connection. */
export function listenMany(n: number): { ports: number[]; close(): Promise<void> } {
  const listeners: Deno.Listener[] = [];
  const loops: Promise<void>[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      listeners.push(l);
      loops.push((async () => {
        try {
          for await (const conn of l) conn.close();
        } catch {
          // Closed.
        }
      })());
    }
  } catch (e) {
    for (const l of listeners) l.close();
    throw e;
  }
  return {
    ports: listeners.map((l) => (l.addr as Deno.NetAddr).port),
    async close() {
      for (const l of listeners) {
        try {
          l.close();
        } catch {
          // Already closed.
        }
      }
      await Promise.allSettled(loops);
    },
  };
}

/** `n` distinct loopback ports that nothing listens on (a moment ago). */
export function closedPorts(n: number): number[] {
  const ls = Array.from({ length: n }, () => Deno.listen({ hostname: "127.0.0.1", port: 0 }));
  const ports = ls.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of ls) l.close();
  return ports;
}

/** The soft limit of open files (`ulimit -n`), or undefined where unknown. */
export async function openFileLimit(): Promise<number | undefined> {
  try {
    const out = await new Deno.Command("sh", { args: ["-c", "ulimit -n"], stdout: "piped" })
      .output();
    const n = Number(new TextDecoder().decode(out.stdout).trim());
    return Number.isFinite(n) ? n : undefined; // "unlimited" -> NaN -> undefined
  } catch {
    return undefined;
  }
}

/**
 * `cmd` wrapped so that it runs with at least `n` open files allowed: the
 * soft limit is raised with `ulimit -n` (up to the hard limit) in a shell
 * that then `exec`s the command (same PID, no extra process left).
 */
export function withOpenFiles(n: number, cmd: readonly string[]): string[] {
  return [
    "sh",
    "-c",
    `cur=$(ulimit -n); if [ "$cur" != unlimited ] && [ "$cur" -lt ${n} ]; then ulimit -n ${n} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; fi; exec "$@"`,
    "sh",
    ...cmd,
  ];
}

// --- comparison tools ----------------------------------------------------------

/** Root of the bench's tool cache: WAITCMD_BENCH_TOOLS, else ~/.cache/waitcmd/bench-tools. */
export function toolsDir(): string {
  return Deno.env.get("WAITCMD_BENCH_TOOLS") ??
    `${Deno.env.get("HOME") ?? "/tmp"}/.cache/waitcmd/bench-tools`;
}

/** An npm package installed for comparison. */
export interface NpmTool {
  /** Path of its executable in node_modules/.bin. */
  readonly bin: string;
  /** Installed version (from its package.json). */
  readonly version: string;
  /** `node --version` of the Node.js that runs it. */
  readonly node: string;
}

/**
 * Installs `pkg@version` with npm into its own folder of the tool cache
 * (once; later runs reuse it) and returns its executable. Throws with npm's
 * message when npm or Node.js is missing or the install fails.
 */
export async function npmTool(pkg: string, version: string, binName = pkg): Promise<NpmTool> {
  const dir = `${toolsDir()}/${pkg.replace("/", "+")}@${version}`;
  const pj = `${dir}/node_modules/${pkg}/package.json`;
  const installed = async () => {
    try {
      return JSON.parse(await Deno.readTextFile(pj)).version as string;
    } catch {
      return undefined;
    }
  };
  let v = await installed();
  if (v !== version) {
    progress(`installing ${pkg}@${version} with npm into ${dir}`);
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(`${dir}/package.json`, '{ "private": true }\n');
    const out = await new Deno.Command("npm", {
      args: [
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        "--prefix",
        dir,
        `${pkg}@${version}`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output().catch((e) => {
      throw new Error(`cannot run npm to install ${pkg}@${version}: ${e.message}`);
    });
    if (out.code !== 0) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join("; ");
      throw new Error(`npm install ${pkg}@${version} failed: ${err}`);
    }
    v = await installed();
    if (v === undefined) throw new Error(`npm install ${pkg}@${version} left no ${pj}`);
  }
  const node = await new Deno.Command("node", { args: ["--version"], stdout: "piped" }).output()
    .then((o) => new TextDecoder().decode(o.stdout).trim())
    .catch(() => "node not found");
  return { bin: `${dir}/node_modules/.bin/${binName}`, version: v, node };
}

/** The peer tools unpacked for side-by-side runs: executables by name, and why any are missing. */
export interface PeerTools {
  /** `waitfor`, `wait4x` and `wait-on` mapped to their executables, for those installed. */
  readonly bins: Readonly<Record<string, string>>;
  /** Why install.sh could not provide them all ("" when it did). */
  readonly error: string;
}

let peerToolsMemo: Promise<PeerTools> | undefined;

/**
 * The peers waitcmd is compared with (waitfor and wait4x, Go binaries; wait-on, npm), unpacked
 * once by the peers directory's install.sh (WAITCMD_PEERS_DIR, default `shared/peers` beside the repository) into
 * the tool cache. install.sh is idempotent and prints `NAME: PATH` for each tool it provides,
 * so its output is the list.
 */
export function peerTools(): Promise<PeerTools> {
  peerToolsMemo ??= (async () => {
    const peers = Deno.env.get("WAITCMD_PEERS_DIR") ??
      new URL("../../../shared/peers", import.meta.url).pathname;
    let stdout = "";
    let failure = "";
    try {
      const out = await new Deno.Command("sh", {
        args: [`${peers}/install.sh`, `${toolsDir()}/peers/bin`],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      stdout = new TextDecoder().decode(out.stdout);
      const err = new TextDecoder().decode(out.stderr).trim().slice(-200);
      if (out.code !== 0) failure = ` (exit ${out.code}: ${err})`;
    } catch (e) {
      failure = ` (${e instanceof Error ? e.message : e})`;
    }
    const bins: Record<string, string> = {};
    for (const m of stdout.matchAll(/^([\w-]+): (\/\S+)$/gm)) bins[m[1]!] = m[2]!;
    const missing = ["waitfor", "wait4x", "wait-on"].filter((t) => !(t in bins));
    const error = missing.length === 0
      ? ""
      : `${peers}/install.sh did not provide ${missing.join(", ")}${failure}`;
    return { bins, error };
  })();
  return peerToolsMemo;
}

/**
 * One peer's executable: the one `envVar` names, else the one the peers'
 * install.sh provides (`peerTools`); or why there is none.
 */
export async function peerBin(
  name: "waitfor" | "wait4x" | "wait-on",
  envVar: string,
): Promise<{ bin: string } | { error: string }> {
  const given = Deno.env.get(envVar);
  if (given) return { bin: given };
  const { bins, error } = await peerTools();
  return bins[name] ? { bin: bins[name]! } : { error: `${error || `no ${name}`} (set ${envVar})` };
}

/** Path of the pinned Deno's own binary (what scripts/deno execs). */
export async function denoBinary(): Promise<string> {
  const out = await new Deno.Command(denoScript, {
    args: ["eval", "console.log(Deno.execPath())"],
    stdout: "piped",
  }).output();
  const path = new TextDecoder().decode(out.stdout).trim();
  if (out.code !== 0 || path === "") throw new Error("Cannot find the pinned Deno binary");
  return path;
}

/** `deno 2.9.6` as the pinned Deno reports it. */
export async function denoVersion(): Promise<string> {
  const out = await new Deno.Command(denoScript, { args: ["--version"], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n")[0]?.trim() ?? "deno ?";
}

/** A temporary directory removed by the returned function. */
export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await Deno.makeTempDir({ prefix });
  return { path, remove: () => Deno.remove(path, { recursive: true }).catch(() => {}) };
}

/** A waitcmd run whose first attempt has been made (and found its condition pending). */
export interface Waiting {
  /** Resolves with the exit code and the moment the process exited. */
  readonly exit: Promise<{ code: number; at: number }>;
  /** Everything waitcmd wrote to stderr up to its first `[..]` line. */
  readonly seen: string;
}

/**
 * Starts waitcmd from source and resolves after its first `[..]` line, so a
 * detection-latency bench changes the target only once waitcmd is waiting
 * (and its watchers are armed). stderr keeps being drained afterwards.
 */
export async function startWaiting(
  args: readonly string[],
  env: Record<string, string> = {},
  timeout = "60s",
): Promise<Waiting> {
  const child = new Deno.Command(waitcmdScript, {
    args: ["--timeout", timeout, ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/^\[\.\.\] /m.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`waitcmd ended before its first attempt:\n${seen}`);
    seen += value;
  }
  const drained = (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  const exit = Promise.all([child.status, drained]).then(([s]) => ({
    code: s.code,
    at: performance.now(),
  }));
  return { exit, seen };
}
