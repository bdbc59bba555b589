/**
 * The log kind's reader: follows one path the way `tail -F` does, splits
 * what was added since the last attempt into lines and counts the lines that
 * match.
 *
 * - Everything added is read (no backlog cap), with one fixed read buffer;
 *   only the unfinished last line of each file is kept (at most
 *   `MAX_LINE` bytes of it: a longer line is matched on its first
 *   `MAX_LINE` bytes and the rest of the stream is unaffected).
 * - A line counts once its newline is written; a trailing `\r` is dropped.
 * - A file that does not exist at the first attempt is read from its start
 *   when it appears.
 * - Rename + create rotation: the old file stays open (identified by device
 *   and inode) and is read to its end before the new file, and for a while
 *   after in case a writer still appends to it. Truncation (copytruncate) is
 *   noticed by the size dropping below the read offset, or by the bytes just
 *   before the offset changing, and reading restarts at 0.
 * - A literal `--contains` is searched in the raw bytes (WebAssembly SIMD,
 *   falling back to Boyer-Moore-Horspool) and only matching lines are
 *   decoded; `--matches` alone decodes every line.
 *
 * @module
 */

import { indexOfBytes } from "./_bytes.ts";

/** Bytes read at once, and the longest line that is matched in full. */
export const READ_SIZE = 4 << 20;
/** Longest line kept whole; the rest of a longer line is skipped up to its newline. */
export const MAX_LINE = READ_SIZE;
/** A rotated-away file is still read until it has not grown for this long. */
export const LINGER_MS = 5000;
/** At most this many rotated-away files are kept open. */
const MAX_OLD = 4;
/** Bytes before the read offset remembered to notice a truncated-and-regrown file. */
const SIG = 16;
const NL = 10;
const CR = 13;

/** What a line must satisfy. */
export interface MatchSpec {
  /** The line includes this text. */
  readonly contains?: string;
  /** The line matches this expression. */
  readonly matches?: RegExp;
  /** Lines including any of these are ignored. */
  readonly exclude?: readonly string[];
  /** Matching lines needed (at least 1). */
  readonly required: number;
}

/** Counts matching lines; one counter serves every file a follower reads, so rotation keeps the count. */
export class LineMatcher {
  /** Matching lines seen so far (never more than `required`). */
  count = 0;
  /** The last matching line, without its line ending. */
  last = "";
  readonly required: number;
  /** The `contains` text as bytes, if any. */
  readonly needle: Uint8Array | undefined;
  readonly #excludeBytes: Uint8Array[];
  readonly #excludeTexts: readonly string[];
  readonly #re: RegExp | undefined;
  readonly #decoder = new TextDecoder();

  constructor(spec: MatchSpec) {
    const enc = new TextEncoder();
    this.required = spec.required;
    this.needle = spec.contains === undefined ? undefined : enc.encode(spec.contains);
    this.#excludeTexts = spec.exclude ?? [];
    this.#excludeBytes = this.#excludeTexts.map((t) => enc.encode(t));
    this.#re = spec.matches;
  }

  /** Whether `required` matching lines were seen. */
  get done(): boolean {
    return this.count >= this.required;
  }

  /**
   * Matches the complete lines in `buf[start, end)`: `buf[end - 1]` is a
   * newline, and `start` is 0 or follows a newline. `find(from, to)` searches
   * `buf` for the needle (a faster search than the default one).
   */
  region(
    buf: Uint8Array,
    start: number,
    end: number,
    find?: (from: number, to: number) => number,
  ): void {
    const needle = this.needle;
    if (needle) {
      const search = find ??
        ((from: number, to: number) => indexOfBytes(buf.subarray(0, to), needle, from));
      let from = start;
      while (from < end && !this.done) {
        const at = search(from, end);
        if (at < 0) return;
        const lineStart = buf.lastIndexOf(NL, at) + 1;
        const lineEnd = buf.indexOf(NL, at + needle.length);
        this.#accept(stripCr(buf.subarray(lineStart, lineEnd)), undefined);
        from = lineEnd + 1;
      }
      return;
    }
    const text = this.#decoder.decode(buf.subarray(start, end));
    let s = 0;
    while (s < text.length && !this.done) {
      const e = text.indexOf("\n", s);
      const stop = e > s && text.charCodeAt(e - 1) === CR ? e - 1 : e;
      this.#acceptText(text.slice(s, stop));
      s = e + 1;
    }
  }

  /** Matches one complete line given without its newline. */
  line(bytes: Uint8Array): void {
    if (this.done) return;
    const b = stripCr(bytes);
    if (this.needle && indexOfBytes(b, this.needle) === -1) return;
    this.#accept(b, undefined);
  }

  #accept(bytes: Uint8Array, text: string | undefined): void {
    for (const x of this.#excludeBytes) if (indexOfBytes(bytes, x) !== -1) return;
    const line = text ?? this.#decoder.decode(bytes);
    if (this.#re && !this.#re.test(line)) return;
    this.count++;
    this.last = line;
  }

  #acceptText(line: string): void {
    for (const x of this.#excludeTexts) if (line.includes(x)) return;
    if (this.#re && !this.#re.test(line)) return;
    this.count++;
    this.last = line;
  }
}

function stripCr(b: Uint8Array): Uint8Array {
  return b.length > 0 && b[b.length - 1] === CR ? b.subarray(0, b.length - 1) : b;
}

/** A read buffer with a fast search for one needle in it. */
export interface Searcher {
  /** Reads go straight into this buffer, so searching needs no copy. */
  readonly buffer: Uint8Array;
  /** Where the needle starts in `buffer[from, to)` (wholly inside it), or -1. */
  find(from: number, to: number): number;
}

/*
 * find(hay, len, ndl, m) -> index of the m-byte needle at `ndl` in the `len`
 * bytes at `hay`, or -1. Compares the needle's first and last bytes with 16
 * positions at once (i8x16.eq on two loads m-1 apart), verifies candidates
 * byte by byte, then finishes the last positions one at a time. Built with
 * `wat2wasm` (Debian package wabt 1.0.32) from:
 *
 * (module
 *   (import "env" "memory" (memory 1))
 *   (func (export "find") (param $hay i32) (param $len i32) (param $ndl i32) (param $m i32)
 *     (result i32)
 *     (local $i i32) (local $limit i32) (local $first v128) (local $last v128)
 *     (local $mask i32) (local $at i32) (local $k i32) (local $p i32)
 *     (if (i32.gt_u (local.get $m) (local.get $len)) (then (return (i32.const -1))))
 *     (local.set $limit (i32.sub (local.get $len) (local.get $m)))
 *     (local.set $first (i8x16.splat (i32.load8_u (local.get $ndl))))
 *     (local.set $last (i8x16.splat
 *       (i32.load8_u (i32.add (local.get $ndl) (i32.sub (local.get $m) (i32.const 1))))))
 *     (block $simd_done
 *       (loop $blocks
 *         (br_if $simd_done (i32.gt_s (i32.add (local.get $i) (i32.const 15)) (local.get $limit)))
 *         (local.set $p (i32.add (local.get $hay) (local.get $i)))
 *         (local.set $mask (i8x16.bitmask (v128.and
 *           (i8x16.eq (v128.load (local.get $p)) (local.get $first))
 *           (i8x16.eq (v128.load (i32.add (local.get $p) (i32.sub (local.get $m) (i32.const 1))))
 *                     (local.get $last)))))
 *         (block $cands_done
 *           (loop $cands
 *             (br_if $cands_done (i32.eqz (local.get $mask)))
 *             (local.set $at (i32.add (local.get $p) (i32.ctz (local.get $mask))))
 *             (local.set $k (i32.const 1))
 *             (block $mismatch
 *               (loop $verify
 *                 (if (i32.ge_s (local.get $k) (i32.sub (local.get $m) (i32.const 1)))
 *                   (then (return (i32.sub (local.get $at) (local.get $hay)))))
 *                 (br_if $mismatch (i32.ne
 *                   (i32.load8_u (i32.add (local.get $at) (local.get $k)))
 *                   (i32.load8_u (i32.add (local.get $ndl) (local.get $k)))))
 *                 (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *                 (br $verify)))
 *             (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
 *             (br $cands)))
 *         (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *         (br $blocks)))
 *     (block $tail_done
 *       (loop $tail
 *         (br_if $tail_done (i32.gt_s (local.get $i) (local.get $limit)))
 *         (local.set $p (i32.add (local.get $hay) (local.get $i)))
 *         (local.set $k (i32.const 0))
 *         (block $mm
 *           (loop $v
 *             (if (i32.ge_s (local.get $k) (local.get $m)) (then (return (local.get $i))))
 *             (br_if $mm (i32.ne
 *               (i32.load8_u (i32.add (local.get $p) (local.get $k)))
 *               (i32.load8_u (i32.add (local.get $ndl) (local.get $k)))))
 *             (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *             (br $v)))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $tail)))
 *     (i32.const -1)))
 */
const FIND_WASM =
  "AGFzbQEAAAABCQFgBH9/f38BfwIPAQNlbnYGbWVtb3J5AgABAwIBAAcIAQRmaW5kAAAKmwIBmAIDAn8CewR/IAMgAUsEQEF/DwsgASADayEFIAItAAD9DyEGIAIgA0EBa2otAAD9DyEHAkADQCAEQQ9qIAVKDQEgACAEaiELIAv9AAQAIAb9IyALIANBAWtq/QAEACAH/SP9Tv1kIQgCQANAIAhFDQEgCyAIaGohCUEBIQoCQANAIAogA0EBa04EQCAJIABrDwsgCSAKai0AACACIApqLQAARw0BIApBAWohCgwACwsgCCAIQQFrcSEIDAALCyAEQRBqIQQMAAsLAkADQCAEIAVKDQEgACAEaiELQQAhCgJAA0AgCiADTgRAIAQPCyALIApqLQAAIAIgCmotAABHDQEgCkEBaiEKDAALCyAEQQFqIQQMAAsLQX8L";

let findModule: WebAssembly.Module | null | undefined;

/** The compiled search module, or null where WebAssembly SIMD is unavailable. */
function wasmModule(): WebAssembly.Module | null {
  if (findModule === undefined) {
    try {
      findModule = new WebAssembly.Module(Uint8Array.from(atob(FIND_WASM), (c) => c.charCodeAt(0)));
    } catch {
      // No WebAssembly or no SIMD in this runtime: the JavaScript search is used instead.
      findModule = null;
    }
  }
  return findModule;
}

/**
 * `count` read buffers of `size` bytes, each searchable for `needle` (no
 * search without one). With WebAssembly they share one memory, so a read
 * lands where the search runs. `wasm: false` forces the JavaScript search
 * (tests compare the two).
 */
export function createSearchers(
  needle: Uint8Array | undefined,
  size: number,
  count: number,
  opts: { wasm?: boolean } = {},
): Searcher[] {
  const indices = Array.from({ length: count }, (_, i) => i);
  if (!needle || needle.length === 0) {
    return indices.map(() => ({ buffer: new Uint8Array(size), find: () => -1 }));
  }
  const mod = opts.wasm === false ? null : wasmModule();
  if (mod) {
    const at = size * count; // the needle follows the buffers
    const pages = Math.ceil((at + needle.length) / 65536);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    const instance = new WebAssembly.Instance(mod, { env: { memory } });
    const wasmFind = instance.exports.find as (
      h: number,
      l: number,
      n: number,
      m: number,
    ) => number;
    new Uint8Array(memory.buffer).set(needle, at);
    const m = needle.length;
    return indices.map((i) => {
      const base = i * size;
      return {
        buffer: new Uint8Array(memory.buffer, base, size),
        find(from: number, to: number) {
          const r = wasmFind(base + from, to - from, at, m);
          return r < 0 ? -1 : from + r;
        },
      };
    });
  }
  const skip = horspoolTable(needle);
  return indices.map(() => {
    const buffer = new Uint8Array(size);
    return { buffer, find: (from, to) => horspool(buffer, needle, skip, from, to) };
  });
}

/** One searchable read buffer (see `createSearchers`). */
export function createSearcher(
  needle: Uint8Array | undefined,
  size: number,
  opts: { wasm?: boolean } = {},
): Searcher {
  return createSearchers(needle, size, 1, opts)[0]!;
}

function horspoolTable(needle: Uint8Array): Int32Array {
  const m = needle.length;
  const skip = new Int32Array(256).fill(m);
  for (let j = 0; j < m - 1; j++) skip[needle[j]!] = m - 1 - j;
  return skip;
}

/** Boyer-Moore-Horspool search of `needle` in `hay[from, to)`. */
function horspool(
  hay: Uint8Array,
  needle: Uint8Array,
  skip: Int32Array,
  from: number,
  to: number,
): number {
  const m = needle.length;
  const lastByte = needle[m - 1]!;
  let i = from + m - 1;
  while (i < to) {
    const c = hay[i]!;
    if (c === lastByte) {
      let j = m - 2;
      let k = i - 1;
      while (j >= 0 && hay[k] === needle[j]) {
        j--;
        k--;
      }
      if (j < 0) return i - m + 1;
    }
    i += skip[c]!;
  }
  return -1;
}

/** The unfinished last line of a file: at most `MAX_LINE` bytes of it are kept. */
export class PartialLine {
  #buf = new Uint8Array(256);
  #len = 0;
  #overflow = false;

  get empty(): boolean {
    return this.#len === 0 && !this.#overflow;
  }

  append(src: Uint8Array, start: number, end: number): void {
    let n = end - start;
    const room = MAX_LINE - this.#len;
    if (n > room) {
      n = room;
      this.#overflow = true;
    }
    if (n <= 0) return;
    if (this.#len + n > this.#buf.length) {
      let size = this.#buf.length;
      while (size < this.#len + n) size *= 2;
      const grown = new Uint8Array(Math.min(size, MAX_LINE));
      grown.set(this.#buf.subarray(0, this.#len));
      this.#buf = grown;
    }
    this.#buf.set(src.subarray(start, start + n), this.#len);
    this.#len += n;
  }

  /** The kept bytes; valid until the next `clear`. */
  view(): Uint8Array {
    return this.#buf.subarray(0, this.#len);
  }

  clear(): void {
    this.#len = 0;
    this.#overflow = false;
    if (this.#buf.length > 65536) this.#buf = new Uint8Array(256);
  }
}

/**
 * Feeds `buf[0, n)`, the next bytes of one file, to the matcher: completes
 * the pending partial line, matches the complete lines, keeps the rest.
 */
export function feed(
  partial: PartialLine,
  matcher: LineMatcher,
  buf: Uint8Array,
  n: number,
  find?: (from: number, to: number) => number,
): void {
  const chunk = buf.subarray(0, n);
  let s = 0;
  if (!partial.empty) {
    const nl = chunk.indexOf(NL);
    if (nl < 0) {
      partial.append(buf, 0, n);
      return;
    }
    partial.append(buf, 0, nl);
    matcher.line(partial.view());
    partial.clear();
    if (matcher.done) return;
    s = nl + 1;
  }
  const last = chunk.lastIndexOf(NL);
  if (last >= s) {
    matcher.region(buf, s, last + 1, find);
    if (matcher.done) return;
    s = last + 1;
  }
  if (s < n) partial.append(buf, s, n);
}

/** One open file being read. */
class Source {
  readonly partial = new PartialLine();
  /** The last bytes before `pos`, to notice a truncated file that grew back past `pos`. */
  readonly sig = new Uint8Array(SIG);
  sigLen = 0;
  grewAt = Date.now();

  constructor(
    readonly file: Deno.FsFile,
    readonly dev: number,
    readonly ino: number | null,
    public pos: number,
  ) {}

  is(info: Deno.FileInfo): boolean {
    // Without inode numbers (some platforms) a replaced file is only noticed by truncation.
    if (this.ino === null || info.ino === null) return true;
    return info.dev === this.dev && info.ino === this.ino;
  }

  remember(buf: Uint8Array, n: number): void {
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

/** Where reading starts in content that exists at the first attempt. */
export type StartAt =
  /** Everything (`--from-start`). */
  | { readonly from: "start" }
  /** The last `lines` complete lines (`--tail N`; 0 = only what is added, the default). */
  | { readonly from: "tail"; readonly lines: number };

/** What one poll found. */
export type PollState =
  | { readonly state: "open" }
  | { readonly state: "missing" }
  | { readonly state: "error"; readonly error: string };

/** Follows one path across attempts. Polls must not overlap (the caller serialises them). */
export class LogFollower {
  readonly #path: string;
  readonly #matcher: LineMatcher;
  /** Two read buffers: the next read fills one while the other is scanned. */
  readonly #searchers: [Searcher, Searcher];
  #startAt: StartAt;
  #cur: Source | undefined;
  #olds: Source[] = [];
  #closed = false;
  readonly #sigBuf = new Uint8Array(SIG);

  constructor(path: string, startAt: StartAt, matcher: LineMatcher, opts: { wasm?: boolean } = {}) {
    this.#path = path;
    this.#startAt = startAt;
    this.#matcher = matcher;
    const [a, b] = createSearchers(matcher.needle, READ_SIZE, 2, opts);
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
      if (!grew && Date.now() - old.grewAt > LINGER_MS) this.#retire(old);
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
      const pos = this.#startAt.from === "start"
        ? 0
        : await this.#tailOffset(file, info.size, this.#startAt.lines, signal);
      this.#startAt = { from: "start" };
      this.#cur = new Source(file, info.dev, info.ino, pos);
      if (this.#closed) this.close();
      return { state: "open" };
    } catch (e) {
      file.close();
      throw e;
    }
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
    // Truncated (copytruncate): the content starts over. A file that grew back to or
    // past the offset before this look shows it by other bytes just before the offset.
    if (info.size < src.pos || !(await this.#sameBytes(src))) src.restart();
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
        if (m.done) break;
        [cur, next] = [next, cur];
      }
    } finally {
      // A read ahead that is not used is read again next time (`pos` excludes it).
      await reading?.catch(() => null);
    }
    if (grew) src.grewAt = Date.now();
    return grew;
  }

  /** Whether the bytes just before the offset are still the ones read there. */
  async #sameBytes(src: Source): Promise<boolean> {
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
    cur.grewAt = Date.now();
    this.#olds.push(cur);
    if (this.#olds.length > MAX_OLD) this.#retire(this.#olds[0]!);
    const next = new Source(file, fresh.dev, fresh.ino, 0);
    this.#cur = next;
    await this.#drain(next, signal);
  }

  #retire(old: Source): void {
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
