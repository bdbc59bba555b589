/**
 * A child's peak RSS and CPU time: exact from `wait4` through a python3
 * wrapper, from GNU time when installed, else by polling `/proc`.
 *
 * Benchmarks measure; nothing here asserts a timing.
 *
 * @module
 */

import { killQuietly, runTimed } from "./_run.ts";
import type { RunOptions, RunResult } from "./_run.ts";

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
