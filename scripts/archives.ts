/**
 * The release's archives: their names and download URLs, their bytes
 * (`.tar.gz`, `.zip` for Windows: written here so the bytes are reproducible
 * and no zip tool is needed) and their checksums (`SHA256SUMS`).
 * scripts/release.ts writes them; the formula and the notes name them.
 *
 * @module
 */

import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { Uint8ArrayReader, Uint8ArrayWriter, ZipWriter } from "@zip.js/zip.js";
import { type Target, version } from "./targets.ts";

/** `waitcmd-<version>-<target>.tar.gz`, or `.zip` for Windows. */
export function archiveName(target: Target, v: string = version): string {
  return `waitcmd-${v}-${target}${target.includes("windows") ? ".zip" : ".tar.gz"}`;
}

/** The download URL of a release file. */
export function assetUrl(baseUrl: string, file: string, v: string = version): string {
  return `${baseUrl.replace(/\/+$/, "")}/v${v}/${file}`;
}

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
