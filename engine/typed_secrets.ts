/**
 * Finding secrets in text the user typed (docs/contract.md §9): URL
 * user-info and query values named like a credential. Used by kinds for
 * their targets and by the CLI on the raw command line, so a usage error
 * about a URL that does not even parse still never echoes its password.
 *
 * @module
 */

import { looksLikeKeywordValues, maskKeywordValues } from "./keyword_value.ts";
import {
  isAsciiLetter,
  isSchemeChar,
  MIN_BY_VALUE,
  redactText,
  SecretRegistry,
} from "./masking.ts";

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
