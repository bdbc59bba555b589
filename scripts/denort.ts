/**
 * A trusted denort for `deno task compile` (scripts/compile.ts): `deno compile` embeds the
 * program into `denort`, Deno's runtime-only binary, which it normally downloads from
 * dl.deno.land unchecked. Here denort is found as
 *
 * - `DENORT_BIN=/path/to/denort`: the denort of this machine's own target
 *   (Deno's own variable; used for the host target only);
 * - `DENORT_DIR=/path/to/dir`: one file per target, either the official
 *   archive `denort-<target>.zip` (as published at
 *   `https://dl.deno.land/release/v<deno>/denort-<target>.zip`) or the
 *   extracted binary renamed `denort-<target>` / `denort-<target>.exe`;
 * - neither set: the official archive, downloaded and accepted only when its
 *   SHA-256 equals the one pinned for this Deno version and target in
 *   `scripts/denort-sums.txt` (`WAITCMD_DENORT_SUMS` names another file;
 *   `WAITCMD_DENORT_URL` replaces `https://dl.deno.land/release`). A
 *   version/target with no pinned sum is not downloaded at all.
 *
 * A target without a denort is reported as missing, naming the file that is
 * missing and where to put it. Every denort found is checked to be an
 * executable of the right OS and CPU, and not the full `deno` CLI (whose
 * "compiled" result starts a REPL).
 *
 * @module
 */

import { inflateRawSync } from "node:zlib";
import { exeSuffix, isFile, isTarget, relative, type Target } from "./targets.ts";
import { readHead } from "../engine/files.ts";
import { concatBytes } from "../conditions/_common/stream.ts";

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

/** The pinned SHA-256 sums of the official denort archives (see {@link parseDenortSums}). */
export const DENORT_SUMS_FILE: string = new URL("./denort-sums.txt", import.meta.url).pathname;

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
  const data = concatBytes(chunks, size);
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

// ---------------------------------------------------------------------------
// Reading archives and executables (readZip also serves the release tests)

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

async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([Deno.stat(a), Deno.stat(b)]);
    return x.dev === y.dev && x.ino === y.ino && x.ino !== null;
  } catch {
    return false;
  }
}
