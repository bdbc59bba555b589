/**
 * Users' regular expressions (log, http, jsonpath `=~` ...), run by RE2
 * (the re2js port): matching takes time linear in the text whatever the
 * pattern, so a pattern like `^(a+)+$` can never hold the deadline or a
 * signal hostage (docs/contract.md §9). The syntax is JavaScript's minus
 * what needs backtracking: lookaround and backreferences are refused with a
 * usage error that says so. This module is loaded only by probes and by the
 * validation step, never at start-up.
 *
 * @module
 */

import { RE2JS } from "re2js";
import type { Captures } from "./captures.ts";
import { runOnce } from "../../engine/workers.ts";

/** A compiled user pattern. */
export interface UserRegex {
  /** The pattern as given. */
  readonly source: string;
  /** Its JavaScript flags. */
  readonly flags: string;
  /**
   * Whether the pattern matches somewhere in `text`, on this thread: for
   * texts of at most `INLINE_TEXT` characters (see `testText`).
   */
  test(text: string): boolean;
  /**
   * What the first match in `text` captured (numbered groups from "1" and named groups that
   * took part in it), or undefined when the pattern does not match; on this thread, like `test`.
   */
  exec(text: string): Captures | undefined;
}

/**
 * Longest text matched on the main thread. RE2 is linear but re2js runs at
 * 4-7 MB/s on unfavourable patterns, so 64 Ki characters take at most about
 * 17 ms; a longer text is matched in a worker that an abort terminates.
 */
export const INLINE_TEXT = 64 << 10;

/** JavaScript flags RE2 understands; others (`g`, `y`, `u`, `d`) change nothing for a test. */
function flagBits(flags: string): number {
  let bits = 0;
  if (flags.includes("i")) bits |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes("m")) bits |= RE2JS.MULTILINE;
  if (flags.includes("s")) bits |= RE2JS.DOTALL;
  return bits;
}

/** Compiles a pattern already checked by `re2Problem`; throws on a bad one. */
export function compileRegex(source: string, flags = ""): UserRegex {
  const re = RE2JS.compile(source, flagBits(flags));
  const count = re.groupCount();
  const names = Object.entries(re.namedGroups());
  return {
    source,
    flags,
    test: (text) => re.matcher(text).find(),
    exec(text) {
      const m = re.matcher(text);
      if (!m.find()) return undefined;
      const out: Record<string, string> = {};
      for (let i = 1; i <= count; i++) {
        const g = m.group(i);
        if (g !== null) out[String(i)] = g;
      }
      for (const [name, i] of names) {
        const g = m.group(i);
        if (g !== null) out[name] = g;
      }
      return out;
    },
  };
}

/**
 * Whether `re` matches somewhere in `text`: on this thread for a short text,
 * else in a worker (about 40 ms to start), so that neither the deadline nor a
 * signal waits for a match (docs/contract.md §9). Rejects with the signal's
 * reason when it aborts, and the worker is terminated at once.
 */
export async function testText(re: UserRegex, text: string, signal: AbortSignal): Promise<boolean> {
  return (await execText(re, text, signal)) !== undefined;
}

/**
 * What the first match of `re` in `text` captured (`UserRegex.exec`), or undefined when it
 * does not match; a long text is matched in a worker, as `testText` says.
 */
export function execText(
  re: UserRegex,
  text: string,
  signal: AbortSignal,
): Promise<Captures | undefined> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (text.length <= INLINE_TEXT) return Promise.resolve(re.exec(text));
  return runOnce<Captures | null>(
    "regex",
    { source: re.source, flags: re.flags, text },
    "regular expression",
    signal,
  ).then((c) => c ?? undefined);
}

/**
 * Why RE2 cannot run `source` (a pattern JavaScript accepts), or undefined
 * when it can: `not supported by waitcmd's linear-time engine (RE2: no
 * lookaround or backreferences): invalid or unsupported Perl syntax: (?=`.
 */
export function re2Problem(source: string, flags = ""): string | undefined {
  try {
    RE2JS.compile(source, flagBits(flags));
    return undefined;
  } catch (e) {
    const why = (e instanceof Error ? e.message : String(e))
      .replace(/^error parsing regexp: /, "")
      .replaceAll("`", "");
    return `not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): ${why}`;
  }
}
