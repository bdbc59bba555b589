/**
 * Captures (docs/contract.md §7): what a condition matched, carried into the
 * report and `then`'s environment. Named groups are written RE2's way,
 * `(?P<name>…)`, or JavaScript's, `(?<name>…)`. This module reads patterns
 * as text, without the regex engine, so a kind's `parse` (pure, no library)
 * can declare the names its condition captures.
 *
 * @module
 */

/** What one match captured: numbered groups from "1" and named groups, as text. */
export type Captures = Readonly<Record<string, string>>;

/** A group name RE2 and JavaScript both accept. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * Walks a pattern's source and calls `onGroup` at each named group's `(`,
 * with the name and whether it was written `(?P<`. Escapes and character
 * classes are skipped, so `\(?<x>` and `[(?<x>]` are no groups.
 */
function scan(source: string, onGroup: (at: number, name: string, python: boolean) => void) {
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      if (source[i + 1] === "]") i++; // `[]…]`: a `]` first in a class is a character
    } else if (c === "(" && source[i + 1] === "?") {
      const python = source[i + 2] === "P" && source[i + 3] === "<";
      const open = python ? i + 4 : source[i + 2] === "<" ? i + 3 : -1;
      // `(?<=` and `(?<!` are lookbehinds, not names.
      if (open < 0) continue;
      const m = NAME.exec(source.slice(open));
      if (m && source[open + m[0].length] === ">") onGroup(i, m[0], python);
    }
  }
}

/** The names of a pattern's named groups, in order, each once. */
export function namedGroupsOf(source: string | undefined): string[] {
  if (source === undefined) return [];
  const names: string[] = [];
  scan(source, (_at, name) => {
    if (!names.includes(name)) names.push(name);
  });
  return names;
}

/** The pattern in JavaScript's syntax, for its syntax check: `(?P<name>` written `(?<name>`. */
export function toJsSyntax(source: string): string {
  const at: number[] = [];
  scan(source, (i, _name, python) => {
    if (python) at.push(i);
  });
  let out = source;
  for (const i of at.reverse()) out = out.slice(0, i + 2) + out.slice(i + 3);
  return out;
}

/** A JSON value as a capture (docs/contract.md §7): a string as its text, others as compact JSON. */
export function captureText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "null";
}
