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

/** A compiled user pattern. */
export interface UserRegex {
  /** Whether the pattern matches somewhere in `text`. */
  test(text: string): boolean;
}

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
  return { test: (text) => re.matcher(text).find() };
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
