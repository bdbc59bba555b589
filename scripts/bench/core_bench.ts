/**
 * Core performance entries: time to verdict against the Deno floor
 * and wait-on, start-up weight, and the parse + JSON report overhead. What
 * many conditions and pending conditions cost (scale, idle) is in
 * cost_bench.ts.
 *
 * Run alone: `scripts/deno run -A scripts/bench/core_bench.ts`, or through the
 * suite: `deno task bench core`. Environment:
 * - WAITCMD_BENCH_RUNS: repetitions of the timed runs (default 25),
 * - WAITCMD_BENCH_TOOLS: where comparison tools are installed
 *   (default ~/.cache/waitcmd/bench-tools),
 * - WAITCMD_BENCH_BIN: a compiled waitcmd binary to time beside the source run.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import {
  BenchFailure,
  bothForms,
  denoBinary,
  denoScript,
  ensureBundle,
  FLOOR_RATIO,
  launcherNpmFlags,
  repoRoot,
  rssRuns,
  sideBySideRow,
  usageBothForms,
  waitcmdScript,
} from "./_forms.ts";
import { listenMany } from "./_listeners.ts";
import { interleave, runTimed, tempDir } from "./_run.ts";
import { benchRuns, fmtMs, fmtSample, median, percentile, progress } from "./_stats.ts";
import { type NpmTool, npmTool } from "./_tools.ts";

/** The wait-on release compared against (npm, installed by the bench itself). */
export const WAIT_ON_VERSION = "9.5.1";

// --- 1. time to verdict ---------------------------------------------------------

async function timeToVerdict(): Promise<BenchRow[]> {
  const runs = benchRuns();
  const dir = await tempDir("waitcmd-bench-verdict-");
  const server = listenMany(1);
  try {
    const floorFile = `${dir.path}/floor.ts`;
    await Deno.writeTextFile(floorFile, "Deno.exit(0);\n");
    const existing = `${dir.path}/ready.txt`;
    await Deno.writeTextFile(existing, "ready\n");
    const target = `127.0.0.1:${server.ports[0]}`;

    let waitOn: NpmTool | undefined;
    let waitOnError = "";
    try {
      waitOn = await npmTool("wait-on", WAIT_ON_VERSION);
    } catch (e) {
      waitOnError = e instanceof Error ? e.message : String(e);
    }

    await ensureBundle();
    const commands: Record<string, string[]> = {
      floor: [denoScript, "run", floorFile],
      "bare floor": [await denoBinary(), "run", floorFile],
      ...bothForms("tcp", ["--timeout", "10s", "tcp", target]),
      ...bothForms("file", ["--timeout", "10s", "file", existing]),
    };
    // A compiled binary, when one exists (scripts/compile.ts needs a denort these machines lack).
    const bin = Deno.env.get("WAITCMD_BENCH_BIN");
    if (bin) {
      commands["binary tcp"] = [bin, "--timeout", "10s", "tcp", target];
      commands["binary file"] = [bin, "--timeout", "10s", "file", existing];
    }
    if (waitOn) {
      commands["wait-on tcp"] = [waitOn.bin, "-t", "10000", `tcp:${target}`];
      commands["wait-on file"] = [waitOn.bin, "-t", "10000", `file:${existing}`];
    }
    progress(
      `time to verdict: ${Object.keys(commands).join(", ")}, ${runs} runs each, interleaved`,
    );
    const t = await interleave(commands, runs, { cwd: repoRoot });
    const floor = median(t.floor!);

    const rows: BenchRow[] = [{
      name: "Deno floor: scripts/deno run of a one-line program",
      figure: fmtSample(t.floor!),
      target: "",
      reference: `the reference of the time-to-verdict rows, measured in the same rounds; ` +
        `the Deno binary without the scripts/deno wrapper: ${fmtSample(t["bare floor"]!)}`,
    }];
    const rowsFor = [
      ["tcp (bundle)", "tcp to an open loopback port, from the bundle"],
      ["tcp", "tcp to an open loopback port, from the sources"],
      ["file (bundle)", "file that exists, from the bundle"],
      ["file", "file that exists, from the sources"],
    ];
    if (bin) rowsFor.push(["binary tcp", `tcp, ${bin}`], ["binary file", `file, ${bin}`]);
    for (const [key, what] of rowsFor) {
      const m = median(t[key!]!);
      const ratio = m / floor;
      rows.push({
        name: `time to verdict: ${what}`,
        figure: fmtSample(t[key!]!),
        target: `<= ${FLOOR_RATIO}x floor`,
        reference: `${ratio.toFixed(2)}x floor (${fmtMs(floor)}); ${
          (m / median(t["bare floor"]!)).toFixed(2)
        }x the bare binary`,
        ok: ratio <= FLOOR_RATIO,
      });
    }
    progress(`start-up: peak RSS of tcp and file, ${rssRuns()} runs each form`);
    for (const kind of ["tcp", "file"]) {
      const args = kind === "tcp"
        ? ["--timeout", "10s", "tcp", target]
        : ["--timeout", "10s", "file", existing];
      rows.push(sideBySideRow({
        name: `start-up, ${
          kind === "tcp" ? "tcp to an open port" : "file that exists"
        }: bundle vs sources`,
        bundle: t[`${kind} (bundle)`]!,
        source: t[kind]!,
        usage: await usageBothForms(args, rssRuns()),
        extra: `Deno floor ${fmtMs(floor)}`,
      }));
    }
    for (const [key, what] of [["tcp (bundle)", "tcp"], ["file (bundle)", "file"]]) {
      const name = `time to verdict vs wait-on: ${what}`;
      if (!waitOn) {
        rows.push({
          name,
          figure: `wait-on could not be installed: ${waitOnError}`,
          target: "faster than wait-on",
          ok: false,
        });
        continue;
      }
      const mine = median(t[key!]!);
      const theirs = median(t[`wait-on ${what}`]!);
      rows.push({
        name,
        figure: `waitcmd ${fmtMs(mine)} vs wait-on ${fmtMs(theirs)} (${
          (theirs / mine).toFixed(1)
        }x faster)`,
        target: "faster than wait-on",
        reference: `waitcmd from the bundle; wait-on ${waitOn.version} (node ${waitOn.node}): ${
          fmtSample(t[`wait-on ${what}`]!)
        }`,
        ok: mine < theirs,
      });
    }
    return rows;
  } finally {
    await server.close();
    await dir.remove();
  }
}

// --- 2. start-up weight -------------------------------------------------------------

/** The heavy npm packages `waitcmd tcp` must never load, by package name. */
const HEAVY: readonly { label: string; matches(pkg: string): boolean }[] = [
  { label: "AWS SDK", matches: (p) => p.startsWith("@aws-sdk/") || p.startsWith("@smithy/") },
  { label: "Kubernetes client", matches: (p) => p === "@kubernetes/client-node" },
  { label: "ssh2", matches: (p) => p === "ssh2" },
  { label: "dockerode", matches: (p) => p === "dockerode" || p === "docker-modem" },
];

export function heavyIn(pkgs: Iterable<string>): string[] {
  const found = new Set<string>();
  for (const p of pkgs) for (const h of HEAVY) if (h.matches(p)) found.add(`${h.label} (${p})`);
  return [...found].sort();
}

/** `dockerode@5.0.1` / `@aws-sdk/core@3.1.0` -> name without version. */
function pkgName(nv: string): string {
  const at = nv.indexOf("@", 1);
  return at < 0 ? nv : nv.slice(0, at);
}

interface InfoModule {
  specifier: string;
  kind?: string;
  npmPackage?: string;
  size?: number;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}

/**
 * Walks `deno info --json main.ts` from the root along static code imports
 * only (dynamic `import()` and type-only imports are not loaded at start-up)
 * and returns the local modules and npm packages (with their dependencies)
 * that start-up loads.
 */
async function staticGraph(): Promise<{ local: number; bytes: number; npm: Set<string> }> {
  const r = await runTimed([denoScript, "info", "--json", "main.ts"], {
    cwd: repoRoot,
    capture: true,
  });
  if (r.code !== 0) throw new Error(`deno info failed: ${r.stderr.trim().slice(-300)}`);
  const info = JSON.parse(r.stdout) as {
    roots: string[];
    modules: InfoModule[];
    redirects: Record<string, string>;
    npmPackages?: Record<string, { name: string; dependencies?: string[] }>;
  };
  const bySpec = new Map(info.modules.map((m) => [m.specifier, m]));
  const resolve = (s: string) => info.redirects[s] ?? s;
  const seen = new Set<string>();
  const npmRoots = new Set<string>();
  let local = 0;
  let bytes = 0;
  const stack = info.roots.map(resolve);
  while (stack.length > 0) {
    const spec = stack.pop()!;
    if (seen.has(spec)) continue;
    seen.add(spec);
    const m = bySpec.get(spec);
    if (!m) continue;
    if (m.kind === "npm" && m.npmPackage) {
      npmRoots.add(m.npmPackage);
      continue;
    }
    if (spec.startsWith("file:")) {
      local++;
      bytes += m.size ?? 0;
    }
    for (const d of m.dependencies ?? []) {
      if (d.code && !d.isDynamic) stack.push(resolve(d.code.specifier));
    }
  }
  // An npm package loads its dependencies too.
  const npm = new Set<string>();
  const todo = [...npmRoots];
  while (todo.length > 0) {
    const id = todo.pop()!;
    if (npm.has(id)) continue;
    npm.add(id);
    for (const dep of info.npmPackages?.[id]?.dependencies ?? []) todo.push(dep);
  }
  return { local, bytes, npm };
}

/** npm packages whose module files a run touched, from Deno's debug log (`DENO_LOG=debug`). */
export function npmPackagesInLog(log: string): Set<string> {
  const pkgs = new Set<string>();
  const re = /(?:registry\.npmjs\.org|node_modules)\/((?:@[\w.-]+\/)?[\w.-]+)\/(?:\d[\w.+-]*\/)?/g;
  for (const m of log.matchAll(re)) {
    // registry.npmjs.org/<name>/<version>/... is a package's files; <name>/registry.json is only metadata.
    if (m[0].includes("registry.npmjs.org") && !/\/\d[\w.+-]*\/$/.test(m[0])) continue;
    pkgs.add(m[1]!);
  }
  return pkgs;
}

async function startupWeight(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const violations: string[] = [];
  const target = "no AWS SDK, Kubernetes client, ssh2, dockerode";

  progress("start-up weight: static module graph (deno info --json main.ts)");
  const g = await staticGraph();
  const heavyStatic = heavyIn([...g.npm].map(pkgName));
  rows.push({
    name: "start-up weight: static graph of main.ts",
    figure: `${g.local} local modules (${
      (g.bytes / 1024).toFixed(0)
    } KiB), ${g.npm.size} npm packages${
      g.npm.size > 0 ? ": " + [...g.npm].map(pkgName).join(", ") : ""
    }`,
    target,
    reference: "deno info --json; static imports only (heavy SDKs must be dynamic imports)",
    ok: heavyStatic.length === 0,
  });
  if (heavyStatic.length > 0) violations.push(`statically imported: ${heavyStatic.join(", ")}`);

  progress("start-up weight: modules loaded by `waitcmd tcp` (DENO_LOG=debug trace)");
  const server = listenMany(1);
  const dir = await tempDir("waitcmd-bench-weight-");
  try {
    const env = { DENO_LOG: "debug" };
    const run = await runTimed(
      [waitcmdScript, "--timeout", "10s", "tcp", `127.0.0.1:${server.ports[0]}`],
      { env, capture: true },
    );
    if (run.code !== 0) {
      throw new Error(`waitcmd tcp exited ${run.code}: ${run.stderr.slice(-300)}`);
    }
    // Positive control: the same trace must see a package that is loaded.
    const control = `${dir.path}/control.ts`;
    await Deno.writeTextFile(control, 'await import("jsonpath-plus");\n');
    // Resolved as the launcher resolves npm packages, so the trace has the same form.
    const npm = await launcherNpmFlags();
    const ctl = await runTimed(
      [denoScript, "run", "-A", ...npm, "--config", "deno.json", control],
      {
        env,
        capture: true,
        cwd: repoRoot,
      },
    );
    const seen = npmPackagesInLog(run.stderr);
    const controlSeen = npmPackagesInLog(ctl.stderr).has("jsonpath-plus");
    const heavyRun = heavyIn(seen);
    rows.push({
      name: "start-up weight: modules loaded by waitcmd tcp",
      figure: seen.size === 0
        ? "no npm package loaded"
        : `npm packages loaded: ${[...seen].join(", ")}`,
      target,
      reference: `DENO_LOG=debug trace of scripts/waitcmd tcp; control (import of jsonpath-plus) ${
        controlSeen ? "detected" : "NOT detected"
      }`,
      ok: heavyRun.length === 0 && controlSeen,
    });
    if (heavyRun.length > 0) violations.push(`loaded by waitcmd tcp: ${heavyRun.join(", ")}`);
    if (!controlSeen) {
      violations.push(
        "the module trace did not detect a known npm import; the check proves nothing",
      );
    }
  } finally {
    await server.close();
    await dir.remove();
  }

  const runs = benchRuns();
  progress(`start-up weight: time to --help and --version, ${runs} runs each, interleaved`);
  const floorDir = await tempDir("waitcmd-bench-help-");
  try {
    const floorFile = `${floorDir.path}/floor.ts`;
    await Deno.writeTextFile(floorFile, "Deno.exit(0);\n");
    const t = await interleave(
      {
        floor: [denoScript, "run", floorFile],
        help: [waitcmdScript, "--help"],
        version: [waitcmdScript, "--version"],
      },
      runs,
      { cwd: repoRoot },
    );
    const floor = median(t.floor!);
    for (const k of ["help", "version"] as const) {
      rows.push({
        name: `time to --${k}`,
        figure: fmtSample(t[k]!),
        target: "",
        reference: `${(median(t[k]!) / floor).toFixed(2)}x floor (${fmtMs(floor)})`,
      });
    }
  } finally {
    await floorDir.remove();
  }
  if (violations.length > 0) {
    throw new BenchFailure(`start-up weight violated: ${violations.join("; ")}`, rows);
  }
  return rows;
}

// --- 3. parse + report overhead ---------------------------------------------------------
// (Scale and idle cost moved to cost_bench.ts, beside the peers: `deno task bench cost`.)

async function parseAndReport(): Promise<BenchRow[]> {
  const N = 10_000;
  const rounds = 7;
  progress(`parse + JSON report: ${N} conditions, ${rounds} rounds in-process`);
  const { registry } = await import("../../conditions/all.ts");
  const { parseArgv } = await import("../../engine/grammar.ts");
  const { renderJsonReport } = await import("../../output/json.ts");
  const { makeRedactor } = await import("../../output/redact.ts");
  const argv: string[] = ["--output", "json"];
  for (let i = 0; i < N; i++) {
    if (i > 0) argv.push("--");
    if (i % 2 === 0) argv.push("tcp", `127.0.0.1:${1024 + (i % 60000)}`);
    else argv.push("file", `/var/run/app-${i}.ready`, "--nonempty");
  }
  const parse: number[] = [];
  const render: number[] = [];
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const cmd = parseArgv(argv, registry, {});
    const t1 = performance.now();
    if (cmd.type !== "run") throw new Error(`parseArgv returned ${cmd.type}`);
    const plan = cmd.plan;
    const report = {
      status: "satisfied" as const,
      elapsedMs: 1234,
      mode: plan.options.mode,
      timeoutMs: plan.options.timeoutMs,
      decidedBy: undefined,
      signal: undefined,
      conditions: plan.conditions.map((c) => ({
        index: c.index,
        name: c.name,
        kind: c.kind.name,
        target: c.target,
        guard: c.guard,
        satisfied: true,
        attempts: 3,
        detail: `connected to ${c.target}`,
        lastError: "connection refused",
        fatal: false,
        exhausted: false,
        stopped: false,
        elapsedMs: 1000 + c.index,
        captures: {},
        group: undefined,
        groupName: undefined,
      })),
    };
    const t2 = performance.now();
    const text = renderJsonReport(report, makeRedactor(plan.secrets));
    const t3 = performance.now();
    bytes = text.length;
    parse.push(t1 - t0);
    render.push(t3 - t2);
  }
  const total = parse.map((p, i) => p + render[i]!);
  return [{
    name: `parse ${N.toLocaleString("en")} conditions + render the JSON report`,
    figure: `median ${fmtMs(median(total))} (parse ${fmtMs(median(parse))}, render ${
      fmtMs(median(render))
    }); first round ${fmtMs(total[0]!)}`,
    target: "",
    reference: `in-process, engine/grammar.ts + output/json.ts; report ${
      (bytes / 1024 / 1024).toFixed(1)
    } MiB; p95 ${fmtMs(percentile(total, 95))} (n=${rounds})`,
  }];
}

/** The entries of this module, in the order of docs/performance.md. */
export const entries: BenchEntry[] = [
  { name: "time to verdict (tcp, file) vs Deno floor and wait-on", run: timeToVerdict },
  { name: "start-up weight and time to --help", run: startupWeight },
  { name: "parse and JSON report of 10,000 conditions", run: parseAndReport },
];

if (import.meta.main) {
  const { renderTable } = await import("../bench.ts");
  const rows: BenchRow[] = [];
  for (const e of entries) rows.push(...await e.run());
  console.log(renderTable(rows));
}
