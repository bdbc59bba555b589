/**
 * Cost per condition: what one run with many conditions costs in
 * wall time, peak RSS and CPU, and what pending conditions cost over time,
 * side by side with the peers in the same run: waitfor and wait4x (Go) and
 * wait-on (Node), unpacked by the peers directory's install.sh
 * (`peerTools`). Rows:
 *
 * - the Deno floor: `waitcmd --version`, measured the same way;
 *   and beside waitcmd in every tcp job, "Deno alone": a bare Deno program
 *   doing the same job (_bare_tcp.ts), so that what is waitcmd's own code
 *   and what is the runtime's can be told apart;
 * - P4: 1,000 `tcp` conditions on 1,000 listening loopback ports, one run
 *   (target <= 0.2 s and <= 50 MB);
 * - scale: 10,000 `tcp` conditions, and 1,000 `file` conditions on one
 *   watched directory (files there already; files written by a background
 *   writer; files woken by change events alone), with the CPU per condition
 *   beside the 1,000-tcp figure;
 * - P5: 10 `tcp` conditions pending on closed ports, `--interval 2s`, 30 s
 *   (target <= 0.06 CPU-s per 30 s);
 * - sustained load: 100 pending conditions (tcp, http answering 503, file,
 *   log) at `--interval 200ms`;
 * - event-driven idle: 10 pending file, log and glob conditions, 30 s.
 *
 * "waitcmd" is the release bundle (dist/bundle/waitcmd, built if need be):
 * what ships. Beside it in every job run "waitcmd from sources"
 * (scripts/waitcmd) and, when WAITCMD_BENCH_BASELINE names a checkout of an
 * earlier commit with its packages installed, "baseline" (its
 * scripts/waitcmd): one run compares the runner's cost with an earlier
 * one's (docs/performance.md). Short runs are measured by
 * `runWithResources` (`wait4` through python3: exact CPU), long ones by
 * `observe`, which also samples /proc/PID for the CPU and RSS after
 * start-up; both take their totals from `wait4` through python3 (exact),
 * else from GNU time.
 *
 * Run alone: `scripts/deno run -A scripts/bench/cost_bench.ts`, or through
 * the suite: `deno task bench cost`. Environment:
 * - WAITCMD_BENCH_IDLE_SECONDS: length of the P5 and event-driven idle runs
 *   (default 30; the targets are judged only at 30),
 * - WAITCMD_BENCH_SUSTAINED_SECONDS: length of the sustained-load runs
 *   (default 60),
 * - WAITCMD_PEERS_DIR, WAITCMD_BENCH_TOOLS: where the peers come from and are
 *   unpacked (see `peerTools`),
 * - WAITCMD_BENCH_BASELINE: a checkout whose scripts/waitcmd is the
 *   "baseline" column (unset: no such column).
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import {
  bundleLauncher,
  denoBinary,
  ensureBundle,
  launcherNpmFlags,
  repoRoot,
  waitcmdScript,
} from "./_forms.ts";
import { closedPorts, listenMany, openFileLimit, withOpenFiles } from "./_listeners.ts";
import {
  gnuTime,
  python3,
  readRusage,
  runWithResources,
  sampleProc,
  underGnuTime,
  underWait4,
} from "./_resources.ts";
import { tempDir } from "./_run.ts";
import { fmtKb, fmtMs, median, progress } from "./_stats.ts";
import { peerTools } from "./_tools.ts";

/** P4's count, and the count the per-condition figures are compared at. */
const P4_N = 1000;
/** The scale run's count of tcp conditions. */
const SCALE_N = 10_000;
/** Runs of each short measurement per tool (interleaved). */
const SHORT_RUNS = 9;
/** Runs of the 10,000-condition measurement per tool (wait-on takes about 14 s a run). */
const SCALE_RUNS = 3;
/** Runs of the Deno floor (`waitcmd --version`). */
const FLOOR_RUNS = 10;
/** P4 targets. */
const P4_WALL_MS = 200;
const P4_RSS_KB = 50 * 1024;
/** P5 target, CPU-s per 30 s. */
const P5_CPU_S = 0.06;
/** What a log condition waits for, never written. */
const NEEDLE = "READY-NEVER-WRITTEN";
/** The peers, in the order of their cells. */
const PEERS = [
  "waitcmd from sources",
  "baseline",
  "waitfor",
  "wait4x",
  "wait-on",
  "Deno alone",
] as const;

// --- conditions, and how each tool states them ------------------------------------------

type Kind = "tcp" | "http" | "file" | "log" | "glob";

/** One condition, in terms every tool can state (or says it cannot). */
interface Cond {
  readonly kind: Kind;
  /** host:port, URL, path or pattern. */
  readonly target: string;
}

/** One measured run: the conditions and the run's flags. */
interface Job {
  readonly conds: readonly Cond[];
  readonly timeoutS: number;
  /** The interval, or undefined for the tool's default. */
  readonly intervalMs?: number;
}

/** A tool that can do (a part of) a job. */
interface Tool {
  readonly name: string;
  /** The commands (run side by side) doing the job, or why the tool cannot do any of it. */
  commands(job: Job): string[][] | string;
  /** What of the job the commands cover, when not all of it (for the cells). */
  covers?(job: Job): string;
}

/** `kind target [--contains NEEDLE] -- kind target ...`: waitcmd's grammar, and waitfor's. */
function conditionsArgv(conds: readonly Cond[]): string[] {
  const argv: string[] = [];
  conds.forEach((c, i) => {
    if (i > 0) argv.push("--");
    argv.push(c.kind, c.target);
    if (c.kind === "log") argv.push("--contains", NEEDLE);
  });
  return argv;
}

/** A job as waitcmd's command line, with a JSON report; waitfor takes the same grammar and flags. */
function jsonCommand(bin: string): (job: Job) => string[][] {
  return (job) => [[
    bin,
    "--output",
    "json",
    "--timeout",
    `${job.timeoutS}s`,
    ...(job.intervalMs !== undefined ? ["--interval", `${job.intervalMs}ms`] : []),
    ...conditionsArgv(job.conds),
  ]];
}

/** What ships: the release bundle, run with the compiled binary's flags. */
const waitcmd: Tool = { name: "waitcmd", commands: jsonCommand(bundleLauncher) };

/** The other forms of waitcmd: its sources, and the baseline checkout's when one is named. */
function ourOtherForms(): Tool[] {
  const tools: Tool[] = [{ name: "waitcmd from sources", commands: jsonCommand(waitcmdScript) }];
  const baseline = baselineScript();
  if (baseline) tools.push({ name: "baseline", commands: jsonCommand(baseline) });
  return tools;
}

/** WAITCMD_BENCH_BASELINE's scripts/waitcmd, or undefined when it is unset. */
function baselineScript(): string | undefined {
  const dir = Deno.env.get("WAITCMD_BENCH_BASELINE");
  return dir ? `${dir.replace(/\/$/, "")}/scripts/waitcmd` : undefined;
}

/** The other forms of waitcmd and the peers as tools, for those install.sh provided. */
async function peers(): Promise<{ tools: Tool[]; missing: string }> {
  await ensureBundle();
  const { bins, error } = await peerTools();
  const tools: Tool[] = ourOtherForms();
  const waitfor = bins["waitfor"];
  if (waitfor) {
    tools.push({
      name: "waitfor",
      // Same grammar and flags as waitcmd; every kind measured here exists there.
      commands: jsonCommand(waitfor),
    });
  }
  const wait4x = bins["wait4x"];
  if (wait4x) {
    // One kind per process (`wait4x tcp ADDR...`): a job with tcp and http runs two side by side.
    const kinds = (job: Job) =>
      (["tcp", "http"] as const).filter((k) => job.conds.some((c) => c.kind === k));
    tools.push({
      name: "wait4x",
      commands(job) {
        if (kinds(job).length === 0) return "no file, log or glob kind";
        const flags = ["-t", `${job.timeoutS}s`, "-q"];
        if (job.intervalMs !== undefined) flags.push("-i", `${job.intervalMs}ms`);
        return kinds(job).map((k) => [
          wait4x,
          k,
          ...job.conds.filter((c) => c.kind === k).map((c) => c.target),
          // Without it any answer counts: a 503 would satisfy the condition.
          ...(k === "http" ? ["--expect-status-code", "200"] : []),
          ...flags,
        ]);
      },
      covers: (job) => coverage(job, kinds(job)),
    });
  }
  const waitOn = bins["wait-on"];
  if (waitOn) {
    const resource = (c: Cond) =>
      c.kind === "tcp"
        ? `tcp:${c.target}`
        // GET like waitcmd (wait-on's http: is a HEAD).
        : c.kind === "http"
        ? c.target.replace(/^http:/, "http-get:")
        : c.kind === "file"
        ? `file:${c.target}`
        : undefined;
    tools.push({
      name: "wait-on",
      commands(job) {
        const res = job.conds.map(resource).filter((r) => r !== undefined);
        if (res.length === 0) return "no log or glob kind";
        const flags = ["-t", `${job.timeoutS * 1000}`];
        if (job.intervalMs !== undefined) flags.push("-i", `${job.intervalMs}`);
        return [[waitOn, ...flags, ...res]];
      },
      covers: (job) => coverage(job, ["tcp", "http", "file"]),
    });
  }
  return { tools, missing: error };
}

/**
 * "Deno alone": the job done by a bare Deno program (_bare_tcp.ts), run with
 * scripts/waitcmd's Deno flags, for tcp jobs only. What waitcmd costs above
 * it is waitcmd's own code; what it costs above the Go peers is the runtime.
 */
async function bareDeno(): Promise<Tool> {
  const deno = await denoBinary();
  const npm = await launcherNpmFlags();
  return {
    name: "Deno alone",
    commands(job) {
      if (job.conds.some((c) => c.kind !== "tcp")) return "tcp only";
      return [[
        deno,
        "run",
        "--allow-all",
        "--quiet",
        "--no-prompt",
        ...npm,
        "--config",
        `${repoRoot}/deno.json`,
        `${repoRoot}/scripts/bench/_bare_tcp.ts`,
        `${job.timeoutS * 1000}`,
        `${job.intervalMs ?? 2000}`,
        ...job.conds.map((c) => c.target),
      ]];
    },
  };
}

/** `50 of 100 conditions (tcp, http)`, or "" when `kinds` cover the whole job. */
function coverage(job: Job, kinds: readonly Kind[]): string {
  const n = job.conds.filter((c) => kinds.includes(c.kind)).length;
  if (n === job.conds.length) return "";
  const present = kinds.filter((k) => job.conds.some((c) => c.kind === k));
  return `${n} of ${job.conds.length} conditions (${present.join(", ")})`;
}

/** The sum of the per-condition `attempts` of a JSON report (waitcmd's and waitfor's shape). */
function reportOf(stdout: string): { status: string; attempts: number } | undefined {
  try {
    const r = JSON.parse(stdout) as { status: string; conditions: { attempts: number }[] };
    return { status: r.status, attempts: r.conditions.reduce((n, c) => n + c.attempts, 0) };
  } catch {
    return undefined;
  }
}

// --- measuring ---------------------------------------------------------------------------

/** What one tool's run of a job cost (the sum over its processes). */
interface Cost {
  readonly wallMs: number;
  readonly cpuSeconds: number;
  readonly peakRssKb: number;
}

/** The median of each figure over runs (RSS: the largest). */
function summarise(runs: readonly Cost[]): Cost {
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
async function shortRun(tool: Tool, job: Job, files: number): Promise<Cost | string> {
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
interface Observed extends Cost {
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
async function observe(
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
interface PendingRun extends Observed {
  readonly attempts?: number;
  readonly covers: string;
}

/**
 * Runs `tool` on a job whose conditions all stay pending until the
 * timeout. A run that ends early (before 90% of the timeout) or reports a
 * status other than a timeout becomes a cell that says why.
 */
async function pendingRun(tool: Tool, job: Job): Promise<PendingRun | string> {
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
function fmtCpu(o: Observed): string {
  return `${fmtCpuS(o.cpuSeconds)} CPU-s (start-up ${fmtCpuS(o.startCpuSeconds)} in the ` +
    `first 1 s, then ${fmtCpuS(o.cpuSeconds - o.startCpuSeconds)})`;
}

/** One peer's cell: `waitfor 0.13 s` or `wait4x: no file kind`. */
function cell<C extends Cost>(
  name: string,
  got: C | string | undefined,
  fmt: (c: C, name: string) => string,
): string {
  if (got === undefined) return `${name}: not run`;
  return typeof got === "string" ? `${name}: ${got}` : `${name} ${fmt(got, name)}`;
}

/** The peers' cells of one figure, joined, with a note for peers install.sh could not provide. */
function peerCells<C extends Cost>(
  got: Readonly<Record<string, C | string>>,
  missing: string,
  fmt: (c: C, name: string) => string,
): string {
  const cells = PEERS.filter((p) => p in got).map((p) => cell(p, got[p], fmt));
  if (missing) cells.push(missing);
  return cells.join("; ");
}

// --- the Deno floor -------------------------------------------------------------------------

let floorMemo: Promise<Record<string, Cost>> | undefined;

/**
 * `waitcmd --version` of every form of waitcmd (interleaved), measured like
 * the runs: the cost of starting at all.
 */
function floors(): Promise<Record<string, Cost>> {
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
let floorsNow: Readonly<Record<string, Cost>> = {};

/** The floor of what ships, which the per-condition figures subtract. */
async function floor(): Promise<Cost> {
  return (await floors())[waitcmd.name]!;
}

function fmtFloor(f: Cost): string {
  return `Deno floor (waitcmd --version) ${fmtMs(f.wallMs)}, ${f.cpuSeconds.toFixed(3)} CPU-s, ${
    fmtKb(f.peakRssKb)
  }`;
}

function fmtFloorFigure(f: Cost): string {
  return `median ${fmtMs(f.wallMs)}, ${f.cpuSeconds.toFixed(3)} CPU-s; peak RSS ${
    fmtKb(f.peakRssKb)
  }`;
}

async function floorRows(): Promise<BenchRow[]> {
  const all = await floors();
  const others = Object.entries(all).filter(([n]) => n !== waitcmd.name);
  return [{
    name: "cost: Deno floor, waitcmd --version",
    figure: `${fmtFloorFigure(all[waitcmd.name]!)} (n=${FLOOR_RUNS})`,
    target: "",
    reference: `${others.map(([n, f]) => `${n} ${fmtFloorFigure(f)}`).join("; ")}; ` +
      "what any waitcmd run costs before its first condition; the per-condition " +
      "figures below subtract the release bundle's",
  }];
}

// --- P4 and scale: many tcp conditions in one run ---------------------------------------------

/** One count's results: waitcmd's and each peer's (or why not). */
interface CountResult {
  readonly n: number;
  readonly runs: number;
  readonly ours: Cost;
  readonly peers: Record<string, Cost | string>;
  readonly missing: string;
}

const tcpMemo = new Map<number, Promise<CountResult>>();

/** `n` tcp conditions on `n` listening loopback ports, every tool `runs` times, interleaved. */
function tcpCount(n: number, runs: number): Promise<CountResult> {
  let p = tcpMemo.get(n);
  if (!p) {
    p = bareDeno().then((bare) =>
      measureCount(n, runs, async () => {
        let server: ReturnType<typeof listenMany>;
        try {
          server = listenMany(n);
        } catch (e) {
          // The bench's own limit: Deno cannot raise it for the running process.
          throw new Error(
            `cannot listen on ${n} ports (ulimit -n ${await openFileLimit()}): ${
              e instanceof Error ? e.message : e
            }`,
          );
        }
        return {
          conds: server.ports.map((port) => ({
            kind: "tcp" as const,
            target: `127.0.0.1:${port}`,
          })),
          close: () => server.close(),
        };
      }, [bare])
    );
    tcpMemo.set(n, p);
  }
  return p;
}

/**
 * Runs every tool on the same `n` conditions, round-robin over `runs`
 * rounds (the order rotating) so that the shared machine's load hits all
 * alike.
 */
async function measureCount(
  n: number,
  runs: number,
  setUp: () => Promise<{ conds: Cond[]; close(): Promise<void> }>,
  extra: readonly Tool[] = [],
): Promise<CountResult> {
  const { tools: installed, missing } = await peers();
  const tools = [...installed, ...extra];
  const all = [waitcmd, ...tools];
  const { conds, close } = await setUp();
  // Each condition holds a socket or a descriptor; the rest is the runtime's.
  const files = 2 * n + 1024;
  try {
    const job: Job = { conds, timeoutS: 120 };
    const got: Record<string, Cost[] | string> = {};
    for (let round = 0; round < runs; round++) {
      for (let i = 0; i < all.length; i++) {
        const tool = all[(i + round) % all.length]!;
        if (typeof got[tool.name] === "string") continue;
        progress(`${n} ${conds[0]!.kind} conditions: ${tool.name}, round ${round + 1}/${runs}`);
        const r = await shortRun(tool, job, files);
        if (typeof r === "string") got[tool.name] = r;
        else ((got[tool.name] ??= []) as Cost[]).push(r);
      }
    }
    const ours = got.waitcmd;
    if (typeof ours === "string" || ours === undefined) {
      throw new Error(`waitcmd with ${n} conditions: ${ours ?? "did not run"}`);
    }
    const peerResults: Record<string, Cost | string> = {};
    for (const t of tools) {
      const g = got[t.name]!;
      peerResults[t.name] = typeof g === "string" ? g : summarise(g);
    }
    return { n, runs, ours: summarise(ours), peers: peerResults, missing };
  } finally {
    await close();
  }
}

/** CPU per condition with the floor's start-up taken out: `0.27 ms`. */
function cpuPer(c: Cost, n: number, f: Cost): string {
  return `${((c.cpuSeconds - f.cpuSeconds) * 1000 / n).toFixed(3)} ms`;
}

/** RSS per condition above the floor's: `36 KB`. */
function rssPer(c: Cost, n: number, f: Cost): string {
  return `${((c.peakRssKb - f.peakRssKb) / n).toFixed(1)} KB`;
}

/** The wall, RSS and CPU rows of one count. */
function countRows(
  what: string,
  r: CountResult,
  f: Cost,
  targets: { wallMs?: number; rssKb?: number },
  compare?: CountResult,
): BenchRow[] {
  const ofRuns = `median of ${r.runs} runs each, interleaved`;
  const rows: BenchRow[] = [{
    name: `${what}: wall, spawn to exit`,
    figure: fmtMs(r.ours.wallMs),
    target: targets.wallMs !== undefined ? `<= ${fmtMs(targets.wallMs)}` : "",
    reference: `${peerCells(r.peers, r.missing, (c) => fmtMs(c.wallMs))}; ${
      fmtFloor(f)
    }; ${ofRuns}`,
    ok: targets.wallMs !== undefined ? r.ours.wallMs <= targets.wallMs : undefined,
  }, {
    name: `${what}: peak RSS`,
    figure: `${fmtKb(r.ours.peakRssKb)} (${rssPer(r.ours, r.n, f)} per condition above the floor)`,
    target: targets.rssKb !== undefined ? `<= ${fmtKb(targets.rssKb)}` : "",
    reference: `${
      peerCells(r.peers, r.missing, (c) => fmtKb(c.peakRssKb))
    }; the largest of ${r.runs} runs`,
    ok: targets.rssKb !== undefined ? r.ours.peakRssKb <= targets.rssKb : undefined,
  }];
  const per = `${fmtCpuS(r.ours.cpuSeconds)} CPU-s; ${cpuPer(r.ours, r.n, f)} per condition`;
  rows.push({
    name: `${what}: CPU, and CPU per condition above the floor`,
    figure: compare
      ? `${per} (at ${compare.n.toLocaleString("en")}: ${cpuPer(compare.ours, compare.n, f)})`
      : per,
    target: "",
    reference: peerCells(r.peers, r.missing, (c, name) => {
      const own = floorsNow[name];
      return own
        ? `${fmtCpuS(c.cpuSeconds)} CPU-s (${cpuPer(c, r.n, own)} a condition above its floor)`
        : `${fmtCpuS(c.cpuSeconds)} CPU-s (${
          (c.cpuSeconds * 1000 / r.n).toFixed(3)
        } ms a condition, start-up included)`;
    }),
  });
  return rows;
}

async function p4(): Promise<BenchRow[]> {
  const f = await floor();
  const r = await tcpCount(P4_N, SHORT_RUNS);
  return countRows("P4: 1,000 tcp conditions, open ports, one run", r, f, {
    wallMs: P4_WALL_MS,
    rssKb: P4_RSS_KB,
  });
}

async function scaleTcp(): Promise<BenchRow[]> {
  const f = await floor();
  const limit = await openFileLimit();
  const base = await tcpCount(P4_N, SHORT_RUNS);
  const r = await tcpCount(SCALE_N, SCALE_RUNS);
  const rows = countRows("scale: 10,000 tcp conditions, open ports", r, f, {}, base);
  rows[0] = {
    ...rows[0]!,
    reference: `${rows[0]!.reference}; ulimit -n ${limit ?? "?"}, raised to ${
      2 * SCALE_N + 1024
    } for each tool's run where the hard limit allows`,
  };
  return rows;
}

// --- scale: 1,000 file conditions on one watched directory ---------------------------------

async function scaleFileExisting(): Promise<BenchRow[]> {
  const f = await floor();
  const tcp = await tcpCount(P4_N, SHORT_RUNS);
  const dir = await tempDir("waitcmd-bench-files-");
  try {
    const r = await measureCount(P4_N, SHORT_RUNS, async () => {
      const conds = Array.from({ length: P4_N }, (_, i) => ({
        kind: "file" as const,
        target: `${dir.path}/f${i}.ready`,
      }));
      await Promise.all(conds.map((c) => Deno.writeTextFile(c.target, "ready\n")));
      return { conds, close: () => Promise.resolve() };
    });
    const rows = countRows("scale: 1,000 file conditions, one directory, files there", r, f, {});
    rows[2] = {
      ...rows[2]!,
      figure: `${rows[2]!.figure} (1,000 tcp: ${cpuPer(tcp.ours, tcp.n, f)})`,
      reference: `${rows[2]!.reference}; wait-on waits its 750 ms stability window for files`,
    };
    return rows;
  } finally {
    await dir.remove();
  }
}

/** Writes `files` in bursts of 10, 10 ms apart (about 1 s for 1,000); returns when the last was written. */
async function writeFiles(files: readonly string[]): Promise<number> {
  let lastWrite = 0;
  for (let b = 0; b < files.length; b += 10) {
    for (const f of files.slice(b, b + 10)) await Deno.writeTextFile(f, "ready\n");
    lastWrite = performance.now();
    await new Promise((r) => setTimeout(r, 10));
  }
  return lastWrite;
}

/**
 * waitcmd on 1,000 missing files in one directory; once every condition has
 * made its first attempt (the watch is armed), a writer creates them.
 * Resolves with the run, the moment of the last write and how many
 * conditions were satisfied before `graceMs` after it (the rest are then
 * cancelled with SIGTERM).
 */
async function writerRun(
  extra: readonly string[],
  graceMs: number,
): Promise<{ o: Observed; lastWrite: number; satisfied: number; notices: number }> {
  const dir = await tempDir("waitcmd-bench-files-");
  try {
    const files = Array.from({ length: P4_N }, (_, i) => `${dir.path}/f${i}.ready`);
    const conds = files.map((target) => ({ kind: "file" as const, target }));
    const cmd = withOpenFiles(4096, [
      bundleLauncher,
      "--output",
      "jsonl",
      "--timeout",
      "120s",
      ...extra,
      ...conditionsArgv(conds),
    ]);
    let first = 0;
    let satisfied = 0;
    let notices = 0;
    let armed!: () => void;
    const started = new Promise<void>((r) => (armed = r));
    const run = await observe(cmd, {
      onLine(l, stream) {
        if (stream !== "stdout") return;
        if (l.includes('"event":"attempt"') && l.includes('"attempt":1,')) {
          if (++first === P4_N) armed();
        } else if (l.includes('"event":"satisfied"')) satisfied++;
        else if (l.includes('"event":"notice"')) notices++;
      },
    });
    // Never hang on a run that does not report its first attempts.
    const guard = setTimeout(armed, 30_000);
    await started;
    clearTimeout(guard);
    // Let the watch settle before the first write.
    await new Promise((r) => setTimeout(r, 200));
    const lastWrite = await writeFiles(files);
    const grace = setTimeout(() => run.kill("SIGTERM"), graceMs);
    const o = await run.done;
    clearTimeout(grace);
    return { o, lastWrite, satisfied, notices };
  } finally {
    await dir.remove();
  }
}

const COVERAGE_GRACE_MS = 5000;

async function scaleFileWriter(): Promise<BenchRow[]> {
  const f = await floor();
  progress(`${P4_N} file conditions, files created by a background writer, ${SCALE_RUNS} runs`);
  const lags: number[] = [];
  const runs: Observed[] = [];
  const fallbacks: number[] = [];
  for (let i = 0; i < SCALE_RUNS; i++) {
    const w = await writerRun([], 60_000);
    if (w.o.code !== 0) throw new Error(`run ${i + 1} exited ${w.o.code}: ${w.o.stderrTail}`);
    lags.push(w.o.exitAt - w.lastWrite);
    runs.push(w.o);
    fallbacks.push(w.notices);
  }
  progress(`${P4_N} file conditions, --interval 60s: how many a change event wakes`);
  const covered: number[] = [];
  for (let i = 0; i < SCALE_RUNS; i++) {
    covered.push((await writerRun(["--interval", "60s"], COVERAGE_GRACE_MS)).satisfied);
  }
  const c = summarise(runs);
  return [{
    name: `scale: 1,000 file conditions, files written by a background writer`,
    figure: `last write to exit median ${fmtMs(median(lags))}; ${fmtCpuS(c.cpuSeconds)} CPU-s (${
      cpuPer(c, P4_N, f)
    } per condition); peak RSS ${fmtKb(c.peakRssKb)}`,
    target: "",
    reference: `writer: 1,000 files in 100 bursts over ~1 s once every first attempt was made; ` +
      `default interval 2s; watch fallbacks to polling (notices): median ${
        median(fallbacks)
      } of ${P4_N}; n=${SCALE_RUNS}`,
  }, {
    name: `scale: 1,000 file conditions, woken by a change event`,
    figure: `median ${median(covered)} of ${P4_N} satisfied within ${COVERAGE_GRACE_MS / 1000} s ` +
      `of the last write (min ${Math.min(...covered)}, n=${SCALE_RUNS})`,
    target: "",
    reference: "same writer, --interval 60s so that only change events (Deno.watchFs) can wake a " +
      "condition before the next poll",
  }];
}

// --- pending conditions over time: P5, sustained load, event-driven idle ----------------------

/** The length of the P5 and event-driven idle runs: WAITCMD_BENCH_IDLE_SECONDS, default 30. */
function idleSeconds(): number {
  const s = Number(Deno.env.get("WAITCMD_BENCH_IDLE_SECONDS") ?? "30");
  if (!(s >= 3)) throw new Error("WAITCMD_BENCH_IDLE_SECONDS must be at least 3");
  return s;
}

/** The length of the sustained-load runs: WAITCMD_BENCH_SUSTAINED_SECONDS, default 60. */
function sustainedSeconds(): number {
  const s = Number(Deno.env.get("WAITCMD_BENCH_SUSTAINED_SECONDS") ?? "60");
  if (!(s >= 3)) throw new Error("WAITCMD_BENCH_SUSTAINED_SECONDS must be at least 3");
  return s;
}

/** waitcmd's and each peer's pending run of one job. */
interface PendingResult {
  readonly ours: PendingRun;
  readonly peers: Record<string, PendingRun | string>;
  readonly missing: string;
}

/** Runs waitcmd, then each peer, on the same pending job, one after another (each alone). */
async function pendingAll(
  what: string,
  job: Job,
  extra: readonly Tool[] = [],
): Promise<PendingResult> {
  const { tools: installed, missing } = await peers();
  const tools = [...installed, ...extra];
  progress(`${what}: waitcmd, ${job.timeoutS} s`);
  const ours = await pendingRun(waitcmd, job);
  if (typeof ours === "string") throw new Error(`waitcmd: ${ours}`);
  const got: Record<string, PendingRun | string> = {};
  for (const t of tools) {
    progress(`${what}: ${t.name}, ${job.timeoutS} s`);
    got[t.name] = await pendingRun(t, job);
  }
  return { ours, peers: got, missing };
}

/** A pending run's CPU-s: thousandths below one second (exact with python3, see `observe`). */
function fmtCpuS(seconds: number): string {
  return seconds < 1 ? seconds.toFixed(3) : seconds.toFixed(2);
}

/** Where `observe` takes its totals from, for the rows' references. */
async function totalsMethod(): Promise<string> {
  if (await python3()) return "wait4 (exact)";
  return (await gnuTime()) ? "GNU time (hundredths, cut down)" : "/proc/PID samples";
}

/** `0.14 CPU-s` of a pending run, or the cell's reason. */
function cpuCell(c: Cost): string {
  return `${fmtCpuS(c.cpuSeconds)} CPU-s`;
}

/** `attempts 1,500 (93 µs CPU each)`, when known. */
function fmtAttempts(r: PendingRun): string {
  if (r.attempts === undefined) return "attempts not reported";
  const each = (r.cpuSeconds - r.startCpuSeconds) / r.attempts * 1e6;
  return `${r.attempts.toLocaleString("en")} attempts (${
    each.toFixed(0)
  } µs CPU each after start-up)`;
}

/** `RSS 44.0 MB at 1 s, 45.1 MB at the end, peak 47.2 MB`. */
function fmtRss(r: Observed): string {
  return `RSS ${fmtKb(r.startRssKb)} at 1 s, ${fmtKb(r.endRssKb)} at the end, peak ${
    fmtKb(r.peakRssKb)
  }`;
}

async function p5(): Promise<BenchRow[]> {
  const seconds = idleSeconds();
  const f = await floor();
  const job: Job = {
    conds: closedPorts(10).map((p) => ({ kind: "tcp" as const, target: `127.0.0.1:${p}` })),
    timeoutS: seconds,
    intervalMs: 2000,
  };
  const r = await pendingAll("P5: 10 tcp conditions pending", job, [await bareDeno()]);
  const name = `P5: 10 tcp conditions pending on closed ports, --interval 2s, ${seconds} s`;
  return [{
    name: `${name}: CPU`,
    figure: fmtCpu(r.ours),
    target: `<= ${P5_CPU_S} CPU-s per 30 s${seconds === 30 ? "" : " (judged at 30 s)"}`,
    reference: `${
      peerCells(r.peers, r.missing, (c, name) => name in floorsNow ? fmtCpu(c) : cpuCell(c))
    }; ${fmtFloor(f)}; ${
      fmtAttempts(r.ours)
    }; every tool at a 2 s interval (waitfor --interval, wait4x -i, wait-on -i 2000)`,
    ok: seconds === 30 ? r.ours.cpuSeconds <= P5_CPU_S : undefined,
  }, {
    name: `${name}: RSS`,
    figure: fmtRss(r.ours),
    target: "",
    reference: peerCells(r.peers, r.missing, (c) => `peak ${fmtKb(c.peakRssKb)}`),
  }];
}

/** The figures of one tool's sustained or idle run. */
function pendingFigure(r: PendingRun): string {
  const core = r.cpuSeconds / (r.wallMs / 1000) * 100;
  return `${fmtCpu(r)}, ${core.toFixed(1)}% of a core; ${fmtAttempts(r)}; ${fmtRss(r)}`;
}

/** One row per peer of a pending job, saying what of the job it ran. */
function peerRows(name: string, r: PendingResult, flags: string): BenchRow[] {
  const rows: BenchRow[] = PEERS.filter((p) => p in r.peers).map((p) => {
    const got = r.peers[p]!;
    return {
      name: `${name}: ${p}`,
      figure: typeof got === "string" ? got : pendingFigure(got),
      target: "",
      reference: [typeof got === "string" ? "" : got.covers, flags].filter(Boolean).join("; "),
    };
  });
  if (r.missing) rows.push({ name: `${name}: peers`, figure: r.missing, target: "" });
  return rows;
}

async function sustained(): Promise<BenchRow[]> {
  const seconds = sustainedSeconds();
  const dir = await tempDir("waitcmd-bench-sustained-");
  // Answers 503 to everything: an http condition that stays pending.
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("not yet\n", { status: 503 }),
  );
  try {
    const logs = Array.from({ length: 25 }, (_, i) => `${dir.path}/app-${i}.log`);
    await Promise.all(logs.map((l) => Deno.writeTextFile(l, "starting\nstill starting\n")));
    const conds: Cond[] = [
      ...closedPorts(25).map((p) => ({ kind: "tcp" as const, target: `127.0.0.1:${p}` })),
      ...Array.from({ length: 25 }, (_, i) => ({
        kind: "http" as const,
        target: `http://127.0.0.1:${server.addr.port}/c${i}`,
      })),
      ...Array.from({ length: 25 }, (_, i) => ({
        kind: "file" as const,
        target: `${dir.path}/missing-${i}`,
      })),
      ...logs.map((target) => ({ kind: "log" as const, target })),
    ];
    const job: Job = { conds, timeoutS: seconds, intervalMs: 200 };
    const r = await pendingAll("sustained: 100 pending conditions", job);
    const name = `sustained: 100 pending conditions (25 each tcp, http 503, file, log), ` +
      `--interval 200ms, ${seconds} s`;
    return [
      {
        name: `${name}: waitcmd`,
        figure: pendingFigure(r.ours),
        target: "",
        reference: `totals from ${await totalsMethod()}; the split at 1 s and the RSS from ` +
          "/proc/PID every " +
          "100 ms; attempts from the JSON report",
      },
      ...peerRows(
        name,
        r,
        "waitfor: the same conditions and --interval 200ms; wait4x: tcp and http " +
          "(--expect-status-code 200) in one process each, -i 200ms; wait-on: tcp:, http-get: " +
          "and file: resources, -i 200",
      ),
    ];
  } finally {
    await server.shutdown();
    await dir.remove();
  }
}

async function eventIdle(): Promise<BenchRow[]> {
  const seconds = idleSeconds();
  const dir = await tempDir("waitcmd-bench-events-idle-");
  try {
    const logs = [0, 1, 2].map((i) => `${dir.path}/svc-${i}.log`);
    await Promise.all(logs.map((l) => Deno.writeTextFile(l, "starting\n")));
    const conds: Cond[] = [
      ...[0, 1, 2, 3].map((i) => ({ kind: "file" as const, target: `${dir.path}/ready-${i}` })),
      ...logs.map((target) => ({ kind: "log" as const, target })),
      ...[0, 1, 2].map((i) => ({ kind: "glob" as const, target: `${dir.path}/out-${i}/*.done` })),
    ];
    // 2 s is waitcmd's default interval: its safety poll under the watch.
    const job: Job = { conds, timeoutS: seconds, intervalMs: 2000 };
    const r = await pendingAll("event-driven idle: 10 file/log/glob conditions", job);
    progress(`event-driven idle: waitcmd --interval 10m (the watch alone), ${seconds} s`);
    const watchOnly = await pendingRun(waitcmd, { ...job, intervalMs: 600_000 });
    if (typeof watchOnly === "string") throw new Error(`waitcmd --interval 10m: ${watchOnly}`);
    const name = `event-driven idle: 10 pending conditions (4 file, 3 log, 3 glob), ${seconds} s`;
    const after = (o: Observed) => (o.cpuSeconds - o.startCpuSeconds).toFixed(2);
    return [{
      name: `${name}: waitcmd`,
      figure: `${after(r.ours)} CPU-s between events at the default --interval 2s (safety poll); ` +
        `${after(watchOnly)} CPU-s with --interval 10m (the watch alone); after start-up`,
      target: "",
      reference: `in all ${fmtCpu(r.ours)}; ${fmtAttempts(r.ours)}; ${fmtRss(r.ours)}; ` +
        `--interval 10m: ${fmtCpu(watchOnly)}, ${watchOnly.attempts ?? "?"} attempts`,
    }, ...peerRows(name, r, "every tool polls at 2 s (waitfor --interval 2s, wait-on -i 2000)")];
  } finally {
    await dir.remove();
  }
}

/** The entries of this module. */
export const entries: BenchEntry[] = [
  { name: "cost: Deno floor (waitcmd --version)", run: floorRows },
  { name: "P4: 1,000 tcp conditions in one run vs peers", run: p4 },
  { name: "scale: 10,000 tcp conditions vs peers", run: scaleTcp },
  { name: "scale: 1,000 file conditions, one directory, vs peers", run: scaleFileExisting },
  { name: "scale: 1,000 file conditions, background writer", run: scaleFileWriter },
  { name: "P5: 10 pending tcp conditions at 2s vs peers", run: p5 },
  { name: "sustained: 100 pending conditions at 200ms vs peers", run: sustained },
  { name: "event-driven idle: 10 pending file/log/glob conditions vs peers", run: eventIdle },
];

if (import.meta.main) {
  const { renderTable } = await import("../bench.ts");
  const rows: BenchRow[] = [];
  for (const e of entries) rows.push(...await e.run());
  console.log(renderTable(rows));
}
