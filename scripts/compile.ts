/**
 * `deno task compile`: builds the standalone waitcmd binaries for the five
 * release targets into `dist/` (`dist/waitcmd-<target>`, `.exe` on Windows).
 *
 * `deno compile` embeds the program into `denort`, Deno's runtime-only
 * binary, which it normally downloads from dl.deno.land unchecked. This
 * script finds denort as
 *
 * - `DENORT_BIN=/path/to/denort`: the denort of this machine's own target
 *   (Deno's own variable; used for the host target only);
 * - `DENORT_DIR=/path/to/dir`: one file per target, either the official
 *   archive `denort-<target>.zip` (as published at
 *   `https://dl.deno.land/release/v<deno>/denort-<target>.zip`) or the
 *   extracted binary renamed `denort-<target>` / `denort-<target>.exe`;
 * - neither set: it downloads the official archive itself and accepts it
 *   only when its SHA-256 equals the one pinned for this Deno version and
 *   target in `scripts/denort-sums.txt` (`WAITCMD_DENORT_SUMS` names another
 *   file; `WAITCMD_DENORT_URL` replaces `https://dl.deno.land/release`). A
 *   version/target with no pinned sum is not downloaded at all.
 *
 * A target without a denort is reported as blocked, naming the file that is
 * missing and where to put it; the script then exits 1. Every denort found is
 * checked to be an executable of the right OS and CPU, and the host binary is
 * smoke-tested (`--version`) after the build, which catches the classic
 * mistake of pointing `DENORT_BIN` at the full `deno` CLI (whose "compiled"
 * result starts a REPL).
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

import { inflateRawSync } from "node:zlib";
import denoJson from "../deno.json" with { type: "json" };
import {
  bundle,
  BUNDLE_DIR,
  bundleState,
  type Manifest,
  PERMISSIONS,
  readManifest,
  V8_FLAGS,
} from "./bundle.ts";

/** The release targets, in the order they are built and listed. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** One of {@link TARGETS}. */
export type Target = typeof TARGETS[number];

/** The repository root (scripts/compile.ts -> repo). */
export const repoRoot: string = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

/** The version every artifact carries (deno.json "version", the only place it is written). */
export const version: string = denoJson.version;

/** Whether `t` is one of the release targets. */
export function isTarget(t: string): t is Target {
  return (TARGETS as readonly string[]).includes(t);
}

/** `.exe` for Windows targets, empty otherwise. */
export function exeSuffix(target: Target): string {
  return target.includes("windows") ? ".exe" : "";
}

/** File name of the compiled binary in dist/: `waitcmd-<target>[.exe]`. */
export function binaryName(target: Target): string {
  return `waitcmd-${target}${exeSuffix(target)}`;
}

/** Where Deno publishes its releases (`WAITCMD_DENORT_URL` replaces it, e.g. for a mirror). */
export const DENORT_BASE_URL = "https://dl.deno.land/release";

/** Where Deno itself would download the denort archive of `target` from (or `base` instead). */
export function denortUrl(target: Target, base: string = DENORT_BASE_URL): string {
  return `${base.replace(/\/+$/, "")}/v${Deno.version.deno}/denort-${target}.zip`;
}

/** Deno's release page of this Deno version, which lists each archive's `.sha256sum` file. */
export function denortRelease(): string {
  return `https://github.com/denoland/deno/releases/tag/v${Deno.version.deno}`;
}

/** The pinned SHA-256 sums of the official denort archives (see {@link readDenortSums}). */
export const DENORT_SUMS_FILE: string = new URL("./denort-sums.txt", import.meta.url).pathname;

/** The output directory: `--dist`, then `WAITCMD_DIST_DIR`, then `<repo>/dist`. */
export function distDir(flag: string | undefined, env: Readonly<Record<string, string>>): string {
  return flag ?? env.WAITCMD_DIST_DIR ?? `${repoRoot}/dist`;
}

// ---------------------------------------------------------------------------
// Finding and checking denort

/** Where a denort came from, for messages. */
export interface DenortFound {
  path: string;
  /** `DENORT_BIN=/x/denort` or `DENORT_DIR/denort-<target>.zip`. */
  origin: string;
  /** A zip to extract before use (the official archive). */
  zip?: boolean;
}

/** A denort archive to download and accept only with the pinned SHA-256. */
export interface DenortFetch {
  url: string;
  /** The pinned SHA-256 (lower-case hex). */
  sha256: string;
  /** The sums file it was pinned in, for messages. */
  sumsFile: string;
}

/** Result of looking for a target's denort: found, to download, or why not (one line). */
export type DenortLookup = { found: DenortFound } | { fetch: DenortFetch } | { missing: string };

/**
 * Reads a sums file: one `<deno version> <target> <sha256>` per line, `#`
 * comments and blank lines ignored. Throws an Error naming the file and line
 * of a line that is not of that form.
 */
export function parseDenortSums(text: string, file: string): Map<string, string> {
  const sums = new Map<string, string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.split("#", 1)[0]!.trim();
    if (line === "") continue;
    const words = line.split(/\s+/);
    const [deno, target, sum] = words;
    if (
      words.length !== 3 || !/^\d+\.\d+\.\d+$/.test(deno!) || !isTarget(target!) ||
      !/^[0-9a-fA-F]{64}$/.test(sum!)
    ) {
      throw new Error(
        `${relative(file)}:${i + 1}: expected "<deno version> <target> <sha256>", got ${
          JSON.stringify(line.slice(0, 120))
        }`,
      );
    }
    sums.set(`${deno} ${target}`, sum!.toLowerCase());
  }
  return sums;
}

/** The sums file in force: `WAITCMD_DENORT_SUMS`, else {@link DENORT_SUMS_FILE}. */
export function denortSumsFile(env: Readonly<Record<string, string>>): string {
  return env.WAITCMD_DENORT_SUMS || DENORT_SUMS_FILE;
}

/**
 * What to download for `target` when no local denort is given: the archive's
 * URL and its pinned sum, or why it cannot be downloaded (no pinned sum for
 * this Deno version and target: nothing is downloaded unchecked).
 */
export async function plannedFetch(
  target: Target,
  env: Readonly<Record<string, string>>,
): Promise<DenortLookup> {
  const file = denortSumsFile(env);
  const url = denortUrl(target, env.WAITCMD_DENORT_URL || DENORT_BASE_URL);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    return {
      missing: `no denort for ${target}: cannot read ${relative(file)}: ${(e as Error).message}`,
    };
  }
  let sums: Map<string, string>;
  try {
    sums = parseDenortSums(text, file);
  } catch (e) {
    return { missing: `no denort for ${target}: ${(e as Error).message}` };
  }
  const sha256 = sums.get(`${Deno.version.deno} ${target}`);
  if (!sha256) {
    return {
      missing:
        `no denort for ${target}: no pinned SHA-256 for deno ${Deno.version.deno} ${target} in ${
          relative(file)
        }; add it from denort-${target}.zip.sha256sum of ${denortRelease()}, or set DENORT_BIN / DENORT_DIR (download: ${url})`,
    };
  }
  return { fetch: { url, sha256, sumsFile: file } };
}

/** The largest denort archive accepted from a download (the official ones are about 40 MB). */
const MAX_DENORT_ARCHIVE = 256 * 1024 * 1024;

/**
 * Downloads the archive of `plan` into `workDir` and accepts it only when
 * its SHA-256 is the pinned one. Throws an Error with a one-line reason
 * (download failed, too large, or the sum differs: expected, actual and the
 * sums file named).
 */
export async function fetchDenort(
  target: Target,
  plan: DenortFetch,
  workDir: string,
): Promise<DenortFound> {
  let res: Response;
  try {
    res = await fetch(plan.url, { signal: AbortSignal.timeout(600_000) });
  } catch (e) {
    throw new Error(`cannot download ${plan.url}: ${(e as Error).message}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`cannot download ${plan.url}: HTTP ${res.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.length;
    if (size > MAX_DENORT_ARCHIVE) {
      throw new Error(`${plan.url} is larger than ${MAX_DENORT_ARCHIVE} bytes; refused`);
    }
    chunks.push(chunk);
  }
  const data = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    data.set(c, at);
    at += c.length;
  }
  const actual = await sha256Hex(data);
  if (actual !== plan.sha256) {
    throw new Error(
      `${plan.url}: SHA-256 ${actual} does not match ${plan.sha256} pinned for deno ${Deno.version.deno} ${target} in ${
        relative(plan.sumsFile)
      }; refused`,
    );
  }
  const path = `${workDir}/denort-${target}.zip`;
  await Deno.writeFile(path, data);
  return { path, origin: `${plan.url} (SHA-256 as pinned)`, zip: true };
}

/** Lower-case hex SHA-256 of `data`. */
async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Looks for the denort of `target`: `DENORT_BIN` (host target only), then
 * `DENORT_DIR/denort-<target>[.exe]`, then `DENORT_DIR/denort-<target>.zip`;
 * with neither variable set, the official archive to download with its
 * pinned sum ({@link plannedFetch}). Only checks that files exist;
 * {@link prepareDenort} checks what they are.
 */
export async function findDenort(
  target: Target,
  env: Readonly<Record<string, string>>,
  host: string = Deno.build.target,
): Promise<DenortLookup> {
  const bin = env.DENORT_BIN;
  if (!bin && !env.DENORT_DIR) return await plannedFetch(target, env);
  if (bin && target === host) {
    if (!(await isFile(bin))) return { missing: `DENORT_BIN=${bin} does not exist` };
    return { found: { path: bin, origin: `DENORT_BIN=${bin}` } };
  }
  const dir = env.DENORT_DIR;
  if (dir) {
    for (const name of [`denort-${target}${exeSuffix(target)}`, `denort-${target}`]) {
      if (await isFile(`${dir}/${name}`)) {
        return { found: { path: `${dir}/${name}`, origin: `DENORT_DIR/${name}` } };
      }
    }
    const zip = `denort-${target}.zip`;
    if (await isFile(`${dir}/${zip}`)) {
      return { found: { path: `${dir}/${zip}`, origin: `DENORT_DIR/${zip}`, zip: true } };
    }
  }
  const where = [
    target === host ? "set DENORT_BIN to it" : "",
    dir
      ? `put denort-${target}.zip into DENORT_DIR (${dir})`
      : `set DENORT_DIR to a directory holding denort-${target}.zip`,
  ].filter(Boolean).join(", or ");
  const hostNote = bin && target !== host ? ` (DENORT_BIN is only used for ${host})` : "";
  return {
    missing: `no denort for ${target}${hostNote}: ${where} (download: ${denortUrl(target)})`,
  };
}

/** The OS and CPU an executable was built for, read from its header. */
export function executableTarget(head: Uint8Array): string | undefined {
  const dv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (head.length >= 20 && dv.getUint32(0) === 0x7f454c46) {
    const machine = dv.getUint16(18, head[5] === 1); // EI_DATA 1 = little-endian
    if (machine === 0x3e) return "linux-x86_64";
    if (machine === 0xb7) return "linux-aarch64";
    return `linux-machine-${machine}`;
  }
  if (head.length >= 8 && dv.getUint32(0, true) === 0xfeedfacf) {
    const cpu = dv.getUint32(4, true);
    if (cpu === 0x01000007) return "darwin-x86_64";
    if (cpu === 0x0100000c) return "darwin-aarch64";
    return `darwin-cpu-${cpu}`;
  }
  if (head.length >= 64 && head[0] === 0x4d && head[1] === 0x5a) {
    const pe = dv.getUint32(0x3c, true);
    if (pe + 6 <= head.length && dv.getUint32(pe) === 0x50450000) {
      const machine = dv.getUint16(pe + 4, true);
      if (machine === 0x8664) return "windows-x86_64";
      if (machine === 0xaa64) return "windows-aarch64";
      return `windows-machine-${machine}`;
    }
    return "windows-unknown";
  }
  return undefined;
}

/** What {@link executableTarget} must say for a denort of `target`. */
export function expectedExecutable(target: Target): string {
  const cpu = target.split("-")[0];
  const os = target.includes("linux") ? "linux" : target.includes("darwin") ? "darwin" : "windows";
  return `${os}-${cpu}`;
}

/**
 * Turns a found denort into a usable file: extracts the official zip into
 * `workDir`, then checks the executable's OS/CPU and that it is not the full
 * deno CLI. Throws an Error with a one-line reason otherwise.
 */
export async function prepareDenort(
  target: Target,
  found: DenortFound,
  workDir: string,
): Promise<string> {
  let path = found.path;
  if (found.zip) {
    const data = await Deno.readFile(found.path);
    const want = `denort${exeSuffix(target)}`;
    const entry = readZip(data).find((e) => e.name === want || e.name.endsWith(`/${want}`));
    if (!entry) throw new Error(`${found.origin}: the archive holds no ${want}`);
    path = `${workDir}/denort-${target}${exeSuffix(target)}`;
    await Deno.writeFile(path, entry.data(), { mode: 0o755 });
  }
  const head = await readHead(path, 4096);
  const kind = executableTarget(head);
  const want = expectedExecutable(target);
  if (kind !== want) {
    throw new Error(
      `${found.origin} is ${
        kind ? `an executable for ${kind}` : "not an executable"
      }, but ${target} needs a denort for ${want}`,
    );
  }
  if (await sameFile(path, Deno.execPath())) {
    throw new Error(
      `${found.origin} is the deno CLI itself, not denort: a binary built on it starts a REPL (download: ${
        denortUrl(target)
      })`,
    );
  }
  return path;
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
async function denoCompile(
  args: string[],
  denort: string,
): Promise<{ success: boolean; code: number; log: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: repoRoot,
    env: { DENORT_BIN: denort, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    success: out.success,
    code: out.code,
    log: stripAnsi(dec.decode(out.stdout) + dec.decode(out.stderr)),
  };
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

/** What the compiled program weighs above Deno's runtime (see {@link measurePayload}). */
export interface Payload {
  /** The compiled binary's size minus the deno CLI's, with the CLI as `DENORT_BIN`. */
  readonly bytes: number;
  /** The same for an empty program: what `deno compile` adds to any program. */
  readonly emptyBytes: number;
  /** The files embedded, as deno compile lists them. */
  readonly embedded: readonly string[];
  /** deno compile's log. */
  readonly log: string;
}

/**
 * Compiles the bundle in `dir` for this machine with the deno CLI itself as
 * the base binary (`DENORT_BIN`; the result does not run waitcmd, but holds
 * the whole embedded program), and an empty program the same way: their
 * sizes above the CLI's are the payload and what `deno compile` adds to any
 * program (padding that aligns the embedded section in the executable).
 */
export async function measurePayload(dir = BUNDLE_DIR): Promise<Payload> {
  const manifest = await readManifest(dir);
  if (!manifest) throw new Error(`no bundle in ${dir} (deno task bundle)`);
  const target = Deno.build.target as Target;
  const work = await Deno.makeTempDir({ prefix: "waitcmd-payload-" });
  try {
    const cli = Deno.execPath();
    const cliBytes = (await Deno.stat(cli)).size;
    const out = await denoCompile(compileArgs(target, `${work}/waitcmd`, dir, manifest), cli);
    if (!out.success) throw new Error(`deno compile failed: ${out.log.trim().slice(-300)}`);
    await Deno.writeTextFile(`${work}/empty.js`, "\n");
    const empty = await denoCompile(
      [
        "compile",
        "--no-check",
        "--no-config",
        "--no-lock",
        "--output",
        `${work}/empty`,
        `${work}/empty.js`,
      ],
      cli,
    );
    if (!empty.success) throw new Error(`deno compile failed: ${empty.log.trim().slice(-300)}`);
    return {
      bytes: (await Deno.stat(`${work}/waitcmd`)).size - cliBytes,
      emptyBytes: (await Deno.stat(`${work}/empty`)).size - cliBytes,
      embedded: embeddedFiles(out.log),
      log: out.log,
    };
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
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

/** The lines that explain how to provide denort, printed once when a target is blocked. */
export function denortHelp(): string[] {
  return [
    "deno compile embeds waitcmd into denort (Deno's runtime-only binary). With neither variable below set, this build downloads the official archive and accepts it only with the SHA-256 pinned in scripts/denort-sums.txt. Or provide it:",
    `  DENORT_BIN=/path/to/denort   the denort of this machine's target (${Deno.build.target})`,
    "  DENORT_DIR=/path/to/dir      per target: denort-<target>.zip (the official archive, unchanged)",
    "                               or the extracted binary named denort-<target> / denort-<target>.exe",
    `  archives: ${DENORT_BASE_URL}/v${Deno.version.deno}/denort-<target>.zip (Deno ${Deno.version.deno} exactly)`,
  ];
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
    const check = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--config", `${repoRoot}/deno.json`, `${repoRoot}/main.ts`],
      cwd: repoRoot,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!check.success) {
      const text = stripAnsi(new TextDecoder().decode(check.stderr)).trim();
      opts.log(text);
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
// Small helpers (also used by release.ts)

/** Reads the entries of a zip archive (stored or deflated; enough for denort archives). */
export function readZip(data: Uint8Array): { name: string; data(): Uint8Array }[] {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let eocd = -1;
  for (let i = data.length - 22; i >= Math.max(0, data.length - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error("not a zip archive (no end of central directory)");
  const count = dv.getUint16(eocd + 10, true);
  let p = dv.getUint32(eocd + 16, true);
  const dec = new TextDecoder();
  const entries: { name: string; data(): Uint8Array }[] = [];
  for (let i = 0; i < count; i++) {
    if (dv.getUint32(p, true) !== 0x02014b50) throw new Error("corrupt zip central directory");
    const method = dv.getUint16(p + 10, true);
    const csize = dv.getUint32(p + 20, true);
    const nameLen = dv.getUint16(p + 28, true);
    const extraLen = dv.getUint16(p + 30, true);
    const commentLen = dv.getUint16(p + 32, true);
    const local = dv.getUint32(p + 42, true);
    const name = dec.decode(data.subarray(p + 46, p + 46 + nameLen));
    p += 46 + nameLen + extraLen + commentLen;
    entries.push({
      name,
      data() {
        if (dv.getUint32(local, true) !== 0x04034b50) throw new Error("corrupt zip local header");
        const start = local + 30 + dv.getUint16(local + 26, true) + dv.getUint16(local + 28, true);
        const raw = data.subarray(start, start + csize);
        if (method === 0) return raw;
        if (method === 8) return new Uint8Array(inflateRawSync(raw));
        throw new Error(`unsupported zip compression method ${method} for ${name}`);
      },
    });
  }
  return entries;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

async function readHead(path: string, n: number): Promise<Uint8Array> {
  using f = await Deno.open(path);
  const buf = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const r = await f.read(buf.subarray(got));
    if (r === null) break;
    got += r;
  }
  return buf.subarray(0, got);
}

async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([Deno.stat(a), Deno.stat(b)]);
    return x.dev === y.dev && x.ino === y.ino && x.ino !== null;
  } catch {
    return false;
  }
}

/** Removes terminal colour codes from a tool's output. */
export function stripAnsi(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, "");
}

/** A path relative to the current directory when under it (for readable messages). */
export function relative(path: string): string {
  const cwd = Deno.cwd();
  return path.startsWith(cwd + "/") ? path.slice(cwd.length + 1) : path;
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
