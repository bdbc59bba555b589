/**
 * Finding secrets in text the user typed (docs/contract.md §9): URL
 * user-info and query values named like a credential. Used by kinds for
 * their targets and by the CLI on the raw command line, so a usage error
 * about a URL that does not even parse still never echoes its password.
 *
 * @module
 */

import { looksLikeKeywordValues, maskKeywordValues } from "./keyword_value.ts";

/** Names that are credential names as they are (docs/contract.md §9), lower case. */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set([
  "password",
  "passwd",
  "pass",
  "pwd",
  "secret",
  "token",
  "key",
  "apikey",
  "auth",
  "sig",
  "signature",
  "credential",
  "sslpassword",
]);

/**
 * Endings that make a name a credential name (`api_token`, `X-Api-Key`, `PGPASSWORD`), and
 * `-signature`/`_signature` for a presigned URL's `X-Amz-Signature`, which grants access too.
 */
const CREDENTIAL_ENDINGS = [
  "_token",
  "-token",
  "_key",
  "-key",
  "_secret",
  "-secret",
  "password",
  "-signature",
  "_signature",
];

/**
 * Whether `name` (a query parameter, an option, an environment variable, a header) names a
 * credential, whose value is then a secret (docs/contract.md §9): one of the credential names,
 * case-insensitive, or a name ending in one of the credential endings. A name that merely
 * contains one (`authSource`, `authMechanism`, `keyspace`, `tokenizer`) is not one: its value is
 * a word of the user's that the output keeps.
 */
export function isCredentialName(name: string): boolean {
  const n = name.toLowerCase();
  return CREDENTIAL_NAMES.has(n) || CREDENTIAL_ENDINGS.some((e) => n.endsWith(e));
}

/** Whether `text` starts with a URL scheme and `://`; the length of that prefix, else 0. */
function schemeLength(text: string): number {
  const sep = text.indexOf("://");
  if (sep <= 0 || !isAsciiLetter(text.charCodeAt(0))) return 0;
  for (let i = 1; i < sep; i++) {
    if (!isSchemeChar(text.charCodeAt(i))) return 0;
  }
  return sep + 3;
}

/** `c` is an ASCII letter. */
function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** `c` may stand in a URL scheme (RFC 3986: letters, digits, `+`, `-`, `.`). */
function isSchemeChar(c: number): boolean {
  return isAsciiLetter(c) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}

/**
 * The URL as displayed: the password of its user-info becomes `***` (the user is kept: it is
 * not a secret), and so do the values of query parameters with a credential name
 * (`isCredentialName`). Works on any text, a malformed URL included, in one pass. Returns the
 * display text and the secrets it hid (as written, and percent-decoded).
 */
export function redactUrl(text: string): { display: string; secrets: string[] } {
  const secrets: string[] = [];
  let display = text;
  const head = schemeLength(text);
  if (head > 0) {
    // The user-info ends at the last `@` before the path, as URL parsers read it.
    let end = head;
    while (end < text.length && !"/?#".includes(text.charAt(end))) end++;
    const at = text.lastIndexOf("@", end - 1);
    const colon = at >= head ? text.indexOf(":", head) : -1;
    if (colon >= 0 && colon < at) {
      const password = text.slice(colon + 1, at);
      if (password !== "") secrets.push(password, safeDecode(password, false));
      display = `${text.slice(0, colon + 1)}***${text.slice(at)}`;
    }
  }
  const q = display.indexOf("?");
  if (q >= 0) {
    const hash = display.indexOf("#", q);
    const end = hash >= 0 ? hash : display.length;
    const query = display.slice(q + 1, end).split("&").map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const name = safeDecode(pair.slice(0, eq));
      const value = pair.slice(eq + 1);
      if (!isCredentialName(name) || value === "") return pair;
      secrets.push(value, safeDecode(value));
      return `${pair.slice(0, eq)}=***`;
    }).join("&");
    display = display.slice(0, q + 1) + query + display.slice(end);
  }
  return { display, secrets: secrets.filter((s) => s !== "") };
}

/**
 * `s` percent-decoded, or as it is when it is not valid encoding. `+` is a
 * space in a query (`plusIsSpace`, the default) but itself in user-info.
 */
export function safeDecode(s: string, plusIsSpace = true): string {
  try {
    return decodeURIComponent(plusIsSpace ? s.replace(/\+/g, " ") : s);
  } catch {
    return s;
  }
}

/**
 * Every secret a raw command line holds, found without parsing it: the value
 * after any flag named in `secretFlags` (`--password X`, `--password=X`), the
 * values of credential-named options, headers and variables, and the
 * passwords and credential query values of every URL-shaped word
 * (`maskWords`). The CLI masks a usage error with these, since the parser
 * may fail before it has seen the flag's declaration.
 */
export function argvSecrets(
  argv: readonly string[],
  secretFlags: ReadonlySet<string>,
): string[] {
  return maskWords(argv, secretFlags).secrets;
}

/** Header names whose values are credentials whatever their wording. */
const SECRET_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
]);

/**
 * Whether a header named `name` carries a secret value (docs/contract.md §9): `Authorization`,
 * `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and credential names (`X-Api-Key`,
 * `X-Auth-Token`, `Private-Token`).
 */
export function isSecretHeader(name: string): boolean {
  return SECRET_HEADERS.has(name.toLowerCase()) || isCredentialName(name);
}

/** A command's words as displayed, and the secrets they hold. */
export interface MaskedWords {
  /** The words with each secret masked where it stands. */
  readonly display: string[];
  /** The secrets found, as written (and percent-decoded where a URL holds them). */
  readonly secrets: string[];
  /** Those of them that URLs hold (a password, a credential query value). */
  readonly urlSecrets: string[];
}

/** The placeholder that stands where a secret was. */
const MASK_WORD = "***";

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `--name` or `-n`, with its inline `=value` if any; undefined for another word. */
function optionOf(word: string): { name: string; value: string | undefined } | undefined {
  if (!word.startsWith("-") || word === "-" || word === "--") return undefined;
  const body = word.slice(word.startsWith("--") ? 2 : 1);
  if (!isAsciiLetter(body.charCodeAt(0))) return undefined;
  const eq = body.indexOf("=");
  return eq < 0
    ? { name: body, value: undefined }
    : { name: body.slice(0, eq), value: body.slice(eq + 1) };
}

/** Every URL-shaped piece of a word (split at blanks and commas) masked; its secrets collected. */
function maskUrlsIn(word: string, secrets: string[]): string {
  if (!word.includes("://") && !word.includes("?")) return word;
  return word.replace(/[^\s,]+/g, (part) => {
    if (!part.includes("://") && !part.includes("?")) return part;
    const r = redactUrl(part);
    secrets.push(...r.secrets);
    return r.display;
  });
}

/** `user:password` with the password masked (curl's `-u`); the password collected. */
function maskUserPassword(value: string, secrets: string[]): string {
  const colon = value.indexOf(":");
  if (colon < 0) return value;
  secrets.push(value.slice(colon + 1));
  return `${value.slice(0, colon + 1)}${MASK_WORD}`;
}

/**
 * A JSON object given as one word (a request body) with the values of its credential-named
 * members masked, at any depth; the word unchanged when it holds none, else written again by
 * `JSON.stringify` (its spacing is not kept).
 */
function maskJsonWord(word: string, secrets: string[]): string {
  let doc: unknown;
  try {
    doc = JSON.parse(word);
  } catch {
    return word;
  }
  let masked = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== "object" || v === null || depth > 64) return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (isCredentialName(k) && (typeof x === "string" || typeof x === "number")) {
        secrets.push(String(x));
        masked = true;
        out[k] = MASK_WORD;
      } else out[k] = walk(x, depth + 1);
    }
    return out;
  };
  const shown = walk(doc, 0);
  return masked ? JSON.stringify(shown) : word;
}

/** One word masked where it stands, when it is a header, an assignment, a JSON object or holds URLs. */
function maskWord(word: string, secrets: string[], urlSecrets: string[]): string {
  // A JSON object alone, or as an option's glued value (`--request={...}`, as a recipe gives it).
  const glued = word.startsWith("-") ? word.indexOf("={") + 1 : 0;
  if (word.startsWith("{", glued) && word.trimEnd().endsWith("}")) {
    const shown = word.slice(0, glued) + maskJsonWord(word.slice(glued), secrets);
    if (shown !== word) return shown;
  }
  const colon = word.indexOf(":");
  if (colon > 0 && HEADER_NAME.test(word.slice(0, colon).trim())) {
    const value = word.slice(colon + 1).trim();
    if (isSecretHeader(word.slice(0, colon).trim()) && value !== "") {
      secrets.push(value);
      // `Bearer x`: the token alone too, as a server may echo it without its scheme.
      const space = value.indexOf(" ");
      if (space > 0) secrets.push(value.slice(space + 1).trim());
      return `${word.slice(0, colon)}: ${MASK_WORD}`;
    }
  }
  const eq = word.indexOf("=");
  const name = word.slice(0, eq);
  if (eq > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && isCredentialName(name)) {
    secrets.push(word.slice(eq + 1));
    return `${name}=${MASK_WORD}`;
  }
  // A libpq keyword/value string as one word (`host=db user=app password=x`): each
  // credential-named value where it stands.
  if (eq > 0 && /\s/.test(word) && looksLikeKeywordValues(word)) {
    const kv = maskKeywordValues(word, isCredentialName, MASK_WORD);
    if (kv !== undefined && kv.display !== word) {
      secrets.push(...kv.secrets);
      return kv.display;
    }
  }
  const before = urlSecrets.length;
  const shown = maskUrlsIn(word, urlSecrets);
  secrets.push(...urlSecrets.slice(before));
  return shown;
}

/**
 * The words of a command (`then`'s, exec's, a condition's flags: docs/contract.md §9) with each
 * secret masked where it stands, found without knowing the program: URL passwords and
 * credential query values, the values of options and environment assignments with a credential
 * name (`--password=x`, `--token x`, `PGPASSWORD=x`), curl's `-u user:password`, and credential
 * headers' values (`Authorization: Bearer x`). `secretFlags`: further option names whose value
 * is a secret (the kinds' secret flags). The program itself gets its words as written.
 * `ownUntil`: the words before this index are waitcmd's own (a kind's flags): there an option's
 * value is a secret only when its flag is declared secret, never by its name (a `--key`
 * and `--client-key` name files; docs/contract.md §9).
 */
export function maskWords(
  words: readonly string[],
  secretFlags: ReadonlySet<string> = new Set(),
  ownUntil = 0,
): MaskedWords {
  const display: string[] = [];
  const secrets: string[] = [];
  const urlSecrets: string[] = [];
  /** What the next word is: the value of a secret option, or curl's `user:password`. */
  let next: "flag" | "secret" | "user" | undefined;
  for (const [i, word] of words.entries()) {
    const now = next;
    next = undefined;
    // A kind's secret flag takes the next word whatever it is; a guessed one not an option.
    if (now === "flag" || (now === "secret" && !(word.startsWith("-") && word.length > 1))) {
      secrets.push(word);
      display.push(MASK_WORD);
      continue;
    }
    if (now === "user") {
      display.push(maskUserPassword(word, secrets));
      continue;
    }
    const option = optionOf(word);
    if (option !== undefined) {
      const guess = i >= ownUntil;
      const curlUser = guess && (option.name === "u" || option.name === "user");
      if (curlUser || secretFlags.has(option.name) || (guess && isCredentialName(option.name))) {
        const value = option.value;
        if (value === undefined) {
          // `--token x`: the value is the next word.
          next = curlUser ? "user" : secretFlags.has(option.name) ? "flag" : "secret";
          display.push(word);
          continue;
        }
        const flag = word.slice(0, word.length - value.length);
        if (curlUser) {
          display.push(flag + maskUserPassword(value, secrets));
        } else {
          secrets.push(value);
          display.push(flag + MASK_WORD);
        }
        continue;
      }
    }
    display.push(maskWord(word, secrets, urlSecrets));
  }
  return {
    display,
    secrets: secrets.filter((s) => s !== ""),
    urlSecrets: urlSecrets.filter((s) => s !== ""),
  };
}

/**
 * A usage error's line with the secrets of the raw command line masked (docs/contract.md §9):
 * each word that holds one is shown as `maskWords` shows it wherever the line quotes it, then the
 * values given to secret or credential-named flags and headers (at least 4 characters, not glued
 * to a word) are masked by value, and the password of every URL. A URL's password is not masked
 * by value, as it may equal the kind word, the user or the database (`postgres`): the URL is shown
 * masked instead. `secretFlags`: the kinds' secret flags, as the parser may fail before it has
 * seen the flag's declaration; `ownUntil` as for `maskWords`.
 */
export function maskArgvText(
  text: string,
  argv: readonly string[],
  secretFlags: ReadonlySet<string>,
  ownUntil = 0,
): string {
  const m = maskWords(argv, secretFlags, ownUntil);
  let out = text;
  argv.forEach((word, i) => {
    const shown = m.display[i]!;
    // A word that is a secret as a whole is masked by value below, where not glued to a word.
    if (shown === word || shown === MASK_WORD) return;
    if (word.length < MIN_BY_VALUE && !word.includes("://")) return;
    const quoted = JSON.stringify(word).slice(1, -1);
    out = out.split(word).join(shown);
    if (quoted !== word) out = out.split(quoted).join(JSON.stringify(shown).slice(1, -1));
  });
  const url = new Set(m.urlSecrets);
  return redactText(out, new SecretRegistry(m.secrets.filter((s) => !url.has(s))));
}

/**
 * Every secret the words of a command hold (`then`'s, docs/contract.md §9): those `maskWords`
 * masks where they stand, registered so that what the command's output echoes is masked too.
 */
export function commandSecrets(words: readonly string[]): string[] {
  return maskWords(words).secrets;
}

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
