/**
 * The run's secrets and the masking of every text from outside (docs/contract.md §9): the
 * registry of secret values (`SecretRegistry`), URL passwords (`maskUrlPasswords`), and the one
 * rule for a text from outside (`redactText`, `clip`, `escapeControls`). The secrets themselves
 * are found in what the user typed by typed_secrets.ts.
 *
 * @module
 */

/**
 * The shortest secret masked by value in text from outside (docs/contract.md §9): a shorter
 * one matches everywhere (`pw`, `a`) and is masked only where it stands.
 */
export const MIN_BY_VALUE = 4;

/**
 * Secrets shorter than this are masked by value only where not glued to a word
 * (docs/contract.md §9): `WRONG` is in the server's `WRONGPASS` by chance, a longer secret never.
 */
export const WORDS_KEPT_BELOW = 8;

/** `c` is an ASCII letter. */
export function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** `c` may stand in a URL scheme (RFC 3986: letters, digits, `+`, `-`, `.`). */
export function isSchemeChar(c: number): boolean {
  return isAsciiLetter(c) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}

/** `c` (a UTF-16 code) is a word character: `[A-Za-z0-9_]`. */
function isWordChar(c: number): boolean {
  return isAsciiLetter(c) || (c >= 48 && c <= 57) || c === 95;
}

/**
 * The secrets of one run (docs/contract.md §9): those known once the command line is parsed,
 * and those found while it runs (a password file's content, a kubeconfig's token). Probes and
 * the engine share it: what a probe registers is masked from every text from outside that
 * comes in after.
 */
export class SecretRegistry {
  readonly #values = new Set<string>();
  /** waitcmd's own words of the run (`keep`): never masked by value. */
  readonly #kept = new Set<string>();
  /** Longest first, so that overlapping secrets vanish whole; rebuilt after an `add`. */
  #sorted: string[] | undefined = [];

  constructor(values: Iterable<string> = []) {
    for (const v of values) this.add(v);
  }

  /**
   * Registers a secret, and its percent-encoded form (how it shows inside a URL). Values under
   * `MIN_BY_VALUE` characters are not: masked by value, they would mangle unrelated text.
   */
  add(value: string | undefined): void {
    if (value === undefined || value.length < MIN_BY_VALUE) return;
    let encoded = value;
    try {
      encoded = encodeURIComponent(value);
    } catch {
      // A lone surrogate has no encoded form.
    }
    for (const v of [value, encoded]) {
      if (this.#values.has(v)) continue;
      this.#values.add(v);
      this.#sorted = undefined;
    }
  }

  /**
   * Words waitcmd shows as its own in this run (its kind words, and the user, host, port,
   * path and database of its targets: `ownWords`): a secret equal to one of them is not masked
   * by value (docs/contract.md §9). Masking it would hide waitcmd's words (a `postgres`
   * password would blank the kind, the user and the database in every text), and it is on show
   * as that word anyway; where it stands as the secret it is masked all the same.
   */
  keep(words: Iterable<string>): void {
    for (const w of words) this.#kept.add(w);
    this.#sorted = undefined;
  }

  /** The values masked by value (as written and percent-encoded), e.g. to hand to a worker. */
  *values(): IterableIterator<string> {
    for (const v of this.#values) if (!this.#kept.has(v)) yield v;
  }

  /** How many values are registered (none: masking has nothing to do). */
  get size(): number {
    return this.#values.size;
  }

  /**
   * `text` (from outside) with each registered value as `***`. A value shorter than
   * `WORDS_KEPT_BELOW` characters only where it is not glued to a word: an occurrence counts
   * unless a word character `[A-Za-z0-9_]` touches it on an edge where the secret itself has one,
   * so the password `WRONG` leaves the server's `WRONGPASS` as it is (docs/contract.md §9). One
   * `indexOf` scan per secret.
   */
  mask(text: string): string {
    if (this.#values.size === 0) return text;
    this.#sorted ??= [...this.values()].sort((a, b) => b.length - a.length);
    let out = text;
    for (const s of this.#sorted) out = maskValue(out, s);
    return out;
  }
}

/** `text` with each occurrence of `secret` not glued to a word as `***`. */
function maskValue(text: string, secret: string): string {
  let at = text.indexOf(secret);
  if (at < 0) return text;
  const m = secret.length;
  // A secret of `WORDS_KEPT_BELOW` characters or more is masked glued or not: inside a longer
  // word it is still the secret (`printf "%0190d%s"`), and no word holds it by chance.
  const short = m < WORDS_KEPT_BELOW;
  const wordStart = short && isWordChar(secret.charCodeAt(0));
  const wordEnd = short && isWordChar(secret.charCodeAt(m - 1));
  // Pieces joined once: a string grown by `+=` a million times is slow to flatten.
  const parts: string[] = [];
  let from = 0;
  while (at >= 0) {
    const glued = (wordStart && at > 0 && isWordChar(text.charCodeAt(at - 1))) ||
      (wordEnd && at + m < text.length && isWordChar(text.charCodeAt(at + m)));
    if (glued) {
      at = text.indexOf(secret, at + 1);
      continue;
    }
    parts.push(text.slice(from, at), "***");
    from = at + m;
    at = text.indexOf(secret, from);
  }
  parts.push(text.slice(from));
  return parts.join("");
}

/**
 * waitcmd's own words in `texts` (its display names and targets, built with their secrets
 * masked where they stand): the runs of word characters and of URL-unreserved characters
 * (`postgres`, `127.0.0.1`, `app-db`), for `SecretRegistry.keep`. One pass.
 */
export function ownWords(texts: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    for (const w of text.split(/[^A-Za-z0-9_]+/)) if (w !== "") out.add(w);
    for (const w of text.split(/[^A-Za-z0-9_.~-]+/)) if (w !== "") out.add(w);
  }
  return out;
}

/** Characters that end a URL's user-info (RFC 3986 has them percent-encoded there). */
const NOT_USERINFO = " \t\n\r\f\v/?#[]";

/**
 * `text` with the password of every URL in it as `***`, the user kept
 * (`postgres://app:***@db`): after each `://` that follows a scheme character, the user-info
 * runs to the last `@` before a blank, `/`, `?`, `#` or bracket, and the password from its first
 * `:` on. A hand scan, each character looked at a bounded number of times: linear in the text
 * whatever it holds (docs/development.md, "Linear-time text handling"). Brackets are not
 * user-info, so a form such as `postgres://[user[:password]@]host` in a usage error stays.
 */
export function maskUrlPasswords(text: string): string {
  let sep = text.indexOf("://");
  if (sep < 0) return text;
  const parts: string[] = [];
  let from = 0;
  while (sep >= 0) {
    const start = sep + 3;
    let end = start;
    let at = -1;
    let colon = -1;
    while (end < text.length && !NOT_USERINFO.includes(text.charAt(end))) {
      const c = text.charCodeAt(end);
      if (c === 64) at = end; // `@`
      else if (c === 58 && colon < 0) colon = end; // `:`
      end++;
    }
    if (sep > 0 && isSchemeChar(text.charCodeAt(sep - 1)) && colon >= 0 && colon < at) {
      parts.push(text.slice(from, colon + 1), "***");
      from = at;
    }
    // A `://` may begin at the last character scanned (the `:` before the `/` that ended it).
    sep = text.indexOf("://", Math.max(end - 1, start));
  }
  parts.push(text.slice(from));
  return parts.join("");
}

/**
 * The one rule for a text from outside (docs/contract.md §9): each registered secret becomes
 * `***` (not glued to a word, `SecretRegistry.mask`), and so does the password of every URL
 * (`postgres://app:***@db`), which keeps the user and hides what a server's or a command's text
 * may echo without anyone having registered it.
 */
export function redactText(text: string, secrets?: SecretRegistry): string {
  return maskUrlPasswords(secrets ? secrets.mask(text) : text);
}

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/g;

/** CONTROL without the newline: what `escapeControls` escapes in a line of a text of lines. */
// deno-lint-ignore no-control-regex
const CONTROL_IN_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/;

/**
 * Whether `escapeControls` leaves every line of `text` (its parts between newlines) as it is:
 * one scan of a text of many lines instead of one a line.
 */
export function linesWithoutControls(text: string): boolean {
  return !CONTROL_IN_LINES.test(text);
}

/**
 * `text` with its control characters written as escapes (`\n`, `\r`, `\x1b`, `\u2028`), tabs
 * kept: a text from outside can then never start a line of its own (forge `[ok] …` or
 * `waitcmd: satisfied`) or move a terminal's cursor (docs/contract.md §6).
 */
export function escapeControls(text: string): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    const code = c.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16)}` : `\\x${code.toString(16).padStart(2, "0")}`;
  });
}

/**
 * A text from outside (a server's answer, a command's output, a library's error) made short
 * for a result: redacted (`redactText`), then its control characters escaped, then cut to `max`
 * characters with `…`. In this order, so that no cut ever leaves the start of a secret
 * (docs/contract.md §9).
 */
export function clip(text: string, max: number, secrets?: SecretRegistry): string {
  const safe = escapeControls(redactText(text, secrets));
  if (safe.length <= max) return safe;
  // Never half a character: a cut between a surrogate pair would leave an invalid one.
  const end = /[\ud800-\udbff]/.test(safe.charAt(max - 2)) ? max - 2 : max - 1;
  return `${safe.slice(0, end)}…`;
}
