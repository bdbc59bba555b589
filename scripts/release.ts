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

import { deflateRawSync, gzipSync } from "node:zlib";
import {
  binaryName,
  compileAll,
  distDir,
  exeSuffix,
  relative,
  repoRoot,
  smokeTest,
  type Target,
  type TargetResult,
  TARGETS,
  version,
} from "./compile.ts";

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

/** A ustar archive of `entries` (with their parent directories), gzip-compressed. */
export function tarGz(entries: readonly ArchiveEntry[], mtime: number): Uint8Array {
  const blocks: Uint8Array[] = [];
  const dirs = new Set<string>();
  for (const e of entries) {
    const parts = e.name.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/") + "/";
      if (!dirs.has(dir)) {
        dirs.add(dir);
        blocks.push(tarHeader(dir, 0, 0o755, mtime, "5"));
      }
    }
    blocks.push(tarHeader(e.name, e.data.length, e.mode, mtime, "0"));
    blocks.push(e.data);
    const pad = (512 - (e.data.length % 512)) % 512;
    if (pad) blocks.push(new Uint8Array(pad));
  }
  let size = blocks.reduce((n, b) => n + b.length, 0) + 1024;
  size = Math.ceil(size / 10240) * 10240; // a whole number of 20-block records
  const tar = new Uint8Array(size);
  let off = 0;
  for (const b of blocks) {
    tar.set(b, off);
    off += b.length;
  }
  return new Uint8Array(gzipSync(tar, { level: 9 }));
}

function tarHeader(name: string, size: number, mode: number, mtime: number, type: string) {
  const h = new Uint8Array(512);
  const enc = new TextEncoder();
  let prefix = "";
  let base = name;
  if (enc.encode(name).length > 100) {
    const cut = name.lastIndexOf("/", name.length - 2);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
    if (enc.encode(base).length > 100 || enc.encode(prefix).length > 155) {
      throw new Error(`path too long for a tar header: ${name}`);
    }
  }
  const put = (off: number, len: number, s: string) => h.set(enc.encode(s).subarray(0, len), off);
  const oct = (off: number, len: number, n: number) =>
    put(off, len, n.toString(8).padStart(len - 1, "0") + "\0");
  put(0, 100, base);
  oct(100, 8, mode);
  oct(108, 8, 0); // uid
  oct(116, 8, 0); // gid
  oct(124, 12, size);
  oct(136, 12, mtime);
  put(148, 8, "        "); // checksum placeholder: spaces
  put(156, 1, type);
  put(257, 8, "ustar\u000000");
  put(265, 32, "root");
  put(297, 32, "root");
  put(345, 155, prefix);
  const sum = h.reduce((a, b) => a + b, 0);
  put(148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (zip's) of `data`. */
export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip archive (deflated entries with Unix modes) of `entries`. */
export function zip(entries: readonly ArchiveEntry[], mtime: number): Uint8Array {
  const d = new Date(mtime * 1000);
  const dosTime = (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1);
  const dosDate = (Math.max(0, d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) |
    d.getUTCDate();
  const enc = new TextEncoder();
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = enc.encode(e.name);
    const packed = new Uint8Array(deflateRawSync(e.data, { level: 9 }));
    const crc = crc32(e.data);
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(4, 20, true); // version needed
    lv.setUint16(6, 0x0800, true); // UTF-8 names
    lv.setUint16(8, 8, true); // deflate
    lv.setUint16(10, dosTime, true);
    lv.setUint16(12, dosDate, true);
    lv.setUint32(14, crc, true);
    lv.setUint32(18, packed.length, true);
    lv.setUint32(22, e.data.length, true);
    lv.setUint16(26, name.length, true);
    local.set(name, 30);
    const central = new Uint8Array(46 + name.length);
    const cv = new DataView(central.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, (3 << 8) | 20, true); // made by: Unix, 2.0
    cv.setUint16(6, 20, true);
    cv.setUint16(8, 0x0800, true);
    cv.setUint16(10, 8, true);
    cv.setUint16(12, dosTime, true);
    cv.setUint16(14, dosDate, true);
    cv.setUint32(16, crc, true);
    cv.setUint32(20, packed.length, true);
    cv.setUint32(24, e.data.length, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(38, ((0o100000 | e.mode) << 16) >>> 0, true); // external attrs: regular file + mode
    cv.setUint32(42, offset, true);
    central.set(name, 46);
    locals.push(local, packed);
    centrals.push(central);
    offset += local.length + packed.length;
  }
  const cdSize = centrals.reduce((n, c) => n + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, entries.length, true);
  ev.setUint16(10, entries.length, true);
  ev.setUint32(12, cdSize, true);
  ev.setUint32(16, offset, true);
  const parts = [...locals, ...centrals, end];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
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
    const bytes = r.target.includes("windows") ? zip(entries, mtime) : tarGz(entries, mtime);
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
