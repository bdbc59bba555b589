/**
 * The forms of waitcmd a bench compares: from the sources and from the release
 * bundle (built once per run), their peak RSS and CPU side by side, the
 * start-up row that puts them beside a peer, the pinned Deno, and a run
 * started and seen waiting.
 *
 * Benchmarks measure; nothing here asserts a timing.
 *
 * @module
 */

import type { BenchRow } from "./_types.ts";
import { bundle } from "../bundle.ts";
import { BUNDLE_DIR, bundleState, LAUNCHER } from "../bundle_manifest.ts";
import { python3, readRusage, runWithResources, underWait4 } from "./_resources.ts";
import { runTimed } from "./_run.ts";
import { fmtKb, fmtMs, fmtSample, median, progress } from "./_stats.ts";

/** Directory of the repository (scripts/bench/_forms.ts -> repo root). */
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
 * The start-up goals (docs/performance.md): a kind that loads no library (tcp, file) to a verdict
 * within this many times the Deno floor, from the bundle.
 */
export const FLOOR_RATIO = 1.3;

/** The start-up goals: a kind with a driver (a library) to a verdict within this, from the bundle. */
export const DRIVER_GOAL_MS = 100;

/**
 * One start-up row: the time to verdict of `name` from the bundle and from
 * the sources (interleaved runs; the bundle's time against the sources' is
 * the median of the rounds' ratios, which load drifting over the run moves
 * least), their CPU and peak RSS, and the peer's time when there is one (a
 * reference). The targets: the bundle (what ships) within `goalMs` when given,
 * and no more time, CPU or memory from the bundle than from the sources.
 */
export function sideBySideRow(opts: {
  readonly name: string;
  readonly source: readonly number[];
  readonly bundle: readonly number[];
  readonly usage: { readonly bundle: Usage; readonly source: Usage };
  readonly goalMs?: number;
  readonly peer?: { readonly name: string; readonly times: readonly number[] };
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
  const targets = [
    ...(opts.goalMs === undefined ? [] : [`bundle <= ${opts.goalMs} ms`]),
    "bundle <= source in time, CPU and RSS",
  ];
  const refs = [
    `bundle ${fmtSample(opts.bundle)}, CPU ${fmtMs(cpuB)}, peak RSS ${fmtKb(rssB)}`,
    `source ${fmtSample(opts.source)}, CPU ${fmtMs(cpuS)}, peak RSS ${fmtKb(rssS)}`,
    `CPU and RSS: median of ${opts.usage.bundle.cpuMs.length} runs each`,
  ];
  let peerText = "";
  if (opts.peer) {
    const theirs = median(opts.peer.times);
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
    ok: bun <= (opts.goalMs ?? Infinity) && time <= 1 && cpuB <= cpuS && rssB <= rssS,
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
