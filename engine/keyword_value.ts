/**
 * Blank-separated `keyword = value` strings, as libpq's keyword/value
 * connection strings write them (docs/contract.md §5, "URL forms"): blanks
 * around `=` are allowed; a value is a run of non-blank characters or is
 * single-quoted (then it may hold blanks); a backslash takes the next
 * character as it is (`\'`, `\\`) inside quotes and out. One pass, no
 * pattern: the text comes from the user's command line.
 *
 * The secrets module masks credential-named values of such a word where they
 * stand; a kind whose client takes this grammar reads its targets with it.
 *
 * @module
 */

/** One `keyword=value` pair: the value unquoted, and where it was written. */
export interface KeywordValue {
  readonly keyword: string;
  readonly value: string;
  /** The value as written (quotes included): `text.slice(start, end)`. */
  readonly start: number;
  readonly end: number;
}

/**
 * The pairs, or the first problem: a word not followed by `=` (`word`; it
 * may be part of a value that needed quotes, so callers show it only when it
 * is a keyword they know), or an unterminated quoted value.
 */
export type KeywordValueParse =
  | { readonly pairs: KeywordValue[] }
  | { readonly error: "missing =" | "unterminated quote"; readonly word?: string };

/** C's `isspace`: space, tab, newline, vertical tab, form feed, carriage return. */
function isBlank(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\v" || c === "\f" || c === "\r";
}

/**
 * Reads `text` as libpq's `conninfo_parse` does: pairs in order (a keyword
 * given twice appears twice; the later wins where it is used), or the first
 * error (libpq's `missing "=" after "x"` and `unterminated quoted string`).
 */
export function parseKeywordValues(text: string): KeywordValueParse {
  const pairs: KeywordValue[] = [];
  let i = 0;
  const n = text.length;
  const skipBlanks = () => {
    while (i < n && isBlank(text[i]!)) i++;
  };
  while (true) {
    skipBlanks();
    if (i >= n) return { pairs };
    const from = i;
    while (i < n && text[i] !== "=" && !isBlank(text[i]!)) i++;
    const keyword = text.slice(from, i);
    skipBlanks();
    if (text[i] !== "=") return { error: "missing =", word: keyword };
    i++;
    skipBlanks();
    const start = i;
    let value = "";
    if (text[i] === "'") {
      i++;
      while (true) {
        if (i >= n) return { error: "unterminated quote" };
        const c = text[i]!;
        if (c === "\\") {
          if (i + 1 < n) value += text[i + 1];
          i += 2;
        } else if (c === "'") {
          i++;
          break;
        } else {
          value += c;
          i++;
        }
      }
    } else {
      while (i < n && !isBlank(text[i]!)) {
        if (text[i] === "\\") {
          if (i + 1 < n) value += text[i + 1];
          i += 2;
        } else {
          value += text[i];
          i++;
        }
      }
    }
    pairs.push({ keyword, value, start, end: Math.min(i, n) });
  }
}

/**
 * Whether `text` is a keyword/value string rather than a URL or a plain word:
 * libpq's test (no `scheme://` prefix, an `=` somewhere).
 */
export function looksLikeKeywordValues(text: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && text.includes("=");
}

/**
 * `text` with the values of keywords `isSecret` names replaced by `mask`
 * where they stand, and those values; undefined when `text` is not a
 * well-formed keyword/value string.
 */
export function maskKeywordValues(
  text: string,
  isSecret: (keyword: string) => boolean,
  mask: string,
): { display: string; secrets: string[] } | undefined {
  const r = parseKeywordValues(text);
  if ("error" in r) return undefined;
  let display = "";
  let at = 0;
  const secrets: string[] = [];
  for (const p of r.pairs) {
    if (!isSecret(p.keyword) || p.end === p.start) continue;
    display += text.slice(at, p.start) + mask;
    at = p.end;
    if (p.value !== "") secrets.push(p.value);
  }
  return { display: display + text.slice(at), secrets };
}
