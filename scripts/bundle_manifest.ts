/**
 * What a release bundle is, for whoever reads one: where it lives, the names
 * of its entry, launcher and manifest, what `bundle.json` records, the digest
 * of the sources it is built from, and whether the bundle in a directory is
 * one of the current sources. scripts/bundle.ts builds it; the e2e switch
 * (tests/e2e/_cli.ts), `deno task compile` and the benchmarks read it.
 *
 * @module
 */

import { repoRoot } from "./targets.ts";

/** Where the release artefact is built. */
export const BUNDLE_DIR = `${repoRoot}/dist/bundle`;

/** The bundle's entry module, inside the bundle directory. */
export const ENTRY = "main.js";

/** The launcher beside the bundle, inside the bundle directory. */
export const LAUNCHER = "waitcmd";

/** The manifest of the bundle, inside the bundle directory. */
export const MANIFEST = "bundle.json";

/** What `bundle.json` records. */
export interface Manifest {
  /** waitcmd's version (deno.json). */
  readonly version: string;
  /** The Deno that built it, and that the launcher runs. */
  readonly deno: string;
  /** {@link sourceDigest} of the tree it was built from. */
  readonly source: string;
  /** The entry module. */
  readonly entry: string;
  /** Worker entries by name, as bundle paths. */
  readonly workers: Record<string, string>;
  /** Files read at run time that no import names, as bundle paths. */
  readonly assets: readonly string[];
  /**
   * Every file of the program (launcher and manifest excepted) with its size,
   * largest first, and for a module what its bytes come from, largest first
   * (at most three).
   */
  readonly files: readonly { path: string; bytes: number; holds?: readonly string[] }[];
  /** What each npm package, and waitcmd's own code, costs in the bundle's modules, largest first. */
  readonly packages: readonly { name: string; bytes: number }[];
}

/** The files of the source folders that are tests or test material (docs/development.md). */
const TEST_MATERIAL = /_test\.ts$|^_suite\.ts$|^_service\.ts$/;

/** The scripts that build the bundle: what they do is part of what it is. */
const BUILD_SCRIPTS: readonly string[] = [
  "scripts/bundle.ts",
  "scripts/bundle_costs.ts",
  "scripts/bundle_fixups.ts",
  "scripts/bundle_manifest.ts",
  "scripts/eager_wrappers.ts",
  "scripts/launcher.ts",
];

/**
 * The files the program is built from: main.ts, deno.json, deno.lock, the
 * non-test modules of engine/, conditions/, output/ and cli/ with the shell files
 * they import as text (output/completions/), and the scripts that build it
 * ({@link BUILD_SCRIPTS}), as paths from the repository root, sorted. A kind's
 * test material (`_suite.ts`, its rows of the shared suites, and `_service.ts`,
 * its test server's starter) is not among them: nothing main.ts imports reaches
 * it (tests/layers_test.ts).
 */
export async function sourceFiles(root = repoRoot): Promise<string[]> {
  const out = ["deno.json", "deno.lock", "main.ts", ...BUILD_SCRIPTS];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(`${root}/${dir}`)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (/\.(ts|js|json|bash|zsh|fish)$/.test(e.name) && !TEST_MATERIAL.test(e.name)) {
        out.push(path);
      }
    }
  };
  for (const dir of ["engine", "conditions", "output", "cli"]) await walk(dir);
  return out.sort();
}

/** SHA-256 of the sources' paths and contents, as hex: what a bundle was built from. */
export async function sourceDigest(root = repoRoot): Promise<string> {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (const path of await sourceFiles(root)) {
    const data = await Deno.readFile(`${root}/${path}`);
    parts.push(enc.encode(`${path}\0${data.length}\0`), data);
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Reads a bundle's manifest, or undefined when there is none. */
export async function readManifest(dir = BUNDLE_DIR): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(`${dir}/${MANIFEST}`)) as Manifest;
  } catch {
    return undefined;
  }
}

/**
 * Whether `dir` holds a bundle of the current sources: `fresh`, `stale` (built
 * from other sources, or by another Deno) or `missing`.
 */
export async function bundleState(dir = BUNDLE_DIR): Promise<"fresh" | "stale" | "missing"> {
  const m = await readManifest(dir);
  if (!m) return "missing";
  return m.source === await sourceDigest() && m.deno === Deno.version.deno ? "fresh" : "stale";
}

/** The bundle path of worker entry `path` (`conditions/_common/regex_worker.js`). */
export function workerOutput(path: string): string {
  return path.replace(/\.ts$/, ".js");
}

/** The files under `dir` (of a bundle, or being built), as paths from it, sorted. */
export async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${dir}/${prefix}`)) {
    const path = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...await listFiles(dir, path));
    else out.push(path);
  }
  return out.sort();
}
