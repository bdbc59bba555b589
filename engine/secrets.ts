/**
 * Finding secrets in text the user typed (docs/contract.md §9): URL
 * user-info and query values named like a credential. Used by kinds for
 * their targets and by the CLI on the raw command line, so a usage error
 * about a URL that does not even parse still never echoes its password.
 *
 * @module
 */

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

/** Endings that make a name a credential name (`api_token`, `X-Api-Key`, `PGPASSWORD`). */
const CREDENTIAL_ENDINGS = ["_token", "-token", "_key", "-key", "_secret", "-secret", "password"];

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

/** Query parameter names whose values are secrets. */
export const SECRET_PARAM: RegExp = /token|key|secret|passw|pwd|auth|sig|credential/i;

/**
 * The URL as displayed: user-info becomes `***`, values of query parameters
 * named like token/key/secret/password become `***`. Works on any text, a
 * malformed URL included. Returns the display text and the secrets it hid.
 */
export function redactUrl(text: string): { display: string; secrets: string[] } {
  const secrets: string[] = [];
  let display = text.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i, (_m, scheme, info) => {
    // With a password, the password alone is the secret: output that echoes
    // the URL keeps its user (`postgres://app:***@db`), as docs/contract.md §9 shows.
    const colon = info.indexOf(":");
    secrets.push(colon >= 0 ? info.slice(colon + 1) : info);
    return `${scheme}***@`;
  });
  const q = display.indexOf("?");
  if (q >= 0) {
    const hash = display.indexOf("#", q);
    const end = hash >= 0 ? hash : display.length;
    const query = display.slice(q + 1, end).split("&").map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const name = safeDecode(pair.slice(0, eq));
      const value = pair.slice(eq + 1);
      if (!SECRET_PARAM.test(name) || value === "") return pair;
      secrets.push(value, safeDecode(value));
      return `${pair.slice(0, eq)}=***`;
    }).join("&");
    display = display.slice(0, q + 1) + query + display.slice(end);
  }
  return { display, secrets };
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
 * after any flag named in `secretFlags` (`--password X`, `--password=X`) and
 * the user-info and credential-like query values of every URL-shaped word.
 * The CLI redacts a usage error with these, since the parser may fail
 * before it has seen the flag's declaration.
 */
export function argvSecrets(argv: readonly string[], secretFlags: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const flag = /^--?([^=]+)(?:=(.*))?$/s.exec(word);
    if (flag && secretFlags.has(flag[1]!)) {
      const value = flag[2] ?? argv[i + 1];
      if (value !== undefined) out.push(value);
    }
    for (const part of word.split(/[\s,]+/)) {
      if (part.includes("://") || part.includes("?")) out.push(...redactUrl(part).secrets);
    }
  }
  return out.filter((s) => s !== "");
}

/** Headers whose values are credentials. */
const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-[\w-]*(token|key|secret|auth)[\w-]*)\s*:\s*(.+)$/i;

/**
 * Every secret the words of a command hold (`then`'s, docs/contract.md §9),
 * found without knowing the program: URL user-info and credential-like query
 * values, the values of options and environment assignments named like a
 * credential (`--password=x`, `--token x`, `PGPASSWORD=x`), and the values
 * of credential headers (`Authorization: Bearer x`, with the token alone too).
 */
export function commandSecrets(words: readonly string[]): string[] {
  const out: string[] = [];
  words.forEach((word, i) => {
    for (const part of word.split(/[\s,]+/)) {
      if (part.includes("://") || part.includes("?")) out.push(...redactUrl(part).secrets);
    }
    const header = SECRET_HEADER.exec(word);
    if (header) {
      const value = header[3]!.trim();
      out.push(value);
      const scheme = /^\w+\s+(.+)$/.exec(value);
      if (scheme) out.push(scheme[1]!);
      return;
    }
    const option = /^--?([A-Za-z][\w.-]*)(?:=(.*))?$/s.exec(word);
    // curl's `-u user:password`.
    if (option && (option[1] === "u" || option[1] === "user")) {
      const value = option[2] ?? words[i + 1] ?? "";
      const colon = value.indexOf(":");
      if (colon >= 0) out.push(value.slice(colon + 1));
      return;
    }
    if (option && SECRET_PARAM.test(option[1]!)) {
      const value = option[2] ?? words[i + 1];
      if (value !== undefined && (option[2] !== undefined || !value.startsWith("-"))) {
        out.push(value);
      }
      return;
    }
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/s.exec(word);
    if (assignment && SECRET_PARAM.test(assignment[1]!)) out.push(assignment[2]!);
  });
  return out.filter((s) => s !== "");
}

/**
 * The secrets of one run (docs/contract.md §9): those known once the command line is parsed,
 * and those found while it runs (a password file's content, a kubeconfig's token). Output and
 * probes share it: what a probe registers is masked from every output made after.
 */
export class SecretRegistry {
  readonly #values = new Set<string>();
  /** Longest first, so that overlapping secrets vanish whole; rebuilt after an `add`. */
  #sorted: string[] | undefined = [];

  constructor(values: Iterable<string> = []) {
    for (const v of values) this.add(v);
  }

  /**
   * Registers a secret, and its percent-encoded form (how it shows inside a URL). Values under
   * 3 characters are not: masking them would mangle unrelated text and protect nothing.
   */
  add(value: string | undefined): void {
    if (value === undefined || value.length < 3) return;
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

  /** The registered values (as written and percent-encoded), e.g. to hand them to a worker. */
  values(): IterableIterator<string> {
    return this.#values.values();
  }

  /** How many values are registered (none: masking has nothing to do). */
  get size(): number {
    return this.#values.size;
  }

  /** `text` with each registered value as `***`. */
  mask(text: string): string {
    if (this.#values.size === 0) return text;
    this.#sorted ??= [...this.#values].sort((a, b) => b.length - a.length);
    let out = text;
    for (const s of this.#sorted) {
      if (out.includes(s)) out = out.split(s).join("***");
    }
    return out;
  }
}

/**
 * `scheme://user:password@`: the password is every character up to the `@`. Brackets are not
 * user-info (RFC 3986 has them percent-encoded there), so a form such as
 * `postgres://[user[:password]@]host` in a usage error stays as it is.
 */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s/?#:@[\]]*):[^\s/?#@[\]]*@/gi;

/**
 * The one redaction rule for every text waitcmd shows (docs/contract.md §9): each registered
 * secret becomes `***`, and so does the password of every URL (`postgres://app:***@db`), which
 * keeps the user (shown, as the data-store kinds show it) and hides what a server's or a
 * command's text may echo without anyone having registered it.
 */
export function redactText(text: string, secrets?: SecretRegistry): string {
  const out = secrets ? secrets.mask(text) : text;
  return out.includes("://") ? out.replace(URL_PASSWORD, "$1:***@") : out;
}

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]/g;

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
