/**
 * The release targets and what both halves of `deno task compile` name them by: the target
 * table, the binary names, the version every artefact carries, and the repository's paths
 * (scripts/denort.ts gets each target's denort, scripts/compile.ts builds with it).
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };

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

/** The repository root (scripts/targets.ts -> repo). */
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

/** A path relative to the current directory when under it (for readable messages). */
export function relative(path: string): string {
  const cwd = Deno.cwd();
  return path.startsWith(cwd + "/") ? path.slice(cwd.length + 1) : path;
}

/** Whether `path` is a regular file. */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** What a run of the Deno CLI gave: its exit, and its output decoded, colour codes removed. */
export interface DenoRun {
  success: boolean;
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the Deno CLI that runs this script (`deno <args>`), stdin closed, both outputs captured,
 * `NO_COLOR=1` plus `env` in its environment.
 */
export async function runDeno(
  args: readonly string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<DenoRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...args],
    cwd: opts.cwd,
    env: { NO_COLOR: "1", ...opts.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    success: out.success,
    code: out.code,
    stdout: stripAnsi(dec.decode(out.stdout)),
    stderr: stripAnsi(dec.decode(out.stderr)),
  };
}

/** `text`'s last `n` lines, trimmed: the part of a tool's error output worth quoting. */
export function tail(text: string, n: number): string {
  return text.trim().split("\n").slice(-n).join("\n");
}

/** Removes terminal colour codes from a tool's output. */
function stripAnsi(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, "");
}
