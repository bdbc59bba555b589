/**
 * Measuring one tool on one job for the cost rows: short runs through
 * `wait4`, long runs observed through /proc, and the cells that show them.
 *
 * @module
 */

import { withOpenFiles } from "./_listeners.ts";
import {
  gnuTime,
  python3,
  readRusage,
  runWithResources,
  sampleProc,
  underGnuTime,
  underWait4,
} from "./_resources.ts";
import { fmtKb, fmtMs, median, progress } from "./_stats.ts";
import { bundleLauncher, ensureBundle, waitcmdScript } from "./_forms.ts";
import {
  baselineScript,
  FLOOR_RUNS,
  type Job,
  PEERS,
  reportOf,
  type Tool,
  waitcmd,
} from "./_cost_tools.ts";

// --- measuring ---------------------------------------------------------------------------

/** What one tool's run of a job cost (the sum over its processes). */
export interface Cost {
  readonly wallMs: number;
  readonly cpuSeconds: number;
  readonly peakRssKb: number;
}

/** The median of each figure over runs (RSS: the largest). */
export function summarise(runs: readonly Cost[]): Cost {
  return {
    wallMs: median(runs.map((r) => r.wallMs)),
    cpuSeconds: median(runs.map((r) => r.cpuSeconds)),
    peakRssKb: Math.max(...runs.map((r) => r.peakRssKb)),
  };
}

/**
 * Runs `tool` once on a job that must be satisfied at once, with the
 * open-files limit raised to `files`; a run that fails becomes a cell that
 * says so, not a figure.
 */
export async function shortRun(tool: Tool, job: Job, files: number): Promise<Cost | string> {
  const cmds = tool.commands(job);
  if (typeof cmds === "string") return cmds;
  if (tool.covers?.(job)) return `cannot: ${tool.covers(job)} only`;
  const r = await runWithResources(withOpenFiles(files, cmds[0]!), {
    capture: true,
    timeoutMs: 120_000,
  });
  // waitcmd and waitfor report JSON: its status must agree with the exit code.
  const report = reportOf(r.stdout);
  if (r.code !== 0 || (report !== undefined && report.status !== "satisfied")) {
    const why = (r.stderr.trim() || r.stdout.trim()).split("\n").at(-1)?.slice(0, 160);
    return `cannot: exit ${r.code}${r.code === 124 ? " (killed after 120 s)" : ""}: ${why}`;
  }
  return { wallMs: r.wallMs, cpuSeconds: r.cpuSeconds, peakRssKb: r.peakRssKb };
}

/** A long run observed through /proc while it runs. */
export interface Observed extends Cost {
  readonly code: number;
  readonly stdout: string;
  readonly stderrTail: string;
  /** CPU-s and RSS `startMs` after spawn: the cost of start-up. */
  readonly startCpuSeconds: number;
  readonly startRssKb: number;
  /** RSS at the last sample before exit. */
  readonly endRssKb: number;
  /** `performance.now()` when the exit was seen. */
  readonly exitAt: number;
}

/** Options of `observe`. */
interface ObserveOptions {
  /** When start-up counts as over (default 1000 ms). */
  readonly startMs?: number;
  /** Called with each line of stderr and stdout as it arrives. */
  readonly onLine?: (line: string, stream: "stdout" | "stderr") => void;
  /** Kill the process after this long (default 10 minutes). */
  readonly timeoutMs?: number;
}

/**
 * Spawns `cmd` and samples /proc/PID every 100 ms until it exits, for the
 * CPU and RSS after start-up and the RSS at the end. The totals (CPU, peak
 * RSS) come from `wait4` through python3, else from GNU time, else from the
 * samples: sampling would miss the CPU of the last 100 ms, the exit
 * included, and GNU time cuts user and system CPU down to hundredths each
 * (a 48 ms run reads 0.04), which matters beside a 0.06 CPU-s target.
 * Resolves once the process runs.
 */
export async function observe(
  cmd: readonly string[],
  opts: ObserveOptions = {},
): Promise<{ kill(sig: Deno.Signal): void; done: Promise<Observed> }> {
  const py = await python3();
  const gt = py ? undefined : await gnuTime();
  const timeFile = py || gt
    ? await Deno.makeTempFile({ prefix: "waitcmd-bench-time-" })
    : undefined;
  const argv = !timeFile
    ? [...cmd]
    : py
    ? underWait4(py, timeFile, cmd)
    : underGnuTime(gt!, timeFile, cmd);
  const t0 = performance.now();
  const child = new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Under a wrapper the tool is its child: sample and signal that one.
  const pid = timeFile ? await childOf(child.pid) : child.pid;
  const kill = (sig: Deno.Signal) => {
    try {
      Deno.kill(pid, sig);
    } catch {
      // Already gone.
    }
  };
  const proc = sampleProc(pid, 100);
  let start = proc.last();
  const startTimer = setTimeout(() => (start = proc.last()), opts.startMs ?? 1000);
  const killTimer = setTimeout(() => kill("SIGKILL"), opts.timeoutMs ?? 600_000);
  let stdout = "";
  let stderr = "";
  const reading = Promise.all([
    eachLine(child.stdout, (l) => {
      stdout += l + "\n";
      opts.onLine?.(l, "stdout");
    }),
    eachLine(child.stderr, (l) => {
      stderr = (stderr + l + "\n").slice(-2000);
      opts.onLine?.(l, "stderr");
    }),
  ]);
  const done = (async () => {
    const status = await child.status;
    const exitAt = performance.now();
    const last = proc.last();
    const sampled = proc.stop();
    clearTimeout(startTimer);
    clearTimeout(killTimer);
    await reading;
    let totals: { peakRssKb: number; cpuSeconds: number } = sampled;
    if (timeFile) {
      const exact = await readRusage(timeFile);
      // wait4's maxrss and /proc's VmHWM count slightly differently: keep the larger.
      totals = { ...exact, peakRssKb: Math.max(exact.peakRssKb, sampled.peakRssKb || 0) };
      await Deno.remove(timeFile).catch(() => {});
    }
    return {
      code: status.signal ? 124 : status.code,
      wallMs: exitAt - t0,
      ...totals,
      stdout,
      stderrTail: stderr,
      startCpuSeconds: start?.cpuSeconds ?? NaN,
      startRssKb: start?.rssKb ?? NaN,
      endRssKb: last?.rssKb ?? NaN,
      exitAt,
    };
  })();
  return { kill, done };
}

/** The first child of `pid` (within 2 s), else `pid` itself. */
async function childOf(pid: number): Promise<number> {
  for (let i = 0; i < 400; i++) {
    try {
      const kids = (await Deno.readTextFile(`/proc/${pid}/task/${pid}/children`)).trim();
      if (kids) return Number(kids.split(/\s+/)[0]);
    } catch {
      return pid; // Gone already, or no children file on this kernel.
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return pid;
}

/** Reads a stream line by line, calling `onLine` for each. */
async function eachLine(stream: ReadableStream<Uint8Array>, onLine: (l: string) => void) {
  let buf = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  }
  if (buf) onLine(buf);
}

/** A tool's pending run of a job: the sums over its processes, and the attempts when reported. */
export interface PendingRun extends Observed {
  readonly attempts?: number;
  readonly covers: string;
}

/**
 * Runs `tool` on a job whose conditions all stay pending until the
 * timeout. A run that ends early (before 90% of the timeout) or reports a
 * status other than a timeout becomes a cell that says why.
 */
export async function pendingRun(tool: Tool, job: Job): Promise<PendingRun | string> {
  const cmds = tool.commands(job);
  if (typeof cmds === "string") return cmds;
  const runs = await Promise.all(
    cmds.map((c) => observe(c, { timeoutMs: job.timeoutS * 1000 + 30_000 }).then((o) => o.done)),
  );
  for (const r of runs) {
    const report = reportOf(r.stdout);
    if (r.code === 0 || r.wallMs < job.timeoutS * 900 || (report && report.status !== "timeout")) {
      const why = r.stderrTail.trim().split("\n").at(-1)?.slice(0, 160);
      return `cannot: exit ${r.code} after ${fmtMs(r.wallMs)}: ${why}`;
    }
  }
  const sum = (f: (o: Observed) => number) => runs.reduce((n, r) => n + f(r), 0);
  const reports = runs.map((r) => reportOf(r.stdout));
  return {
    code: runs[0]!.code,
    wallMs: Math.max(...runs.map((r) => r.wallMs)),
    stdout: "",
    stderrTail: "",
    cpuSeconds: sum((r) => r.cpuSeconds),
    peakRssKb: sum((r) => r.peakRssKb),
    startCpuSeconds: sum((r) => r.startCpuSeconds),
    startRssKb: sum((r) => r.startRssKb),
    endRssKb: sum((r) => r.endRssKb),
    exitAt: Math.max(...runs.map((r) => r.exitAt)),
    attempts: reports.every((r) => r !== undefined)
      ? reports.reduce((n, r) => n + r!.attempts, 0)
      : undefined,
    covers: [tool.covers?.(job), runs.length > 1 ? `${runs.length} processes, summed` : ""]
      .filter(Boolean).join("; "),
  };
}

/** `0.14 CPU-s (0.06 in the first 1 s, then 0.08)`. */
export function fmtCpu(o: Observed): string {
  return `${fmtCpuS(o.cpuSeconds)} CPU-s (start-up ${fmtCpuS(o.startCpuSeconds)} in the ` +
    `first 1 s, then ${fmtCpuS(o.cpuSeconds - o.startCpuSeconds)})`;
}

/** One peer's cell: `waitfor 0.13 s` or `wait4x: no file kind`. */
export function cell<C extends Cost>(
  name: string,
  got: C | string | undefined,
  fmt: (c: C, name: string) => string,
): string {
  if (got === undefined) return `${name}: not run`;
  return typeof got === "string" ? `${name}: ${got}` : `${name} ${fmt(got, name)}`;
}

/** The peers' cells of one figure, joined, with a note for peers install.sh could not provide. */
export function peerCells<C extends Cost>(
  got: Readonly<Record<string, C | string>>,
  missing: string,
  fmt: (c: C, name: string) => string,
): string {
  const cells = PEERS.filter((p) => p in got).map((p) => cell(p, got[p], fmt));
  if (missing) cells.push(missing);
  return cells.join("; ");
}

/** A pending run's CPU-s: thousandths below one second (exact with python3, see `observe`). */
export function fmtCpuS(seconds: number): string {
  return seconds < 1 ? seconds.toFixed(3) : seconds.toFixed(2);
}

// --- the Deno floor -------------------------------------------------------------------------

let floorMemo: Promise<Record<string, Cost>> | undefined;

/**
 * `waitcmd --version` of every form of waitcmd (interleaved), measured like
 * the runs: the cost of starting at all.
 */
export function floors(): Promise<Record<string, Cost>> {
  floorMemo ??= (async () => {
    await ensureBundle();
    const forms: [string, string][] = [
      [waitcmd.name, bundleLauncher],
      ["waitcmd from sources", waitcmdScript],
    ];
    const baseline = baselineScript();
    if (baseline) forms.push(["baseline", baseline]);
    progress(`Deno floor: waitcmd --version, ${FLOOR_RUNS} runs of each form`);
    const runs: Record<string, Cost[]> = {};
    for (let i = 0; i < FLOOR_RUNS; i++) {
      for (const [name, script] of forms) {
        const r = await runWithResources([script, "--version"]);
        if (r.code !== 0) throw new Error(`${script} --version exited ${r.code}`);
        (runs[name] ??= []).push(r);
      }
    }
    floorsNow = Object.fromEntries(Object.entries(runs).map(([n, r]) => [n, summarise(r)]));
    return floorsNow;
  })();
  return floorMemo;
}

/**
 * The floors once measured, by form (waitcmd's forms only): a form's cost
 * per condition is taken above its own floor, so that what its start-up
 * loads does not count as the runner's.
 */
export let floorsNow: Readonly<Record<string, Cost>> = {};

/** The floor of what ships, which the per-condition figures subtract. */
export async function floor(): Promise<Cost> {
  return (await floors())[waitcmd.name]!;
}

/** The floor as the rows' references name it. */
export function fmtFloor(f: Cost): string {
  return `Deno floor (waitcmd --version) ${fmtMs(f.wallMs)}, ${f.cpuSeconds.toFixed(3)} CPU-s, ${
    fmtKb(f.peakRssKb)
  }`;
}

export function fmtFloorFigure(f: Cost): string {
  return `median ${fmtMs(f.wallMs)}, ${f.cpuSeconds.toFixed(3)} CPU-s; peak RSS ${
    fmtKb(f.peakRssKb)
  }`;
}
