/**
 * `deno task release`: turns the compiled binaries into release artifacts.
 *
 * Steps (each reported on stderr):
 *   1. compile  the five targets through scripts/compile.ts (needs denort, see
 *               there); `--skip-compile` packages the binaries already in
 *               dist/ instead (from an earlier `deno task compile`).
 *   2. package  `waitcmd-<version>-<target>.tar.gz` (`.zip` for Windows), each
 *               holding `waitcmd-<version>-<target>/waitcmd[.exe]` and the
 *               README; deterministic (fixed owner, modes and mtime from
 *               SOURCE_DATE_EPOCH or the HEAD commit; scripts/archives.ts).
 *   3. formula  the Homebrew formula `waitcmd.rb` from the artifacts' URLs
 *               (`<base-url>/v<version>/<archive>`) and checksums. It goes into
 *               the release directory, and into packaging/homebrew/waitcmd.rb
 *               only when every macOS and Linux artifact exists
 *               (scripts/formula.ts).
 *   4. checksums `SHA256SUMS` (sha256sum format) over everything published:
 *               archives, install.sh, waitcmd.rb.
 * plus `RELEASE_NOTES.md` (install instructions with this version's URLs;
 * scripts/release_notes.ts) and
 * `docker/linux-{amd64,arm64}/waitcmd`, the build context of
 * packaging/docker/Dockerfile.
 *
 * The version comes from deno.json. Output: `<dist>/release/` (the files to
 * publish), `<dist>/RELEASE_NOTES.md` and `<dist>/docker/`; `<dist>` is `--dist`, else
 * `WAITCMD_DIST_DIR`, else `dist/`. When a target cannot be compiled (no
 * denort), everything that does not need it is still produced, the blocked
 * step is named, and the exit code is 1.
 *
 * Usage: deno task release [--dist DIR] [--base-url URL] [--skip-compile]
 *                          [--formula-out PATH|none] [--verbose]
 *
 * @module
 */

import { compileAll, distDir, smokeTest, type TargetResult } from "./compile.ts";
import { type ArchiveEntry, archiveName, sha256, sha256sums, tarGz, zip } from "./archives.ts";
import { formula, FORMULA_TARGETS, NOT_BUILT } from "./formula.ts";
import { releaseNotes } from "./release_notes.ts";
import {
  binaryName,
  exeSuffix,
  relative,
  repoRoot,
  type Target,
  TARGETS,
  version,
} from "./targets.ts";

/** Where releases are downloaded from: `<base>/v<version>/<file>` (GitHub's layout). */
export const DEFAULT_BASE_URL = "https://github.com/waitcmd/waitcmd/releases/download";

/** Docker's architecture names of the Linux targets (the container image's platforms). */
export const DOCKER_ARCH: Partial<Record<Target, string>> = {
  "x86_64-unknown-linux-gnu": "amd64",
  "aarch64-unknown-linux-gnu": "arm64",
};

/** Options of {@link release}. */
export interface ReleaseOptions {
  dist: string;
  baseUrl: string;
  skipCompile: boolean;
  /** Repo copy of the formula, written when complete; undefined = don't. */
  formulaOut: string | undefined;
  env: Readonly<Record<string, string>>;
  verbose?: boolean;
  log: (line: string) => void;
}

/** What a release run produced. */
export interface ReleaseResult {
  complete: boolean;
  releaseDir: string;
  built: Target[];
  missing: Target[];
  checksums: Map<string, string>;
}

/** Runs the release steps; see the module documentation. */
export async function release(o: ReleaseOptions): Promise<ReleaseResult> {
  const log = o.log;
  const releaseDir = `${o.dist}/release`;
  log(`release: waitcmd ${version} into ${relative(releaseDir)}/ (downloads from ${o.baseUrl})`);

  // 1. compile
  let results: TargetResult[];
  if (o.skipCompile) {
    results = [];
    for (const target of TARGETS) {
      const output = `${o.dist}/${binaryName(target)}`;
      const exists = await Deno.stat(output).then((s) => s.isFile, () => false);
      // The host's binary must answer as this version (catches a stale dist/).
      const bad = exists && target === Deno.build.target ? await smokeTest(output) : undefined;
      if (bad) log(`release: ${target}: ${bad}`);
      results.push(
        exists && !bad ? { target, status: "built", output } : {
          target,
          status: exists ? "failed" : "blocked",
          reason: bad ?? `no ${relative(output)} (run deno task compile first)`,
        },
      );
    }
    log(
      `release: step 1/4 compile: skipped (--skip-compile): using the binaries in ${
        relative(o.dist)
      }/`,
    );
  } else {
    log("release: step 1/4 compile");
    results = await compileAll(TARGETS, { dist: o.dist, env: o.env, verbose: o.verbose, log });
  }
  const built = results.filter((r) => r.status === "built").map((r) => r.target);
  const missing = results.filter((r) => r.status !== "built").map((r) => r.target);

  // 2. package
  await Deno.remove(releaseDir, { recursive: true }).catch(() => {});
  await Deno.mkdir(releaseDir, { recursive: true });
  const mtime = await sourceDateEpoch(o.env);
  const extras: ArchiveEntry[] = [];
  for (const doc of ["README.md", "LICENSE"]) {
    const data = await Deno.readFile(`${repoRoot}/${doc}`).catch(() => undefined);
    if (data) extras.push({ name: doc, data, mode: 0o644 });
  }
  const checksums = new Map<string, string>();
  for (const r of results) {
    if (r.status !== "built") continue;
    const dir = `waitcmd-${version}-${r.target}`;
    const entries = [
      {
        name: `${dir}/waitcmd${exeSuffix(r.target)}`,
        data: await Deno.readFile(r.output!),
        mode: 0o755,
      },
      ...extras.map((e) => ({ ...e, name: `${dir}/${e.name}` })),
    ];
    const file = archiveName(r.target);
    const bytes = r.target.includes("windows")
      ? await zip(entries, mtime)
      : await tarGz(entries, mtime);
    await Deno.writeFile(`${releaseDir}/${file}`, bytes);
    checksums.set(file, await sha256(bytes));
  }
  // The container image's build context (packaging/docker/Dockerfile): docker's platform names.
  await Deno.remove(`${o.dist}/docker`, { recursive: true }).catch(() => {});
  const platforms: string[] = [];
  for (const r of results) {
    const arch = DOCKER_ARCH[r.target];
    if (r.status !== "built" || !arch) continue;
    await Deno.mkdir(`${o.dist}/docker/linux-${arch}`, { recursive: true });
    await Deno.copyFile(r.output!, `${o.dist}/docker/linux-${arch}/waitcmd`);
    await Deno.chmod(`${o.dist}/docker/linux-${arch}/waitcmd`, 0o755);
    platforms.push(`linux/${arch}`);
  }
  log(
    `release: step 2/4 package: ${checksums.size} archive(s); container build context ${
      relative(o.dist)
    }/docker/ (${platforms.join(", ") || "no linux binary"})` +
      (missing.length ? `; not packaged (no binary): ${missing.join(", ")}` : ""),
  );

  // 3. formula (and the installer, published beside the archives)
  await Deno.copyFile(`${repoRoot}/scripts/install.sh`, `${releaseDir}/install.sh`);
  await Deno.chmod(`${releaseDir}/install.sh`, 0o755);
  const rb = formula({ version, baseUrl: o.baseUrl, checksums });
  await Deno.writeTextFile(`${releaseDir}/waitcmd.rb`, rb);
  const formulaMissing = FORMULA_TARGETS.filter((f) => !checksums.has(archiveName(f.target)));
  if (formulaMissing.length === 0 && o.formulaOut) {
    await Deno.writeTextFile(o.formulaOut, rb);
    log(
      `release: step 3/4 formula: ${relative(releaseDir)}/waitcmd.rb and ${relative(o.formulaOut)}`,
    );
  } else {
    log(
      `release: step 3/4 formula: ${relative(releaseDir)}/waitcmd.rb` +
        (formulaMissing.length
          ? ` (INCOMPLETE: no artifact for ${
            formulaMissing.map((f) => f.target).join(", ")
          }; their checksum reads "${NOT_BUILT}"` +
            (o.formulaOut ? `; ${relative(o.formulaOut)} left unchanged)` : ")")
          : ""),
    );
  }

  // 4. checksums of everything published
  for (const f of ["install.sh", "waitcmd.rb"]) {
    checksums.set(f, await sha256(await Deno.readFile(`${releaseDir}/${f}`)));
  }
  await Deno.writeTextFile(`${releaseDir}/SHA256SUMS`, sha256sums(checksums));
  log(`release: step 4/4 checksums: ${relative(releaseDir)}/SHA256SUMS (${checksums.size} files)`);

  await Deno.writeTextFile(
    `${o.dist}/RELEASE_NOTES.md`,
    releaseNotes(version, o.baseUrl, checksums, missing),
  );
  log(`release: notes: ${relative(o.dist)}/RELEASE_NOTES.md`);

  const complete = missing.length === 0;
  if (complete) {
    log(
      `release: done: ${[...checksums.keys()].length} files ready to publish in ${
        relative(releaseDir)
      }/`,
    );
  } else {
    log(
      `release: BLOCKED at step 1/4 compile: ${missing.length} of ${TARGETS.length} target(s) not built (${
        missing.join(", ")
      }); checksums, formula, installer and notes were produced for the rest. Not publishable.`,
    );
  }
  return { complete, releaseDir, built, missing, checksums };
}

/** SOURCE_DATE_EPOCH, else the HEAD commit's time, else now (seconds). */
async function sourceDateEpoch(env: Readonly<Record<string, string>>): Promise<number> {
  const fromEnv = Number(env.SOURCE_DATE_EPOCH);
  if (env.SOURCE_DATE_EPOCH && Number.isInteger(fromEnv) && fromEnv >= 0) return fromEnv;
  try {
    const out = await new Deno.Command("git", {
      args: ["-C", repoRoot, "log", "-1", "--format=%ct"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const t = Number(new TextDecoder().decode(out.stdout).trim());
    if (out.success && Number.isInteger(t) && t > 0) return t;
  } catch {
    // no git: fall through
  }
  return Math.floor(Date.now() / 1000);
}

/** Parses the release task's arguments; throws on a bad one. */
export function parseArgs(args: readonly string[], env: Readonly<Record<string, string>>): {
  dist: string;
  baseUrl: string;
  skipCompile: boolean;
  formulaOut: string | undefined;
  verbose: boolean;
} {
  let dist: string | undefined;
  let baseUrl = env.WAITCMD_BASE_URL || DEFAULT_BASE_URL;
  let skipCompile = false;
  let formulaOut: string | undefined = `${repoRoot}/packaging/homebrew/waitcmd.rb`;
  let verbose = false;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === "--dist") dist = value();
    else if (flag === "--base-url") baseUrl = value();
    else if (flag === "--skip-compile") skipCompile = true;
    else if (flag === "--formula-out") {
      const v = value();
      formulaOut = v === "none" ? undefined : v;
    } else if (flag === "--verbose" || flag === "-v") verbose = true;
    else throw new Error(`unknown argument "${args[i]}"`);
  }
  if (!/^(https?|file):\/\/./.test(baseUrl)) {
    throw new Error(`--base-url: expected an http(s):// or file:// URL, got "${baseUrl}"`);
  }
  return { dist: distDir(dist, env), baseUrl, skipCompile, formulaOut, verbose };
}

if (import.meta.main) {
  const env = Deno.env.toObject();
  let args;
  try {
    args = parseArgs(Deno.args, env);
  } catch (e) {
    console.error(`release: ${(e as Error).message}`);
    console.error(
      "usage: deno task release [--dist DIR] [--base-url URL] [--skip-compile] [--formula-out PATH|none] [--verbose]",
    );
    Deno.exit(2);
  }
  const result = await release({ ...args, env, log: (l) => console.error(l) });
  Deno.exit(result.complete ? 0 : 1);
}
