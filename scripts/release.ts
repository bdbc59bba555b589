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
 *               SOURCE_DATE_EPOCH or the HEAD commit).
 *   3. formula  the Homebrew formula `waitcmd.rb` from the artifacts' URLs
 *               (`<base-url>/v<version>/<archive>`) and checksums. It goes into
 *               the release directory, and into packaging/homebrew/waitcmd.rb
 *               only when every macOS and Linux artifact exists.
 *   4. checksums `SHA256SUMS` (sha256sum format) over everything published:
 *               archives, install.sh, waitcmd.rb.
 * plus `RELEASE_NOTES.md` (install instructions with this version's URLs) and
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

import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { Uint8ArrayReader, Uint8ArrayWriter, ZipWriter } from "@zip.js/zip.js";
import { compileAll, distDir, smokeTest, type TargetResult } from "./compile.ts";
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

/** The project's home page, for the formula and the notes. */
export const HOMEPAGE = "https://github.com/waitcmd/waitcmd";

/** The four targets the Homebrew formula covers, with Homebrew's names for them. */
export const FORMULA_TARGETS: readonly {
  target: Target;
  os: "macos" | "linux";
  cpu: "arm" | "intel";
}[] = [
  { target: "aarch64-apple-darwin", os: "macos", cpu: "arm" },
  { target: "x86_64-apple-darwin", os: "macos", cpu: "intel" },
  { target: "aarch64-unknown-linux-gnu", os: "linux", cpu: "arm" },
  { target: "x86_64-unknown-linux-gnu", os: "linux", cpu: "intel" },
];

/** Docker's architecture names of the Linux targets (the container image's platforms). */
export const DOCKER_ARCH: Partial<Record<Target, string>> = {
  "x86_64-unknown-linux-gnu": "amd64",
  "aarch64-unknown-linux-gnu": "arm64",
};

/** `waitcmd-<version>-<target>.tar.gz`, or `.zip` for Windows. */
export function archiveName(target: Target, v: string = version): string {
  return `waitcmd-${v}-${target}${target.includes("windows") ? ".zip" : ".tar.gz"}`;
}

/** The download URL of a release file. */
export function assetUrl(baseUrl: string, file: string, v: string = version): string {
  return `${baseUrl.replace(/\/+$/, "")}/v${v}/${file}`;
}

// ---------------------------------------------------------------------------
// Archives (written here so the bytes are reproducible and no zip tool is needed)

/** One file of an archive. */
export interface ArchiveEntry {
  /** Path inside the archive, `/`-separated, without a leading `/`. */
  name: string;
  data: Uint8Array;
  mode: number;
}

/** A ustar archive of `entries` (with their parent directories), gzip-compressed, through tar-stream. */
export async function tarGz(entries: readonly ArchiveEntry[], mtime: number): Promise<Uint8Array> {
  const pack = tar.pack();
  const chunks: Uint8Array[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on("data", (c: unknown) => chunks.push(c as Uint8Array));
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  const header = { mtime: new Date(mtime * 1000), uid: 0, gid: 0, uname: "root", gname: "root" };
  const dirs = new Set<string>();
  for (const e of entries) {
    const parts = e.name.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/") + "/";
      if (dirs.has(dir)) continue;
      dirs.add(dir);
      pack.entry({ ...header, name: dir, type: "directory", mode: 0o755 });
    }
    pack.entry({ ...header, name: e.name, mode: e.mode, size: e.data.length }, e.data);
  }
  pack.finalize();
  await done;
  return new Uint8Array(gzipSync(concat(chunks), { level: 9 }));
}

/** A zip archive (deflated entries with Unix modes) of `entries`, through zip.js. */
export async function zip(entries: readonly ArchiveEntry[], mtime: number): Promise<Uint8Array> {
  const writer = new ZipWriter(new Uint8ArrayWriter(), {
    level: 9,
    // zip's MS-DOS time is read from the Date's local fields: shift it so they are UTC's,
    // and the archive is the same whatever the build machine's time zone.
    lastModDate: new Date((mtime + new Date(mtime * 1000).getTimezoneOffset() * 60) * 1000),
    // Reproducible: no extended timestamps (they would carry the access time) and no workers.
    extendedTimestamp: false,
    useWebWorkers: false,
  });
  for (const e of entries) {
    await writer.add(e.name, new Uint8ArrayReader(e.data), { unixMode: 0o100000 | e.mode });
  }
  return await writer.close();
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Checksums

/** Lower-case hex SHA-256 of `data`. */
export async function sha256(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `SHA256SUMS` text (sha256sum's format, sorted by file name). */
export function sha256sums(sums: ReadonlyMap<string, string>): string {
  return [...sums].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    .map(([file, hash]) => `${hash}  ${file}\n`).join("");
}

/** Parses `SHA256SUMS` text into file -> hash. */
export function parseSha256sums(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trim());
    if (match) m.set(match[2]!, match[1]!.toLowerCase());
  }
  return m;
}

// ---------------------------------------------------------------------------
// Homebrew formula

/** Inputs of {@link formula}. */
export interface FormulaInput {
  version: string;
  baseUrl: string;
  /** archive name -> sha256 of the artifacts that exist. */
  checksums: ReadonlyMap<string, string>;
}

/** The checksum a formula carries for an artifact that was not built (invalid, so brew refuses it). */
export const NOT_BUILT = "not-built";

/**
 * The Homebrew formula for macOS and Linux on arm64 and x86_64. An artifact
 * missing from `checksums` gets the invalid checksum {@link NOT_BUILT} and a
 * comment, so such a formula can never install a wrong file.
 */
export function formula({ version: v, baseUrl, checksums }: FormulaInput): string {
  const block = (os: "macos" | "linux") =>
    FORMULA_TARGETS.filter((f) => f.os === os).map((f) => {
      const file = archiveName(f.target, v);
      const sum = checksums.get(file);
      return [
        `    on_${f.cpu} do`,
        ...(sum ? [] : [`      # NOT BUILT: ${file} was not produced by this release run`]),
        `      url "${assetUrl(baseUrl, file, v)}"`,
        `      sha256 "${sum ?? NOT_BUILT}"`,
        `    end`,
      ].join("\n");
    }).join("\n");
  return `# Generated by \`deno task release\` (scripts/release.ts) for waitcmd ${v}. Do not edit:
# re-run the release task instead.
class Waitcmd < Formula
  desc "Wait until ports, URLs, files, DNS, TLS, containers and services are ready"
  homepage "${HOMEPAGE}"
  version "${v}"

  on_macos do
${block("macos")}
  end

  on_linux do
${block("linux")}
  end

  def install
    bin.install "waitcmd"
  end

  test do
    assert_match "waitcmd #{version} (", shell_output("#{bin}/waitcmd --version")

    # A real wait: the file appears a moment after waitcmd starts polling.
    ready = testpath/"ready"
    writer = spawn("/bin/sh", "-c", "sleep 1; echo up > '#{ready}'")
    system bin/"waitcmd", "--timeout", "30s", "--interval", "100ms", "file", ready, "--contains", "up"
    Process.wait(writer)
    assert_path_exists ready

    # A wait that cannot succeed times out with exit code 1.
    shell_output("#{bin}/waitcmd --timeout 1s --interval 100ms file #{testpath}/never", 1)
  end
end
`;
}

// ---------------------------------------------------------------------------
// Release notes

/** `RELEASE_NOTES.md`: what was published, how to install it, the checksums. */
export function releaseNotes(
  v: string,
  baseUrl: string,
  sums: ReadonlyMap<string, string>,
  missing: readonly Target[],
): string {
  const rows = [...sums].sort(([a], [b]) => a < b ? -1 : 1)
    .map(([f, h]) => `| [\`${f}\`](${assetUrl(baseUrl, f, v)}) | \`${h}\` |`);
  return [
    `# waitcmd ${v}`,
    "",
    ...(missing.length
      ? [
        `> **Incomplete build:** no artifact for ${
          missing.map((t) => `\`${t}\``).join(", ")
        } (no denort available to \`deno compile\`). Do not publish.`,
        "",
      ]
      : []),
    "## Install",
    "",
    "```sh",
    `curl -fsSL ${assetUrl(baseUrl, "install.sh", v)} | sh -s -- --version ${v}`,
    "```",
    "",
    "Or download the archive for your platform, check it against `SHA256SUMS`",
    "(`sha256sum --check --ignore-missing SHA256SUMS`, or `shasum -a 256 -c` on macOS)",
    "and put `waitcmd` on your PATH. Homebrew: `waitcmd.rb` is the formula for this release.",
    "",
    "## Files",
    "",
    "| file | sha256 |",
    "|---|---|",
    ...rows,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------
// The release task

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
