/**
 * Reading archives to their end with maintained libraries, streamed:
 * tar-stream (after the web `DecompressionStream("gzip")` for tar.gz) and
 * zip.js, whose every entry is read and discarded so its CRC-32 is checked.
 * Memory stays bounded whatever the archive's size.
 *
 * @module
 */

import { configure, Reader, ZipReader } from "@zip.js/zip.js";
import tar from "tar-stream";
import { readHead } from "../../engine/files.ts";

configure({ useWebWorkers: false });

/** Archive formats this kind reads. */
export type Format = "tar" | "tgz" | "zip";

/** How each format is named in outcome texts. */
export const FORMAT_NAMES: Readonly<Record<Format, string>> = {
  tar: "tar",
  tgz: "tar.gz",
  zip: "zip",
};

/** One member of an archive. */
export interface Member {
  /** Its name without a leading `./` or `/` and a trailing `/`. */
  readonly name: string;
  readonly dir: boolean;
}

/** Tar's block size; an archive ends with two zero blocks. */
const BLOCK = 512;

/** The format the first bytes of `path` show, or undefined (not an archive, or not yet). */
export async function sniffFormat(path: string): Promise<Format | undefined> {
  const b = await readHead(path, BLOCK);
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return "tgz";
  if (b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && [3, 5, 7].includes(b[2]!)) {
    return "zip"; // PK\3\4 (a local header), PK\5\6 (an empty zip), PK\7\8 (spanned marker)
  }
  if (b.length >= 262 && new TextDecoder().decode(b.subarray(257, 262)) === "ustar") return "tar";
  return undefined;
}

/** A member name as compared: without a leading `./` or `/` and a trailing `/`. */
function normalize(name: string): string {
  let n = name;
  while (n.startsWith("./")) n = n.slice(2);
  return n.replace(/^\/+/, "").replace(/\/+$/, "");
}

/** The header fields of a tar-stream entry this module reads. */
interface TarHeader {
  readonly name: string;
  readonly type: string;
  readonly size?: number;
  /** Offset of the entry's data in the (decompressed) stream. */
  readonly byteOffset: number;
}

/**
 * Every member of the tar (or, with `gzip`, tar.gz) archive at `path`, read
 * to its end. Throws on a truncated or corrupt archive, including one that
 * stops cleanly between two members: the end-of-archive zero blocks must be
 * there.
 */
export async function listTar(
  path: string,
  gzip: boolean,
  signal?: AbortSignal,
): Promise<Member[]> {
  const file = await Deno.open(path, { read: true });
  const extract = tar.extract();
  const members: Member[] = [];
  let failure: unknown;
  let total = 0;
  let lastEnd = 0;
  const consume = (async () => {
    for await (const entry of extract) {
      const h = entry.header as unknown as TarHeader;
      members.push({ name: normalize(h.name), dir: h.type === "directory" });
      lastEnd = h.byteOffset + Math.ceil((h.size ?? 0) / BLOCK) * BLOCK;
      entry.resume(); // discard the data
    }
  })().catch((e: unknown) => {
    failure = e ?? new Error("unreadable tar stream");
  });
  let source: ReadableStream<Uint8Array> = file.readable;
  if (gzip) {
    source = source.pipeThrough(
      new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>,
    );
  }
  const reader = source.getReader();
  try {
    while (failure === undefined) {
      signal?.throwIfAborted();
      const { value, done } = await reader.read();
      if (done) break;
      total += value.length;
      if (!extract.write(value)) {
        await new Promise<void>((resolve) => {
          extract.once("drain", resolve);
          extract.once("close", resolve);
        });
      }
    }
    if (failure === undefined) (extract as unknown as { end(): void }).end();
    await consume;
  } catch (e) {
    extract.destroy();
    await consume;
    throw e;
  } finally {
    await reader.cancel().catch(() => {});
    try {
      file.close();
    } catch {
      // Closed by the stream already.
    }
  }
  if (failure !== undefined) throw failure;
  // tar-stream skips zero blocks silently; two of them after the last member close the archive.
  if (total - lastEnd < 2 * BLOCK) {
    throw new Error("it ends without the end-of-archive blocks (truncated or still being written)");
  }
  return members;
}

/** zip.js reading a file in place (random access), so a large zip is never held in memory. */
class FileReader extends Reader<string> {
  readonly #path: string;
  #file: Deno.FsFile | undefined;

  constructor(path: string) {
    super(path);
    this.#path = path;
  }

  override async init(): Promise<void> {
    this.#file = await Deno.open(this.#path, { read: true });
    this.size = (await this.#file.stat()).size;
  }

  override async readUint8Array(index: number, length: number): Promise<Uint8Array> {
    const file = this.#file!;
    const buf = new Uint8Array(length);
    await file.seek(index, Deno.SeekMode.Start);
    let got = 0;
    while (got < length) {
      const r = await file.read(buf.subarray(got));
      if (r === null) break;
      got += r;
    }
    return got === length ? buf : buf.subarray(0, got);
  }

  close(): void {
    try {
      this.#file?.close();
    } catch {
      // Already closed.
    }
    this.#file = undefined;
  }
}

/**
 * The most members of a zip read (docs/contract.md §9): zip.js takes about 30 µs and a few KB
 * per entry of the central directory, and checking an entry's data about 1 ms, so an archive
 * of a million empty entries (a few MB) would hold an attempt for minutes and gigabytes.
 */
export const ZIP_MAX_MEMBERS = 100_000;

/**
 * Every member of the zip archive at `path`. Each entry's data is read and
 * discarded so a corrupt one fails its CRC-32 check: a listing alone would
 * not notice it (an empty entry has nothing to check). Entries are read one
 * at a time, never all held; more than `ZIP_MAX_MEMBERS` is an error. Throws
 * on a truncated or corrupt archive.
 */
export async function listZip(path: string, signal?: AbortSignal): Promise<Member[]> {
  const reader = new FileReader(path);
  const zip = new ZipReader(reader, { checkCrc32: true, signal });
  const members: Member[] = [];
  try {
    for await (const e of zip.getEntriesGenerator()) {
      signal?.throwIfAborted();
      if (members.length === ZIP_MAX_MEMBERS) {
        const cap = ZIP_MAX_MEMBERS.toLocaleString("en");
        throw new Error(`it has more than ${cap} members (waitcmd reads at most ${cap})`);
      }
      members.push({ name: normalize(e.filename), dir: e.directory });
      if (e.directory) continue;
      if (e.uncompressedSize === 0 && e.compressedSize <= 2) continue; // (deflated: 2 bytes)
      await e.getData(new WritableStream<Uint8Array>(), { checkCrc32: true, signal });
    }
    return members;
  } finally {
    await zip.close().catch(() => {});
    reader.close();
  }
}
