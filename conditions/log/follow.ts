/**
 * The log kind's reader: follows one path the way `tail -F` does and feeds
 * what was added since the last attempt to the line matcher (match.ts).
 *
 * - Everything added is read (no backlog cap), with two fixed read buffers
 *   that are also the byte searcher's memory (conditions/_common/bytes.ts),
 *   so a `--contains` search needs no copy; the next read fills one buffer
 *   while the other is scanned.
 * - A file that does not exist at the first attempt is read from its start
 *   when it appears.
 * - Rename + create rotation: the old file stays open (identified by device
 *   and inode) and is read to its end before the new file, and for a while
 *   after in case a writer still appends to it (timed on the engine's
 *   clock). Truncation (copytruncate) is noticed by the size dropping below
 *   the read offset, or by the bytes just before the offset changing; the
 *   rest of the old content is then read from the copy the rotation left
 *   beside the log (same name plus a suffix), and reading restarts at 0.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { createSearchers, type Searcher } from "../_common/bytes.ts";
import { feed, type LineMatcher, MAX_LINE, PartialLine } from "./match.ts";
import type { StartAt } from "./mod.ts";

/** Bytes read at once: as much as the longest line that is matched in full. */
export const READ_SIZE = MAX_LINE;
/** A rotated-away file is still read until it has not grown for this long. */
export const LINGER_MS = 5000;
/** At most this many rotated-away files are kept open. */
const MAX_OLD = 4;
/** Bytes before the read offset remembered to notice a truncated-and-regrown file. */
const SIG = 16;
/**
 * Bytes of the file's start remembered too: a log of look-alike lines can bring back the same
 * bytes before the offset after a truncation, but rarely its own first line (a timestamp, a
 * sequence number).
 */
const HEAD = 64;
const NL = 10;

/** One open file being read. */
class Source {
  readonly partial = new PartialLine();
  /** The last bytes before `pos`, to notice a truncated file that grew back past `pos`. */
  readonly sig = new Uint8Array(SIG);
  sigLen = 0;
  /** The file's first bytes, as read from offset 0. */
  readonly head = new Uint8Array(HEAD);
  headLen = 0;

  constructor(
    readonly file: Deno.FsFile,
    readonly dev: number,
    readonly ino: number | null,
    public pos: number,
    /** When it last grew (or was opened), on the engine's clock. */
    public grewAt: number,
  ) {}

  /** The file's modification time when last drained (ms since the epoch; a file's data). */
  mtime = 0;

  is(info: Deno.FileInfo): boolean {
    // Without inode numbers (some platforms) a replaced file is only noticed by truncation.
    if (this.ino === null || info.ino === null) return true;
    return info.dev === this.dev && info.ino === this.ino;
  }

  /** Keeps the last bytes before the offset, and the file's first bytes while they pass by. */
  remember(buf: Uint8Array, n: number): void {
    const at = this.pos - n;
    if (at < HEAD && at === this.headLen) {
      const take = Math.min(n, HEAD - at);
      this.head.set(buf.subarray(0, take), at);
      this.headLen = at + take;
    }
    if (n >= SIG) {
      this.sig.set(buf.subarray(n - SIG, n));
      this.sigLen = SIG;
      return;
    }
    const keep = Math.min(this.sigLen, SIG - n);
    this.sig.copyWithin(0, this.sigLen - keep, this.sigLen);
    this.sig.set(buf.subarray(0, n), keep);
    this.sigLen = keep + n;
  }

  restart(): void {
    this.pos = 0;
    this.sigLen = 0;
    this.headLen = 0;
    this.partial.clear();
  }

  close(): void {
    try {
      this.file.close();
    } catch (e) {
      // Already closed (close() raced with an attempt): nothing is held any more.
      if (!(e instanceof Deno.errors.BadResource)) throw e;
    }
  }
}

/** What one poll found. */
export type PollState =
  | { readonly state: "open" }
  | { readonly state: "missing" }
  | { readonly state: "error"; readonly error: string };

/** Follows one path across attempts. Polls must not overlap (the caller serialises them). */
export class LogFollower {
  readonly #path: string;
  readonly #matcher: LineMatcher;
  readonly #clock: Clock;
  /** Two read buffers: the next read fills one while the other is scanned. */
  readonly #searchers: [Searcher, Searcher];
  #startAt: StartAt;
  #cur: Source | undefined;
  #olds: Source[] = [];
  #closed = false;
  readonly #sigBuf = new Uint8Array(SIG);
  readonly #headBuf = new Uint8Array(HEAD);
  /** Inodes of rotated files read whole already (bounded). */
  readonly #readInodes: number[] = [];

  /** Follows `path` from `startAt`, counting with `matcher`; lingering is timed on `clock`. */
  constructor(path: string, startAt: StartAt, matcher: LineMatcher, clock: Clock) {
    this.#path = path;
    this.#startAt = startAt;
    this.#matcher = matcher;
    this.#clock = clock;
    const [a, b] = createSearchers(matcher.needle, READ_SIZE, 2);
    this.#searchers = [a!, b!];
  }

  /** Whether a rotated-away file is still being read (its writes count too). */
  get lingering(): boolean {
    return this.#olds.length > 0;
  }

  /** Reads everything added since the last poll; stops early once the matcher is done. */
  async poll(signal: AbortSignal): Promise<PollState> {
    if (this.#closed) return { state: "error", error: "closed" };
    const m = this.#matcher;
    for (const old of [...this.#olds]) {
      const grew = await this.#drain(old, signal);
      if (m.done || signal.aborted) return { state: "open" };
      if (!grew && this.#clock.now() - old.grewAt > LINGER_MS) this.#retire(old);
    }
    if (!this.#cur) {
      const opened = await this.#openFirst(signal);
      if (opened.state !== "open") return opened;
    }
    const cur = this.#cur!;
    await this.#drain(cur, signal);
    if (m.done || signal.aborted) return { state: "open" };
    await this.#followRotation(cur, signal);
    return { state: "open" };
  }

  /** Closes every file; a poll under way ends with an error. */
  close(): void {
    this.#closed = true;
    this.#cur?.close();
    this.#cur = undefined;
    for (const o of this.#olds) o.close();
    this.#olds = [];
  }

  async #openFirst(signal: AbortSignal): Promise<PollState> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.#path, { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        // Created later: all of it is new content.
        this.#startAt = { from: "start" };
        return { state: "missing" };
      }
      throw e;
    }
    try {
      const info = await file.stat();
      if (!info.isFile) {
        file.close();
        return {
          state: "error",
          error: info.isDirectory ? "is a directory" : "not a regular file",
        };
      }
      const pos = await this.#startOffset(file, info, signal);
      this.#startAt = { from: "start" };
      this.#cur = new Source(file, info.dev, info.ino, pos, this.#clock.now());
      if (this.#closed) this.close();
      return { state: "open" };
    } catch (e) {
      file.close();
      throw e;
    }
  }

  /**
   * Where reading starts in the file opened first: 0 with `--from-start`, for a file that did
   * not exist when the command line was read, or one replaced or truncated since; else the
   * start of the last `lines` lines of the content there was then (or now, without a mark).
   */
  async #startOffset(file: Deno.FsFile, info: Deno.FileInfo, signal: AbortSignal): Promise<number> {
    const at = this.#startAt;
    if (at.from === "start" || at.seen === null) return 0;
    const seen = at.seen;
    if (seen && (seen.dev !== info.dev || seen.ino !== (info.ino ?? 0) || info.size < seen.size)) {
      return 0;
    }
    return await this.#tailOffset(file, seen?.size ?? info.size, at.lines, signal);
  }

  /** Offset of the start of the last `lines` complete lines of the first `size` bytes. */
  async #tailOffset(
    file: Deno.FsFile,
    size: number,
    lines: number,
    signal: AbortSignal,
  ): Promise<number> {
    const buf = this.#searchers[0].buffer;
    let end = size;
    let newlines = 0;
    while (end > 0) {
      signal.throwIfAborted();
      const start = Math.max(0, end - buf.length);
      const n = await readAt(file, start, buf, end - start);
      let i = n - 1;
      while (i >= 0) {
        i = buf.lastIndexOf(NL, i);
        if (i < 0) break;
        // The last newline ends the last complete line; the one before it starts it.
        if (++newlines === lines + 1) return start + i + 1;
        i--;
      }
      end = start;
    }
    return 0;
  }

  /** Reads `src` from its offset to its end; true when anything was read. */
  async #drain(src: Source, signal: AbortSignal): Promise<boolean> {
    const info = await src.file.stat();
    src.mtime = info.mtime?.getTime() ?? 0;
    // Truncated (copytruncate): the content starts over. A file that grew back to or
    // past the offset before this look shows it by other bytes just before the offset.
    if (info.size < src.pos || !(await this.#sameBytes(src))) {
      // What was written after our last read and before the truncation lives on only in
      // the copy the rotation made: read it from there first (docs/contract.md §5 log).
      if (src === this.#cur) await this.#readCopy(src, signal);
      src.restart();
    }
    if (info.size === src.pos) return false;
    await src.file.seek(src.pos, Deno.SeekMode.Start);
    const m = this.#matcher;
    let [cur, next] = this.#searchers;
    let grew = false;
    let reading: Promise<number | null> | undefined = src.file.read(cur.buffer);
    try {
      while (reading) {
        const n = await reading;
        reading = undefined;
        if (n === null || n === 0 || signal.aborted) break;
        // Read ahead into the other buffer while this one is scanned.
        reading = src.file.read(next.buffer);
        src.pos += n;
        grew = true;
        src.remember(cur.buffer, n);
        feed(src.partial, m, cur.buffer, n, cur.find);
        await m.drain(signal);
        if (m.done) break;
        [cur, next] = [next, cur];
      }
    } finally {
      // A read ahead that is not used is read again next time (`pos` excludes it).
      await reading?.catch(() => null);
    }
    if (grew) src.grewAt = this.#clock.now();
    return grew;
  }

  /**
   * After a copytruncate, reads what only the rotation's copy holds: among
   * the files beside the log whose name starts with its name (`app.log.1`,
   * `app.log-20261123`; compressed ones are skipped), the copy of the file
   * we were reading (same first bytes, same bytes before our offset) from our
   * offset on, then whole every copy made after it (rotations that came
   * before we looked again), oldest first. Lines are lost only when no such
   * copy exists any more (already compressed or removed), and a line written
   * between a copy and its truncation is lost by copytruncate itself.
   */
  async #readCopy(src: Source, signal: AbortSignal): Promise<void> {
    if (src.sigLen === 0) return;
    const copies = await this.#siblings();
    const at = copies.findIndex((c) => c.size >= src.pos);
    for (let i = at < 0 ? copies.length : at; i < copies.length; i++) {
      signal.throwIfAborted();
      if (await this.#readFromCopy(copies[i]!.path, src, signal)) {
        // Copies made by later rotations, before we looked, hold whole cycles of the log.
        for (const later of copies.slice(i + 1)) {
          if (this.#matcher.done) return;
          src.partial.clear();
          await this.#readWhole(later.path, src, signal);
        }
        src.partial.clear();
        return;
      }
    }
  }

  /**
   * After a rename rotation: the files beside the log (same name plus a
   * suffix, not compressed) that are neither the old file nor the new one nor
   * one read already, and were modified since the old file was last read,
   * were created and renamed away between two looks. Each is read whole,
   * oldest first.
   */
  async #readRotatedBetween(cur: Source, fresh: Deno.FileInfo, signal: AbortSignal) {
    if (cur.ino === null || fresh.ino === null) return;
    const known = new Set<number>([cur.ino, fresh.ino, ...this.#readInodes]);
    for (const o of this.#olds) if (o.ino !== null) known.add(o.ino);
    const between = (await this.#siblings()).filter((c) =>
      !known.has(c.ino) && c.mtime >= cur.mtime
    );
    for (const c of between) {
      if (this.#matcher.done) return;
      signal.throwIfAborted();
      cur.partial.clear();
      await this.#readWhole(c.path, cur, signal);
      this.#readInodes.push(c.ino);
      if (this.#readInodes.length > 64) this.#readInodes.shift();
    }
    cur.partial.clear();
  }

  /**
   * The files beside the log whose name starts with its name, compressed ones
   * left out, oldest first (copies made within one clock tick by their numeric
   * suffix).
   */
  async #siblings(): Promise<{ path: string; mtime: number; size: number; ino: number }[]> {
    const slash = this.#path.lastIndexOf("/");
    const dir = slash < 0 ? "." : this.#path.slice(0, slash) || "/";
    const base = this.#path.slice(slash + 1);
    const found: { path: string; name: string; mtime: number; size: number; ino: number }[] = [];
    try {
      for await (const e of Deno.readDir(dir)) {
        // Compressed copies hold no lines we could read.
        if (!e.isFile || e.name === base || !e.name.startsWith(base)) continue;
        if (/\.(gz|bz2|xz|zst|lz4|z)$/i.test(e.name)) continue;
        const path = `${dir}/${e.name}`;
        const info = await Deno.stat(path).catch(() => undefined);
        if (!info) continue;
        found.push({
          path,
          name: e.name,
          mtime: info.mtime?.getTime() ?? 0,
          size: info.size,
          ino: info.ino ?? -1,
        });
      }
    } catch {
      return []; // the directory cannot be listed: nothing to recover from
    }
    const num = (name: string) => Number(/(\d+)\D*$/.exec(name)?.[1] ?? 0);
    return found.sort((a, b) => a.mtime - b.mtime || num(a.name) - num(b.name));
  }

  /**
   * Reads the copy at `path` from `src`'s offset when it is the copy of
   * `src` (same first bytes, same bytes before the offset); false otherwise.
   */
  async #readFromCopy(path: string, src: Source, signal: AbortSignal): Promise<boolean> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch {
      return false;
    }
    try {
      const n = await readAt(file, src.pos - src.sigLen, this.#sigBuf, src.sigLen);
      if (n !== src.sigLen || this.#sigBuf.some((b, i) => b !== src.sig[i])) return false;
      const h = await readAt(file, 0, this.#headBuf, src.headLen);
      if (h !== src.headLen || this.#headBuf.some((b, i) => i < h && b !== src.head[i])) {
        return false;
      }
      await this.#feedFrom(file, src.pos, src, signal);
      return true;
    } finally {
      file.close();
    }
  }

  async #readWhole(path: string, src: Source, signal: AbortSignal): Promise<void> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch {
      return;
    }
    try {
      await this.#feedFrom(file, 0, src, signal);
    } finally {
      file.close();
    }
  }

  /** Feeds `file` from `pos` to its end to the matcher, continuing `src`'s partial line. */
  async #feedFrom(file: Deno.FsFile, pos: number, src: Source, signal: AbortSignal) {
    const m = this.#matcher;
    const { buffer, find } = this.#searchers[0];
    while (!m.done) {
      signal.throwIfAborted();
      const got = await readAt(file, pos, buffer, buffer.length);
      if (got === 0) break;
      pos += got;
      feed(src.partial, m, buffer, got, find);
      await m.drain(signal);
    }
  }

  /** Whether the file's first bytes and the bytes just before the offset are still those read. */
  async #sameBytes(src: Source): Promise<boolean> {
    if (src.headLen > 0) {
      const n = await readAt(src.file, 0, this.#headBuf, src.headLen);
      if (n !== src.headLen) return false;
      for (let i = 0; i < n; i++) if (this.#headBuf[i] !== src.head[i]) return false;
    }
    if (src.sigLen === 0) return true;
    const n = await readAt(src.file, src.pos - src.sigLen, this.#sigBuf, src.sigLen);
    if (n !== src.sigLen) return false;
    for (let i = 0; i < n; i++) if (this.#sigBuf[i] !== src.sig[i]) return false;
    return true;
  }

  /** If the path now names another file, finish the current one and switch to the new one. */
  async #followRotation(cur: Source, signal: AbortSignal): Promise<void> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(this.#path);
    } catch {
      return; // renamed or deleted and not recreated yet: keep reading the open file
    }
    if (cur.is(info) || !info.isFile) return;
    // Rotated: drain what was written to the old file meanwhile, then start the new one.
    await this.#drain(cur, signal);
    if (this.#matcher.done || signal.aborted) return;
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.#path, { read: true });
    } catch {
      return; // gone again; the next poll looks again
    }
    const fresh = await file.stat();
    if (cur.is(fresh) || !fresh.isFile || this.#closed) {
      file.close();
      return;
    }
    // Files rotated in and out again between two looks were never open: read them now.
    await this.#readRotatedBetween(cur, fresh, signal);
    if (this.#matcher.done || signal.aborted) {
      file.close();
      return;
    }
    cur.grewAt = this.#clock.now();
    this.#olds.push(cur);
    if (this.#olds.length > MAX_OLD) this.#retire(this.#olds[0]!);
    const next = new Source(file, fresh.dev, fresh.ino, 0, this.#clock.now());
    this.#cur = next;
    await this.#drain(next, signal);
  }

  #retire(old: Source): void {
    // Remembered, so it is never taken for a file rotated away unseen (#readRotatedBetween).
    if (old.ino !== null) this.#readInodes.push(old.ino);
    if (this.#readInodes.length > 64) this.#readInodes.shift();
    old.close();
    this.#olds = this.#olds.filter((o) => o !== old);
  }
}

/** Reads up to `n` bytes at `offset` into `buf[0, n)`; returns how many were read. */
async function readAt(
  file: Deno.FsFile,
  offset: number,
  buf: Uint8Array,
  n: number,
): Promise<number> {
  await file.seek(offset, Deno.SeekMode.Start);
  let got = 0;
  while (got < n) {
    const r = await file.read(buf.subarray(got, n));
    if (r === null || r === 0) break;
    got += r;
  }
  return got;
}
