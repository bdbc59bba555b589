/**
 * The log kind's line matching: splits the bytes added to a file into lines
 * and counts the lines that match.
 *
 * - A line counts once its newline is written; a trailing `\r` is dropped.
 * - Only the unfinished last line of each file is kept, at most `MAX_LINE`
 *   bytes of it: a longer line is matched on its first `MAX_LINE` bytes and
 *   the rest of the stream is unaffected.
 * - A literal `--contains` is searched in the raw bytes (the shared byte
 *   searcher, conditions/_common/bytes.ts) and only matching lines are
 *   decoded; `--matches` alone decodes every line.
 * - `--jsonpath` is judged on lines that parse as a JSON object; other
 *   lines never match it.
 * - Lines that need a regular expression (`--matches`, `--exclude-matches`) or a JSON
 *   expression are queued by `feed` and
 *   matched by `drain`, which yields to the event loop between slices and
 *   matches a very long line in a worker: the deadline and signals never wait
 *   for a user's expression (docs/contract.md §9).
 *
 * @module
 */

import { indexOfBytes } from "../_common/bytes.ts";
import { execText, INLINE_TEXT, type UserRegex } from "../_common/regex.ts";
import { type Captures, captureText } from "../_common/captures.ts";
import type { JsonPathExpr } from "../_common/jsonpath.ts";
import { evaluateJsonPath } from "../_common/jsonpath_lib.ts";

/** Longest line kept whole; the rest of a longer line is skipped up to its newline. */
export const MAX_LINE = 4 << 20;
/**
 * Characters matched against the expression between two turns of the event
 * loop: at most about 17 ms of matching (see `INLINE_TEXT`).
 */
const SLICE_CHARS = INLINE_TEXT;
const NL = 10;
const CR = 13;

/** What a line must satisfy. */
export interface MatchSpec {
  /** The line includes this text. */
  readonly contains?: string;
  /** The line matches this expression. */
  readonly matches?: UserRegex;
  /** The line is a JSON object satisfying each of these. */
  readonly jsonpaths?: readonly JsonPathExpr[];
  /** Lines including any of these are ignored. */
  readonly exclude?: readonly string[];
  /** Lines matching any of these expressions are ignored. */
  readonly excludeMatches?: readonly UserRegex[];
  /** Matching lines needed (at least 1). */
  readonly required: number;
}

/** Counts matching lines; one counter serves every file a follower reads, so rotation keeps the count. */
export class LineMatcher {
  /** Matching lines seen so far (never more than `required`). */
  count = 0;
  /** The last matching line, without its line ending. */
  last = "";
  /** What `--matches` captured in the last matching line ({} without it). */
  captures: Captures = {};
  /** Matching lines needed. */
  readonly required: number;
  /** The `contains` text as bytes, if any. */
  readonly needle: Uint8Array | undefined;
  readonly #excludeBytes: Uint8Array[];
  readonly #excludeTexts: readonly string[];
  readonly #re: UserRegex | undefined;
  readonly #excludeRes: readonly UserRegex[];
  readonly #jsonpaths: readonly JsonPathExpr[];
  /** Lines that passed every other check, in order, waiting for the expressions (`drain`). */
  #queue: string[] = [];
  readonly #decoder = new TextDecoder();

  /** A matcher for `spec`, with nothing counted yet. */
  constructor(spec: MatchSpec) {
    const enc = new TextEncoder();
    this.required = spec.required;
    this.needle = spec.contains === undefined ? undefined : enc.encode(spec.contains);
    this.#excludeTexts = spec.exclude ?? [];
    this.#excludeBytes = this.#excludeTexts.map((t) => enc.encode(t));
    this.#re = spec.matches;
    this.#excludeRes = spec.excludeMatches ?? [];
    this.#jsonpaths = spec.jsonpaths ?? [];
  }

  /** Whether `required` matching lines were seen. */
  get done(): boolean {
    return this.count >= this.required;
  }

  /**
   * Matches the complete lines in `buf[start, end)`: `buf[end - 1]` is a
   * newline, and `start` is 0 or follows a newline. `find(from, to)` searches
   * `buf` for the needle in place (a `Searcher` over `buf`); without it the
   * bytes are searched through a copy.
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
        this.#accept(stripCr(buf.subarray(lineStart, lineEnd)));
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
    this.#accept(b);
  }

  /**
   * Matches the queued lines against the expression, in order, until enough
   * matched. Yields to the event loop every `SLICE_CHARS`; a line longer than
   * `INLINE_TEXT` is matched in a worker. Rejects when `signal` aborts.
   */
  async drain(signal: AbortSignal): Promise<void> {
    const re = this.#re;
    const queue = this.#queue;
    this.#queue = [];
    if (queue.length === 0) return;
    let slice = 0;
    for (const line of queue) {
      if (this.done) return;
      if (slice + line.length > SLICE_CHARS) {
        await new Promise((r) => setTimeout(r, 0));
        slice = 0;
      }
      signal.throwIfAborted();
      slice += line.length;
      if (await this.#excluded(line, signal)) continue;
      let captures: Captures | undefined = NONE;
      if (re !== undefined) {
        captures = line.length > INLINE_TEXT ? await execText(re, line, signal) : re.exec(line);
      }
      if (captures !== undefined && this.#jsonpaths.length > 0) {
        captures = await this.#judgeJson(line, captures, signal);
      }
      if (captures !== undefined) {
        this.count++;
        this.last = line;
        this.captures = captures;
      }
    }
  }

  /**
   * `captures` with the value the last `--jsonpath` compared, when `line` is a JSON object
   * satisfying every expression; else undefined (any other line never matches).
   */
  async #judgeJson(
    line: string,
    captures: Captures,
    signal: AbortSignal,
  ): Promise<Captures | undefined> {
    // A JSON object starts with `{`: other lines are not parsed at all.
    if (!/^[ \t]*\{/.test(line)) return undefined;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      return undefined;
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return undefined;
    let value: unknown;
    for (const expr of this.#jsonpaths) {
      const r = await evaluateJsonPath(expr, doc, signal);
      if (!r.ok) return undefined;
      value = r.value;
    }
    return { ...captures, value: captureText(value) };
  }

  /** Whether an `--exclude-matches` expression matches `line` (a long line in a worker). */
  async #excluded(line: string, signal: AbortSignal): Promise<boolean> {
    for (const x of this.#excludeRes) {
      const hit = line.length > INLINE_TEXT ? await execText(x, line, signal) : x.exec(line);
      if (hit !== undefined) return true;
    }
    return false;
  }

  #accept(bytes: Uint8Array): void {
    for (const x of this.#excludeBytes) if (indexOfBytes(bytes, x) !== -1) return;
    this.#count(this.#decoder.decode(bytes));
  }

  #acceptText(line: string): void {
    for (const x of this.#excludeTexts) if (line.includes(x)) return;
    this.#count(line);
  }

  #count(line: string): void {
    if (this.#re || this.#jsonpaths.length > 0 || this.#excludeRes.length > 0) {
      this.#queue.push(line);
      return;
    }
    this.count++;
    this.last = line;
  }
}

/** No captures: a line matched without `--matches`. */
const NONE: Captures = Object.freeze({});

function stripCr(b: Uint8Array): Uint8Array {
  return b.length > 0 && b[b.length - 1] === CR ? b.subarray(0, b.length - 1) : b;
}

/** The unfinished last line of a file: at most `MAX_LINE` bytes of it are kept. */
export class PartialLine {
  #buf = new Uint8Array(256);
  #len = 0;
  #overflow = false;

  /** Whether nothing of a line is pending. */
  get empty(): boolean {
    return this.#len === 0 && !this.#overflow;
  }

  /** Adds `src[start, end)` to the line (beyond `MAX_LINE` bytes, nothing is kept). */
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

  /** Forgets the line (and a large buffer with it). */
  clear(): void {
    this.#len = 0;
    this.#overflow = false;
    if (this.#buf.length > 65536) this.#buf = new Uint8Array(256);
  }
}

/**
 * Feeds `buf[0, n)`, the next bytes of one file, to the matcher: completes
 * the pending partial line, matches the complete lines, keeps the rest.
 * With an expression, the lines it must match wait for `matcher.drain()`.
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
