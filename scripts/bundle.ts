/**
 * `deno task bundle`: builds the release artefact. One bundled, minified
 * program in `dist/bundle/`, which `deno compile` embeds for every target
 * (scripts/compile.ts) and which the e2e suite runs with
 * `WAITCMD_UNDER_TEST=bundle` (tests/e2e/_cli.ts), so what ships is what is
 * tested.
 *
 * `deno bundle --platform deno --packages bundle --code-splitting --minify`
 * of main.ts and of each worker entry (engine/workers.ts). Code splitting
 * keeps every literal `import()` a chunk of its own: a kind's declaration,
 * its probe and its libraries load only when a command line uses the kind.
 * Then, in a directory beside the output:
 *
 * - what each module's bytes come from is read from the bundler's source
 *   maps, which are then deleted (scripts/bundle_costs.ts);
 * - the bundle is put right where the bundler cannot: `require` of Node
 *   built-ins, CommonJS paths, files packages read beside their modules,
 *   left-out modules, workers, the libraries' module wrappers compiled with
 *   their chunk (scripts/bundle_fixups.ts, scripts/eager_wrappers.ts);
 * - `bundle.json` is written (the files, the workers and assets, what the
 *   bytes come from, and the digest of the sources it was built from, which
 *   the e2e switch checks: scripts/bundle_manifest.ts), and `waitcmd`, a
 *   launcher that runs the bundle with the pinned Deno and the permissions
 *   the compiled binary has, reading neither a config nor a lockfile and
 *   never fetching anything (scripts/launcher.ts);
 *
 * and that directory replaces the output in one rename.
 *
 * Usage: deno task bundle [--out DIR]
 *
 * @module
 */

import { WORKERS } from "../engine/workers.ts";
import { attributeAndDropMaps, type Costs } from "./bundle_costs.ts";
import { ASSETS, checkParses, EXTERNAL, fixUp, LEFT_OUT } from "./bundle_fixups.ts";
import {
  BUNDLE_DIR,
  ENTRY,
  LAUNCHER,
  listFiles,
  MANIFEST,
  type Manifest,
  sourceDigest,
  workerOutput,
} from "./bundle_manifest.ts";
import { launcherScript } from "./launcher.ts";
import { relative, repoRoot, runDeno, tail, version } from "./targets.ts";

/** Options of {@link bundle}. */
export interface BundleOptions {
  /** Output directory (default {@link BUNDLE_DIR}); replaced as a whole. */
  out?: string;
  /** A line of progress. */
  log?: (line: string) => void;
}

/**
 * Builds the bundle into `out`: into a directory beside it first, which then
 * replaces `out` in one rename, so a reader never sees half a bundle. Throws
 * an Error with a one-line reason when it cannot be built.
 */
export async function bundle(opts: BundleOptions = {}): Promise<Manifest> {
  const out = opts.out ?? BUNDLE_DIR;
  const log = opts.log ?? (() => {});
  const parent = out.slice(0, out.lastIndexOf("/")) || ".";
  await Deno.mkdir(parent, { recursive: true });
  const work = await Deno.makeTempDir({ dir: parent, prefix: ".bundle-" });
  // A temporary directory is private (0700); a build output is for every user, as the binary is
  // (tests run it as nobody).
  await Deno.chmod(work, 0o755);
  try {
    await runBundler(work);
    const costs = await attributeAndDropMaps(work);
    await fixUp(work);
    await checkParses(work, [ENTRY, ...(Object.values(WORKERS) as string[]).map(workerOutput)]);
    const manifest = await manifestOf(work, costs);
    await Deno.writeTextFile(`${work}/${MANIFEST}`, JSON.stringify(manifest, null, 2) + "\n");
    await Deno.writeTextFile(`${work}/${LAUNCHER}`, launcherScript(Deno.execPath()), {
      mode: 0o755,
    });
    await Deno.chmod(`${work}/${LAUNCHER}`, 0o755);
    const old = `${work}.old`;
    if (await Deno.stat(out).then(() => true, () => false)) await Deno.rename(out, old);
    await Deno.rename(work, out);
    await Deno.remove(old, { recursive: true }).catch(() => {});
    const files = manifest.files;
    const total = files.reduce((n, f) => n + f.bytes, 0);
    log(
      `bundle: ${files.length} files, ${(total / 1e6).toFixed(2)} MB, into ${relative(out)}/ ` +
        `(largest: ${files.slice(0, 3).map((f) => `${f.path} ${kb(f.bytes)}`).join(", ")})`,
    );
    return manifest;
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

/**
 * `deno bundle` of main.ts and the worker entries into `work`, with source maps (only to tell
 * what each library costs) and the modules left to run time or left out as externals.
 */
async function runBundler(work: string): Promise<void> {
  const workers = Object.values(WORKERS) as string[];
  const result = await runDeno(
    [
      "bundle",
      "--quiet",
      "--platform",
      "deno",
      "--packages",
      "bundle",
      "--code-splitting",
      "--minify",
      // Maps only to tell what each library costs; removed before anything is written out.
      "--sourcemap",
      "external",
      "--frozen",
      "--config",
      `${repoRoot}/deno.json`,
      ...[...EXTERNAL, ...LEFT_OUT.map((l) => l.module)].flatMap((e) => ["--external", e]),
      "--outdir",
      work,
      "main.ts",
      ...workers,
    ],
    { cwd: repoRoot },
  );
  if (!result.success) throw new Error(`deno bundle failed: ${tail(result.stderr, 8)}`);
}

/** The manifest of the bundle in `work` (its files as they are now, with their costs). */
async function manifestOf(work: string, costs: Costs): Promise<Manifest> {
  const files = await Promise.all(
    (await listFiles(work)).map(async (path) => ({
      path,
      bytes: (await Deno.stat(`${work}/${path}`)).size,
      ...(costs.byFile.has(path) ? { holds: costs.byFile.get(path)! } : {}),
    })),
  );
  files.sort((a, b) => b.bytes - a.bytes || a.path.localeCompare(b.path));
  const manifest: Manifest = {
    version,
    deno: Deno.version.deno,
    source: await sourceDigest(),
    entry: ENTRY,
    workers: Object.fromEntries(
      Object.entries(WORKERS).map(([name, path]) => [name, workerOutput(path)]),
    ),
    assets: ASSETS.map((a) => a.name),
    files,
    packages: costs.packages,
  };
  for (const w of Object.values(manifest.workers)) {
    if (!files.some((f) => f.path === w)) throw new Error(`the bundle has no worker ${w}`);
  }
  return manifest;
}

function kb(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(0)} KB`;
}

if (import.meta.main) {
  const args = [...Deno.args];
  let out: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag === "--out" && (inline ?? args[i + 1]) !== undefined) {
      out = inline ?? args[++i];
    } else {
      console.error(`bundle: unknown argument "${args[i]}"`);
      console.error("usage: deno task bundle [--out DIR]");
      Deno.exit(2);
    }
  }
  try {
    await bundle({ out, log: (l) => console.error(l) });
  } catch (e) {
    console.error(`bundle: FAILED: ${e instanceof Error ? e.message : e}`);
    Deno.exit(1);
  }
}
