/**
 * `deno task compile`: builds the standalone waitcmd binaries for the five
 * release targets into `dist/` (`dist/waitcmd-<target>`, `.exe` on Windows).
 *
 * `deno compile` embeds the program into `denort`, Deno's runtime-only
 * binary; scripts/denort.ts finds (or downloads and checks against its pinned
 * SHA-256) the denort of each target, and `DENORT_BIN` is always set to it, so
 * deno never downloads one unchecked. A target without a denort is reported as
 * blocked, naming the file that is missing and where to put it; the script
 * then exits 1. The host binary is smoke-tested (`--version`) after the build,
 * which catches the classic mistake of pointing `DENORT_BIN` at the full
 * `deno` CLI (whose "compiled" result starts a REPL).
 *
 * What is compiled is the release bundle (scripts/bundle.ts, `dist/bundle/`),
 * the same program the e2e suite runs with `WAITCMD_UNDER_TEST=bundle`: it is
 * reused when it was built from the sources of this tree, else built first.
 * Its modules are one graph from main.js (the kinds' chunks through their
 * literal `import()`); the worker entries and the files packages read beside
 * their modules are in no graph, so each is passed with `--include` from the
 * bundle's manifest. No node_modules, type declarations, source maps or
 * native add-ons are embedded (tests/release/compile_test.ts checks the
 * embedded file list).
 *
 * Usage: deno task compile [--target TARGET]... [--dist DIR] [--verbose]
 *   WAITCMD_DIST_DIR overrides the output directory as well.
 *
 * @module
 */

import { bundle } from "./bundle.ts";
import { BUNDLE_DIR, bundleState, type Manifest, readManifest } from "./bundle_manifest.ts";
import { PERMISSIONS, V8_FLAGS } from "./launcher.ts";
import { denortHelp, fetchDenort, findDenort, prepareDenort } from "./denort.ts";
import {
  binaryName,
  isFile,
  isTarget,
  relative,
  repoRoot,
  runDeno,
  type Target,
  TARGETS,
  version,
} from "./targets.ts";

/** The output directory: `--dist`, then `WAITCMD_DIST_DIR`, then `<repo>/dist`. */
export function distDir(flag: string | undefined, env: Readonly<Record<string, string>>): string {
  return flag ?? env.WAITCMD_DIST_DIR ?? `${repoRoot}/dist`;
}

// ---------------------------------------------------------------------------
// Building

/** How one target went. */
export interface TargetResult {
  target: Target;
  status: "built" | "blocked" | "failed";
  /** The binary (built). */
  output?: string;
  /** Where denort came from (built or failed). */
  origin?: string;
  /** One-line reason (blocked or failed). */
  reason?: string;
  /** deno compile's output, ANSI stripped (includes the embedded file list). */
  log?: string;
}

/** Options of {@link compileTarget}. */
export interface CompileOptions {
  /** Output directory (created). */
  dist: string;
  /** Environment for DENORT_BIN / DENORT_DIR (defaults to the process's). */
  env?: Readonly<Record<string, string>>;
  /** The bundle to compile (default: dist/bundle, see scripts/bundle.ts). */
  bundle?: string;
  /** Scratch directory for extracted denort archives (default: a fresh temp dir). */
  workDir?: string;
}

/**
 * `deno compile`'s arguments for the bundle in `dir`: the binary's
 * permissions, no config or lockfile (the bundle needs neither), and every
 * file the module graph does not reach.
 */
export function compileArgs(
  target: Target,
  output: string,
  dir: string,
  manifest: Manifest,
): string[] {
  return [
    "compile",
    ...PERMISSIONS,
    V8_FLAGS, // embedded: the binary runs with them
    "--no-check", // compileAll type-checks the sources once
    "--no-config",
    "--no-lock",
    "--target",
    target,
    "--output",
    output,
    // Workers and files read beside a module are not in the module graph (docs/development.md).
    ...[...Object.values(manifest.workers), ...manifest.assets]
      .flatMap((f) => ["--include", `${dir}/${f}`]),
    `${dir}/${manifest.entry}`,
  ];
}

/** Runs `deno compile` with `denort` as the base binary; its log with colours removed. */
export async function denoCompile(
  args: string[],
  denort: string,
): Promise<{ success: boolean; code: number; log: string }> {
  const out = await runDeno(args, { cwd: repoRoot, env: { DENORT_BIN: denort } });
  return { success: out.success, code: out.code, log: out.stdout + out.stderr };
}

/**
 * Builds one target with `deno compile` from the bundle, never letting deno
 * download unchecked: `DENORT_BIN` is always set explicitly to the denort
 * found for the target, or downloaded here and checked against its pinned
 * sum ({@link fetchDenort}). A stale binary of an earlier build is removed first, so dist/
 * only holds what this build produced.
 */
export async function compileTarget(target: Target, opts: CompileOptions): Promise<TargetResult> {
  const env = opts.env ?? Deno.env.toObject();
  const output = `${opts.dist}/${binaryName(target)}`;
  await Deno.mkdir(opts.dist, { recursive: true });
  await Deno.remove(output).catch(() => {});
  const dir = opts.bundle ?? BUNDLE_DIR;
  const manifest = await readManifest(dir);
  if (!manifest) {
    return { target, status: "failed", reason: `no bundle in ${dir} (deno task bundle)` };
  }
  const lookup = await findDenort(target, env);
  if ("missing" in lookup) return { target, status: "blocked", reason: lookup.missing };
  let origin = "found" in lookup ? lookup.found.origin : lookup.fetch.url;
  const workDir = opts.workDir ?? await Deno.makeTempDir({ prefix: "waitcmd-denort-" });
  try {
    let denort: string;
    try {
      const found = "found" in lookup
        ? lookup.found
        : await fetchDenort(target, lookup.fetch, workDir);
      origin = found.origin;
      denort = await prepareDenort(target, found, workDir);
    } catch (e) {
      return { target, status: "blocked", origin, reason: (e as Error).message };
    }
    const out = await denoCompile(compileArgs(target, output, dir, manifest), denort);
    if (!out.success || !(await isFile(output))) {
      const why = out.log.split("\n").find((l) => l.startsWith("error:")) ??
        `exit code ${out.code}`;
      return {
        target,
        status: "failed",
        origin,
        reason: `deno compile failed: ${why}`,
        log: out.log,
      };
    }
    return { target, status: "built", output, origin, log: out.log };
  } finally {
    if (!opts.workDir) await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
}

/**
 * The files of deno compile's "Embedded Files" tree, as paths: `dir/*`
 * collapsed entries are listed as `dir/*`.
 */
export function embeddedFiles(log: string): string[] {
  const lines = log.split("\n");
  const start = lines.findIndex((l) => l.trim() === "Embedded Files");
  if (start < 0) return [];
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of lines.slice(start + 2)) {
    const m = /^((?:[│ ] )*)[├└]─[─┬] (.+?)(?: \([^)]*\))?$/.exec(line);
    if (!m) {
      if (out.length > 0 || line.trim() === "") break;
      continue;
    }
    const depth = m[1]!.length / 2;
    stack.length = depth;
    if (line.includes("─┬ ")) stack.push(m[2]!);
    else out.push([...stack, m[2]!].join("/"));
  }
  return out;
}

/**
 * Runs a freshly built host binary with `--version` and checks it answers as
 * this waitcmd version. Returns undefined when it does, else the reason.
 */
export async function smokeTest(binary: string): Promise<string | undefined> {
  const child = new Deno.Command(binary, {
    args: ["--version"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    const out = await child.output();
    const text = new TextDecoder().decode(out.stdout).trim();
    if (out.success && text.startsWith(`waitcmd ${version} (`)) return undefined;
    return `the built binary does not answer as waitcmd (\`--version\` exited ${out.code} and printed ${
      JSON.stringify(text.slice(0, 80))
    }): is the denort right?`;
  } finally {
    clearTimeout(timer);
  }
}

/** Builds `targets` one after the other, logging one line per target. */
export async function compileAll(
  targets: readonly Target[],
  opts: CompileOptions & { log: (line: string) => void; verbose?: boolean },
): Promise<TargetResult[]> {
  const env = opts.env ?? Deno.env.toObject();
  const rel = relative(opts.dist);
  opts.log(`compile: waitcmd ${version} for ${targets.length} target(s) into ${rel}/`);
  // Type-check once (the per-target builds pass --no-check), unless nothing can be built.
  const lookups = await Promise.all(targets.map((t) => findDenort(t, env)));
  if (lookups.some((l) => !("missing" in l))) {
    const check = await runDeno(
      ["check", "--config", `${repoRoot}/deno.json`, `${repoRoot}/main.ts`],
      { cwd: repoRoot },
    );
    if (!check.success) {
      opts.log(check.stderr.trim());
      const reason = "type check failed (deno check main.ts)";
      opts.log(`compile: FAILED: ${reason}`);
      return targets.map((target) => ({ target, status: "failed", reason }));
    }
  }
  // The bundle the tests ran, when it is of these sources; else a new one.
  const dir = opts.bundle ?? BUNDLE_DIR;
  if (await bundleState(dir) === "fresh") {
    opts.log(`compile: using ${relative(dir)}/, built from these sources`);
  } else {
    try {
      await bundle({ out: dir, log: opts.log });
    } catch (e) {
      const reason = `the bundle could not be built: ${(e as Error).message}`;
      opts.log(`compile: FAILED: ${reason}`);
      return targets.map((target) => ({ target, status: "failed", reason }));
    }
  }
  const results: TargetResult[] = [];
  for (const target of targets) {
    const r = await compileTarget(target, { ...opts, env, bundle: dir });
    if (r.status === "built" && target === Deno.build.target) {
      const bad = await smokeTest(r.output!);
      if (bad) {
        await Deno.remove(r.output!).catch(() => {});
        Object.assign(r, { status: "failed", reason: bad, output: undefined });
      }
    }
    if (r.log && (opts.verbose || r.status === "failed")) opts.log(r.log.trimEnd());
    if (r.status === "built") {
      const size = (await Deno.stat(r.output!)).size;
      opts.log(
        `compile: ${target}: built ${relative(r.output!)} (${
          (size / 1e6).toFixed(1)
        } MB, denort from ${r.origin})`,
      );
    } else {
      opts.log(`compile: ${target}: ${r.status.toUpperCase()}: ${r.reason}`);
    }
    results.push(r);
  }
  const blocked = results.filter((r) => r.status === "blocked");
  if (blocked.length > 0) { for (const l of denortHelp()) opts.log(l); }
  const built = results.filter((r) => r.status === "built").length;
  opts.log(
    built === results.length
      ? `compile: done: ${built} of ${results.length} target(s) built`
      : `compile: INCOMPLETE: ${built} of ${results.length} target(s) built, ${blocked.length} blocked (no usable denort), ${
        results.length - built - blocked.length
      } failed`,
  );
  return results;
}

// ---------------------------------------------------------------------------
// CLI

/** Parses `[--target T]... [--dist DIR] [--verbose]`; throws on a bad argument. */
export function parseArgs(args: readonly string[]): {
  targets: Target[];
  dist?: string;
  verbose: boolean;
} {
  const targets: Target[] = [];
  let dist: string | undefined;
  let verbose = false;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--target") {
      const t = value();
      if (!isTarget(t)) throw new Error(`unknown target "${t}"; targets: ${TARGETS.join(", ")}`);
      targets.push(t);
    } else if (flag === "--dist") dist = value();
    else if (flag === "--verbose" || flag === "-v") verbose = true;
    else throw new Error(`unknown argument "${args[i]}"`);
  }
  return { targets: targets.length ? targets : [...TARGETS], dist, verbose };
}

if (import.meta.main) {
  let parsed;
  try {
    parsed = parseArgs(Deno.args);
  } catch (e) {
    console.error(`compile: ${(e as Error).message}`);
    console.error("usage: deno task compile [--target TARGET]... [--dist DIR] [--verbose]");
    Deno.exit(2);
  }
  const env = Deno.env.toObject();
  const results = await compileAll(parsed.targets, {
    dist: distDir(parsed.dist, env),
    env,
    verbose: parsed.verbose,
    log: (l) => console.error(l),
  });
  Deno.exit(results.every((r) => r.status === "built") ? 0 : 1);
}
