/**
 * The cost rows of pending conditions over time: P5, sustained load and
 * event-driven idle, side by side with the peers.
 *
 * @module
 */

import { closedPorts } from "./_listeners.ts";
import { gnuTime, python3 } from "./_resources.ts";
import { tempDir } from "./_run.ts";
import { fmtKb, progress } from "./_stats.ts";
import type { BenchRow } from "./_types.ts";
import {
  type Cost,
  fmtCpu,
  fmtCpuS,
  type Observed,
  peerCells,
  type PendingRun,
  pendingRun,
} from "./_cost_measure.ts";
import {
  bareDeno,
  type Cond,
  type Job,
  P5_CPU_S,
  PEERS,
  peers,
  type Tool,
  waitcmd,
} from "./_cost_tools.ts";
import { floor, floorsNow, fmtFloor } from "./_cost_measure.ts";

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

export async function p5(): Promise<BenchRow[]> {
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

export async function sustained(): Promise<BenchRow[]> {
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

export async function eventIdle(): Promise<BenchRow[]> {
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
