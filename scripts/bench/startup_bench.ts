/**
 * Where each kind's time to a verdict goes (docs/performance.md, "Where the
 * time to a verdict goes"): the release bundle runs with
 * `WAITCMD_TRACE_STARTUP=1` (engine/trace.ts) against a ready server, and
 * each run's points, on the wall clock that the bench and every thread of
 * waitcmd share, split its time from spawn to exit into:
 *
 * - process start: spawn to the main isolate's time origin (exec, Deno's own
 *   start);
 * - main graph: to the first line of our code (loading, compiling and
 *   evaluating the static graph of the bundle's main.js);
 * - to the plan: the kinds' declarations, parsing, validation (which starts
 *   an isolated kind's worker and waits for its answer), expansion;
 * - plan to the probe: the session's set-up, and for an isolated kind its
 *   probe module's import in the worker;
 * - the worker's start (`new Worker` on the main thread, then the worker's
 *   runtime to its first line), the rest of its static graph (its `node:`
 *   modules, which start Deno's Node compatibility layer there), its kind's
 *   declaration (the registry's list and the kind's module), its probe module
 *   (loading and compiling the chunk, and the library's own set-up at its
 *   top level), the probes made;
 * - answer: the first attempt (connect, handshake, answer);
 * - the end: the verdict printed, the process gone.
 *
 * Each figure is the median of the runs (WAITCMD_BENCH_RUNS); the Deno floor
 * (an empty program run as the bundle's launcher runs main.js) is measured in
 * the same rounds. A kind whose server cannot run here is left out, saying why.
 *
 * Run alone: `scripts/deno run -A scripts/bench/startup_bench.ts [KIND...]`,
 * or `deno task bench startup`.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import { bundleLauncher, denoBinary, DRIVER_GOAL_MS, ensureBundle, FLOOR_RATIO } from "./_forms.ts";
import { killQuietly, tempDir } from "./_run.ts";
import { benchRuns, fmtMs, median, progress } from "./_stats.ts";
import { LAUNCHER_FLAGS } from "../launcher.ts";
import { makePostgres } from "../../conditions/postgres/_service.ts";
import { makeMariadb } from "../../conditions/mysql/_service.ts";
import { makeRedis } from "../../conditions/redis/_service.ts";
import { prepareMongo } from "../../tests/services/mongo.ts";
import { startGrpcServer } from "../../conditions/grpc/_service.ts";
import { prepareKafka } from "../../conditions/kafka/_service.ts";

/** A kind measured: its command line, and how its server is started and stopped. */
interface Subject {
  readonly kind: string;
  /** Whether the kind runs a library (a driver): its goal is then a time, else a ratio to the floor. */
  readonly driver: boolean;
  /** Starts the server; resolves with waitcmd's arguments and the server's stop. */
  start(): Promise<{ args: string[]; stop(): Promise<unknown> }>;
}

const SUBJECTS: readonly Subject[] = [
  {
    kind: "tcp",
    driver: false,
    start() {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const accepting = (async () => {
        for await (const c of l) c.close();
      })().catch(() => {});
      return Promise.resolve({
        args: ["tcp", `127.0.0.1:${(l.addr as Deno.NetAddr).port}`],
        stop: () => (l.close(), accepting),
      });
    },
  },
  {
    kind: "file",
    driver: false,
    async start() {
      const dir = await tempDir("waitcmd-bench-trace-");
      await Deno.writeTextFile(`${dir.path}/ready`, "ok\n");
      return { args: ["file", `${dir.path}/ready`], stop: () => dir.remove() };
    },
  },
  {
    kind: "postgres",
    driver: true,
    async start() {
      const pg = await makePostgres();
      return { args: ["postgres", pg.url()], stop: () => pg.remove() };
    },
  },
  {
    kind: "mysql",
    driver: true,
    async start() {
      const my = await makeMariadb();
      return { args: ["mysql", my.url()], stop: () => my.remove() };
    },
  },
  {
    kind: "redis",
    driver: true,
    async start() {
      const rd = await makeRedis();
      return { args: ["redis", rd.url()], stop: () => rd.remove() };
    },
  },
  {
    kind: "mongodb",
    driver: true,
    async start() {
      const m = await prepareMongo();
      await m.start();
      return { args: ["mongodb", m.uri], stop: () => m.stop() };
    },
  },
  {
    kind: "grpc",
    driver: true,
    async start() {
      const g = await startGrpcServer();
      return { args: ["grpc", g.h2c], stop: () => g.stop() };
    },
  },
  {
    kind: "kafka",
    driver: true,
    async start() {
      const k = await prepareKafka();
      await k.start();
      return { args: ["kafka", k.bootstrap], stop: () => k.stop() };
    },
  },
];

/** The spans of a run, each between two points (`thread:point`, or `spawn`/`exited`). */
const SPANS: readonly { name: string; from: string; to: string }[] = [
  { name: "process start", from: "spawn", to: "main:origin" },
  { name: "main graph", from: "main:origin", to: "main:first" },
  { name: "declarations", from: "main:first", to: "main:registry" },
  { name: "parse", from: "main:registry", to: "main:parsed" },
  { name: "validate", from: "main:parsed", to: "main:validated" },
  { name: "expand", from: "main:validated", to: "main:plan" },
  { name: "new Worker (main blocked)", from: "main:worker-new", to: "main:worker-made" },
  { name: "worker graph", from: "worker:origin", to: "worker:first" },
  { name: "worker's node: modules", from: "worker:first", to: "worker:serving" },
  { name: "kind declaration (worker)", from: "worker:serving", to: "worker:kind-loaded" },
  {
    name: "probe chunk + library set-up",
    from: "worker:kind-loaded",
    to: "worker:probe-imported",
  },
  { name: "probes made", from: "worker:probe-imported", to: "main:prepared" },
  { name: "plan to probes made", from: "main:plan", to: "main:probes" },
  { name: "renderers", from: "main:probes", to: "main:renderers" },
  { name: "runner to first attempt", from: "main:renderers", to: "attempt-start" },
  { name: "parse to first attempt", from: "main:parsed", to: "attempt-start" },
  { name: "answer (connect, handshake)", from: "attempt-start", to: "attempt-end" },
  { name: "verdict to run's end", from: "attempt-end", to: "main:run-end" },
  { name: "run's end to exit()", from: "main:run-end", to: "main:exit" },
  { name: "exit() to reaped", from: "main:exit", to: "exited" },
  { name: "total", from: "spawn", to: "exited" },
];

/** Wall-clock milliseconds, to the same clock the trace's lines use. */
function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** One traced run: each point's time after spawn (ms). */
async function tracedRun(cmd: readonly string[]): Promise<Map<string, number>> {
  const spawn = wallNow();
  const child = new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    env: { WAITCMD_TRACE_STARTUP: "1", NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => killQuietly(child), 60_000);
  const out = await child.output();
  const exited = wallNow();
  clearTimeout(timer);
  const text = new TextDecoder().decode(out.stderr);
  if (out.code !== 0) throw new Error(`${cmd.join(" ")} exited ${out.code}: ${text.slice(-300)}`);
  const at = new Map<string, number>([["spawn", 0], ["exited", exited - spawn]]);
  for (const line of text.split("\n")) {
    const [tag, thread, point, ms] = line.split(" ");
    if (tag !== "waitcmd-trace" || ms === undefined) continue;
    at.set(`${thread}:${point}`, Number(ms) - spawn);
  }
  // The first attempt, in whichever thread probes.
  for (const p of ["attempt-start", "attempt-end"]) {
    const t = at.get(`worker:${p}`) ?? at.get(`main:${p}`);
    if (t !== undefined) at.set(p, t);
  }
  return at;
}

/** One run of the Deno floor: an empty program, run as the launcher runs main.js (ms). */
async function floorRun(deno: string, file: string): Promise<number> {
  const t0 = performance.now();
  const s = await new Deno.Command(deno, {
    args: ["run", "--allow-all", ...LAUNCHER_FLAGS, file],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  if (!s.success) throw new Error(`the Deno floor run exited ${s.code}`);
  return performance.now() - t0;
}

/** The kinds asked for (`WAITCMD_BENCH_KINDS`, comma-separated), else every one. */
function selected(): readonly Subject[] {
  const want = Deno.env.get("WAITCMD_BENCH_KINDS")?.split(",").filter((k) => k !== "");
  return want?.length ? SUBJECTS.filter((s) => want.includes(s.kind)) : SUBJECTS;
}

async function breakdown(): Promise<BenchRow[]> {
  await ensureBundle();
  const runs = benchRuns();
  const deno = await denoBinary();
  const dir = await tempDir("waitcmd-bench-floor-");
  const floorFile = `${dir.path}/floor.js`;
  await Deno.writeTextFile(floorFile, "");
  const rows: BenchRow[] = [];
  const started: { kind: string; driver: boolean; args: string[]; stop(): Promise<unknown> }[] = [];
  try {
    for (const s of selected()) {
      progress(`starting the ${s.kind} server`);
      try {
        started.push({ kind: s.kind, driver: s.driver, ...await s.start() });
      } catch (e) {
        rows.push({
          name: `start-up breakdown, ${s.kind}`,
          figure: `left out: its server did not start (${e instanceof Error ? e.message : e})`,
          target: "",
        });
      }
    }
    const samples = new Map<string, Map<string, number>[]>(started.map((s) => [s.kind, []]));
    const other = baseline();
    const others = new Map<string, Map<string, number>[]>(started.map((s) => [s.kind, []]));
    const floor: number[] = [];
    progress(`${runs} rounds of ${started.map((s) => s.kind).join(", ")} and the Deno floor`);
    // One unmeasured round warms the caches (Deno's code cache included).
    for (let round = 0; round <= runs; round++) {
      const f = await floorRun(deno, floorFile);
      if (round > 0) floor.push(f);
      for (const s of started) {
        const args = ["--timeout", "30s", ...s.args];
        // With a baseline, the two in turn, the first changing every round (paired A/B).
        const order = other === undefined
          ? [[bundleLauncher, samples]] as const
          : round % 2 === 0
          ? [[bundleLauncher, samples], [other, others]] as const
          : [[other, others], [bundleLauncher, samples]] as const;
        for (const [launcher, into] of order) {
          const at = await tracedRun([launcher, ...args]);
          if (round > 0) into.get(s.kind)!.push(at);
        }
      }
    }
    const floorMs = median(floor);
    rows.push({ name: "start-up breakdown: Deno floor", figure: fmtMs(floorMs), target: "" });
    for (const s of started) {
      rows.push(breakdownRow(s, samples.get(s.kind)!, floorMs));
      if (other !== undefined) {
        rows.push(pairedRow(s.kind, samples.get(s.kind)!, others.get(s.kind)!));
      }
    }
    return rows;
  } finally {
    await Promise.all(started.map((s) => s.stop().catch(() => {})));
    await dir.remove();
  }
}

/**
 * The row of one kind: each span's median over the runs, in order, and its goal (docs/
 * performance.md): a kind with a driver within {@link DRIVER_GOAL_MS}, the others within
 * {@link FLOOR_RATIO} times the Deno floor of the same rounds.
 */
function breakdownRow(
  subject: { readonly kind: string; readonly driver: boolean },
  runs: readonly Map<string, number>[],
  floorMs: number,
): BenchRow {
  const parts: string[] = [];
  for (const span of SPANS) {
    const xs = runs.flatMap((at) => {
      const a = at.get(span.from);
      const b = at.get(span.to);
      return a === undefined || b === undefined ? [] : [b - a];
    });
    if (xs.length > 0) parts.push(`${span.name} ${fmtMs(median(xs))}`);
  }
  const total = median(runs.map((at) => at.get("exited")!));
  const ratio = total / floorMs;
  return {
    name: `start-up breakdown, ${subject.kind} (bundle, ready server)`,
    figure: `total ${fmtMs(total)}: ${parts.join("; ")}`,
    target: subject.driver ? `<= ${DRIVER_GOAL_MS} ms` : `<= ${FLOOR_RATIO}x floor`,
    reference: `${ratio.toFixed(2)}x the Deno floor; median of ${runs.length} runs`,
    ok: subject.driver ? total <= DRIVER_GOAL_MS : ratio <= FLOOR_RATIO,
  };
}

/**
 * The launcher of another bundle to pair with this one (`WAITCMD_BENCH_BASELINE_BUNDLE`, a
 * copy of `dist/bundle/` built from other sources): a lever's effect, A/B in the same rounds.
 */
function baseline(): string | undefined {
  const dir = Deno.env.get("WAITCMD_BENCH_BASELINE_BUNDLE");
  return dir ? `${dir.replace(/\/$/, "")}/waitcmd` : undefined;
}

/**
 * This bundle against the baseline, run by run: the median of the pairs' differences (this
 * minus the baseline) of the total and of each span, and the median ratio of the totals.
 */
function pairedRow(
  kind: string,
  mine: readonly Map<string, number>[],
  theirs: readonly Map<string, number>[],
): BenchRow {
  const pairs = Math.min(mine.length, theirs.length);
  const diff = (from: string, to: string) => {
    const xs: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const [a, b] = [mine[i]!, theirs[i]!];
      const [a0, a1, b0, b1] = [a.get(from), a.get(to), b.get(from), b.get(to)];
      if ([a0, a1, b0, b1].every((x) => x !== undefined)) xs.push(a1! - a0! - (b1! - b0!));
    }
    return xs;
  };
  const parts = SPANS.flatMap((span) => {
    const xs = diff(span.from, span.to);
    return xs.length === 0 ? [] : [`${span.name} ${signed(median(xs))}`];
  });
  const ratio = median(
    Array.from({ length: pairs }, (_, i) => mine[i]!.get("exited")! / theirs[i]!.get("exited")!),
  );
  return {
    name: `start-up A/B, ${kind}: this bundle minus the baseline, median of ${pairs} pairs`,
    figure: `total ${ratio.toFixed(3)}x; ${parts.join("; ")}`,
    target: "",
  };
}

/** `+1.2 ms`, `-0.4 ms`. */
function signed(ms: number): string {
  return `${ms >= 0 ? "+" : "-"}${Math.abs(ms).toFixed(1)} ms`;
}

/** The bench entries of this module. */
export const entries: BenchEntry[] = [
  { name: "start-up breakdown per kind (traced bundle)", run: breakdown },
];

if (import.meta.main) {
  for (const e of entries) {
    for (const r of await e.run()) {
      console.log(`${r.name}: ${r.figure}`);
      if (r.reference) console.log(`  ${r.reference}`);
    }
  }
}
