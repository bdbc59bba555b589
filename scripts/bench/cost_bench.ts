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

import { bundleLauncher } from "./_forms.ts";
import { listenMany, openFileLimit, withOpenFiles } from "./_listeners.ts";
import { tempDir } from "./_run.ts";
import { fmtKb, fmtMs, median, progress } from "./_stats.ts";
import type { BenchEntry, BenchRow } from "./_types.ts";
import {
  type Cost,
  floor,
  floors,
  floorsNow,
  fmtCpuS,
  fmtFloor,
  fmtFloorFigure,
  observe,
  type Observed,
  peerCells,
  shortRun,
  summarise,
} from "./_cost_measure.ts";
import { eventIdle, p5, sustained } from "./_cost_pending.ts";
import {
  bareDeno,
  type Cond,
  conditionsArgv,
  FLOOR_RUNS,
  type Job,
  P4_N,
  P4_RSS_KB,
  P4_WALL_MS,
  peers,
  SCALE_N,
  SCALE_RUNS,
  SHORT_RUNS,
  type Tool,
  waitcmd,
} from "./_cost_tools.ts";

// --- the Deno floor -------------------------------------------------------------------------

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
