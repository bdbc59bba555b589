/**
 * The PATH of a `--jsonpath` expression (conditions/_common/jsonpath.ts,
 * docs/contract.md §5 http): its structure checked and the path rewritten
 * for `jsonpath-plus` (`.a` and kubectl's `{.a}` rooted at `$`, `\.`
 * escapes as `['a.b']`), without loading the library.
 *
 * @module
 */

/** The quotes of a quoted text. */
const QUOTES = new Set(["'", '"']);

/** `s`, cut to 40 characters for an error message. */
export function cut(s: string): string {
  return s.length > 40 ? s.slice(0, 39) + "…" : s;
}

/** Index of the quote closing the one at `start` (backslash escapes), or -1. */
export function closingQuote(t: string, start: number): number {
  const q = t[start];
  for (let i = start + 1; i < t.length; i++) {
    if (t[i] === "\\") i++;
    else if (t[i] === q) return i;
  }
  return -1;
}

/** Index of the bracket closing the one at `start`, skipping quoted texts and nesting, or -1. */
export function matching(t: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < t.length; i++) {
    const c = t[i]!;
    if (QUOTES.has(c)) {
      const end = closingQuote(t, i);
      if (end < 0) return -1;
      i = end;
    } else if (c === "\\") i++;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return i;
  }
  return -1;
}

/**
 * Checks a path's structure and rewrites it for jsonpath-plus: `.a` and
 * `{.a}` get the `$` root, names with `\.` escapes become `['a.b']`. Throws
 * an `Error` whose message is the usage problem. The expressions inside
 * `[?(...)]` and `[(...)]` are left to the library (`jsonpath_lib.ts`).
 */
export function normalizePath(raw: string): string {
  let body = raw;
  if (body.startsWith("{")) {
    if (!body.endsWith("}")) throw new Error(`unbalanced "{" in ${JSON.stringify(raw)}`);
    body = body.slice(1, -1).trim();
  }
  if (body.startsWith(".") || body.startsWith("[")) body = "$" + body;
  if (!body.startsWith("$")) {
    throw new Error(
      `expected a path like $.status, .status or {.status}, got ${JSON.stringify(cut(raw))}`,
    );
  }
  const bad = (why: string): never => {
    throw new Error(`bad path ${JSON.stringify(cut(raw))}: ${why}`);
  };
  let out = "$";
  let i = 1;
  while (i < body.length) {
    const c = body[i]!;
    if (c === ".") {
      let recursive = false;
      i++;
      if (body[i] === ".") {
        recursive = true;
        i++;
      }
      if (body[i] === "[" && recursive) {
        out += "..";
        continue;
      }
      if (body[i] === "*") {
        out += recursive ? "..*" : ".*";
        i++;
        continue;
      }
      let name = "";
      let escaped = false;
      while (i < body.length && body[i] !== "." && body[i] !== "[") {
        if (body[i] === "\\") {
          if (i + 1 >= body.length) return bad("a trailing \\");
          escaped = true;
          name += body[i + 1];
          i += 2;
          continue;
        }
        if (QUOTES.has(body[i]!) || body[i] === "]" || /\s/.test(body[i]!)) {
          return bad(`unexpected ${JSON.stringify(body[i])}`);
        }
        name += body[i];
        i++;
      }
      if (name === "") return bad(`a name is missing after "${recursive ? ".." : "."}"`);
      const part = escaped ? `['${name.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}']` : name;
      out += recursive ? ".." + part : escaped ? part : "." + part;
      continue;
    }
    if (c === "[") {
      const end = matching(body, i, "[", "]");
      if (end < 0) return bad(`unbalanced "["`);
      const inner = body.slice(i + 1, end).trim();
      const err = checkBracket(inner);
      if (err) bad(err);
      out += `[${inner}]`;
      i = end + 1;
      continue;
    }
    return bad(`unexpected ${JSON.stringify(c)}; names follow "." or go in brackets`);
  }
  return out;
}

/**
 * Checks the inside of `[...]`: an index, a slice, a quoted name, `*`, or
 * the form of a filter `?(...)` or script `(...)` (whose expression the
 * library checks). Returns an error text or undefined.
 */
function checkBracket(inner: string): string | undefined {
  if (inner === "") return "empty brackets []";
  if (inner === "*") return undefined;
  if (inner.startsWith("?(")) {
    return inner.endsWith(")") ? undefined : `a filter is written [?(...)], got [${inner}]`;
  }
  if (inner.startsWith("(")) {
    return inner.endsWith(")") ? undefined : `a script is written [(...)], got [${inner}]`;
  }
  const SLICE = /^(-?\d+)?:(-?\d+)?(:(-?\d+)?)?$/;
  for (const item of splitTop(inner)) {
    const s = item.trim();
    if (/^-?\d+$/.test(s) || SLICE.test(s) || s === "*") continue;
    if ((s.startsWith("'") || s.startsWith('"')) && closingQuote(s, 0) === s.length - 1) continue;
    return `expected an index, a slice, a quoted name or a filter in brackets, got [${inner}]`;
  }
  return undefined;
}

/** Splits on commas outside quotes. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    if (QUOTES.has(s[i]!)) {
      const end = closingQuote(s, i);
      if (end < 0) return [s];
      i = end;
    } else if (s[i] === ",") {
      parts.push(s.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(s.slice(from));
  return parts;
}
