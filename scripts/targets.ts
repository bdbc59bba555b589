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
