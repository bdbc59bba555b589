/**
 * The conditions a cost row runs, and how each tool (waitcmd from the bundle
 * and the sources, a baseline checkout, the peers, Deno alone) states them.
 *
 * @module
 */

import {
  bundleLauncher,
  denoBinary,
  ensureBundle,
  launcherNpmFlags,
  repoRoot,
  waitcmdScript,
} from "./_forms.ts";
import { peerTools } from "./_tools.ts";

/** P4's count, and the count the per-condition figures are compared at. */
export const P4_N = 1000;
/** The scale run's count of tcp conditions. */
export const SCALE_N = 10_000;
/** Runs of each short measurement per tool (interleaved). */
export const SHORT_RUNS = 9;
/** Runs of the 10,000-condition measurement per tool (wait-on takes about 14 s a run). */
export const SCALE_RUNS = 3;
/** Runs of the Deno floor (`waitcmd --version`). */
export const FLOOR_RUNS = 10;
/** P4 targets. */
export const P4_WALL_MS = 200;
export const P4_RSS_KB = 50 * 1024;
/** P5 target, CPU-s per 30 s. */
export const P5_CPU_S = 0.06;
/** What a log condition waits for, never written. */
const NEEDLE = "READY-NEVER-WRITTEN";
/** The peers, in the order of their cells. */
export const PEERS = [
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
export interface Cond {
  readonly kind: Kind;
  /** host:port, URL, path or pattern. */
  readonly target: string;
}

/** One measured run: the conditions and the run's flags. */
export interface Job {
  readonly conds: readonly Cond[];
  readonly timeoutS: number;
  /** The interval, or undefined for the tool's default. */
  readonly intervalMs?: number;
}

/** A tool that can do (a part of) a job. */
export interface Tool {
  readonly name: string;
  /** The commands (run side by side) doing the job, or why the tool cannot do any of it. */
  commands(job: Job): string[][] | string;
  /** What of the job the commands cover, when not all of it (for the cells). */
  covers?(job: Job): string;
}

/** `kind target [--contains NEEDLE] -- kind target ...`: waitcmd's grammar, and waitfor's. */
export function conditionsArgv(conds: readonly Cond[]): string[] {
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
export const waitcmd: Tool = { name: "waitcmd", commands: jsonCommand(bundleLauncher) };

/** The other forms of waitcmd: its sources, and the baseline checkout's when one is named. */
function ourOtherForms(): Tool[] {
  const tools: Tool[] = [{ name: "waitcmd from sources", commands: jsonCommand(waitcmdScript) }];
  const baseline = baselineScript();
  if (baseline) tools.push({ name: "baseline", commands: jsonCommand(baseline) });
  return tools;
}

/** WAITCMD_BENCH_BASELINE's scripts/waitcmd, or undefined when it is unset. */
export function baselineScript(): string | undefined {
  const dir = Deno.env.get("WAITCMD_BENCH_BASELINE");
  return dir ? `${dir.replace(/\/$/, "")}/scripts/waitcmd` : undefined;
}

/** The other forms of waitcmd and the peers as tools, for those install.sh provided. */
export async function peers(): Promise<{ tools: Tool[]; missing: string }> {
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
export async function bareDeno(): Promise<Tool> {
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
export function reportOf(stdout: string): { status: string; attempts: number } | undefined {
  try {
    const r = JSON.parse(stdout) as { status: string; conditions: { attempts: number }[] };
    return { status: r.status, attempts: r.conditions.reduce((n, c) => n + c.attempts, 0) };
  } catch {
    return undefined;
  }
}
