/**
 * The user's mistakes, as opposed to ours: a `UsageError` means exit 2 and
 * one line on stderr, before anything is probed.
 *
 * @module
 */

import type { Registry } from "./registry.ts";
import { redactText } from "./masking.ts";

/** A bad flag, value, target or combination. `main` prints it and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
  /** Where: `condition 2 (http)`, `--timeout`, or empty. */
  readonly where: string;
  /** The help topic to point at: a kind name, or undefined for `waitcmd --help`. */
  readonly helpTopic: string | undefined;

  /**
   * For an error found with only some kinds' declarations loaded: the same error with the
   * hints that need every kind (did you mean …?). The CLI calls it instead of parsing again.
   */
  readonly complete: ((every: Registry) => UsageError) | undefined;

  constructor(
    where: string,
    message: string,
    helpTopic?: string,
    complete?: (every: Registry) => UsageError,
  ) {
    super(message);
    this.where = where;
    this.helpTopic = helpTopic;
    this.complete = complete;
  }

  /** The single line printed to stderr. */
  format(): string {
    const see = this.helpTopic ? `waitcmd help ${this.helpTopic}` : "waitcmd --help";
    const where = this.where ? `${this.where}: ` : "";
    return `waitcmd: ${where}${this.message} (see: ${see})`;
  }
}

/** Returns the text of any thrown value, for error lines (never a stack trace). */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/**
 * A failure no retry can fix (a command does not exist, a client cannot be
 * set up), thrown by a helper that returns something other than a
 * `ProbeResult`; it ends the run with exit 3 (docs/contract.md §8). Code that
 * returns a `ProbeResult` returns `{status: "fatal"}` instead
 * (docs/development.md, the one fatal rule). Every other thrown value is a
 * pending attempt.
 */
export class FatalError extends Error {
  override name = "FatalError";
}

/**
 * `e` carrying `hint`: what is likely wrong and how to fix it, for a failure
 * users often meet (docs/contract.md §6, hints). The attempt boundary puts it
 * in the attempt's result beside the error's text. Returns `e`.
 */
export function withHint<E extends Error>(e: E, hint: string | undefined): E {
  return hint === undefined ? e : Object.assign(e, { hint });
}

/** The hint a thrown value carries (`withHint`), if any. */
export function hintOf(e: unknown): string | undefined {
  const hint = e !== null && typeof e === "object" ? (e as { hint?: unknown }).hint : undefined;
  return typeof hint === "string" && hint !== "" ? hint : undefined;
}

/**
 * Any error as a short lower-case text for `last_error`: `connection
 * refused`, `no such file or directory`. The OS error number is dropped and
 * a failed name lookup reads `cannot resolve host: ...`. The one error
 * vocabulary of every kind (docs/contract.md §8).
 */
export function describeError(e: unknown): string {
  const raw = errorText(e);
  // The same few short texts come back attempt after attempt: remembered.
  const known = described.get(raw);
  if (known !== undefined) return known;
  let text = raw;
  text = text.replace(/\s*\(os error \d+\)/g, "").trim();
  // A file watcher's error names the paths it was given: `… about ["/etc/app"]`.
  text = text.replace(/ about \[.*\]$/s, "");
  if (/^failed to lookup address information/i.test(text)) {
    text = "cannot resolve host: " + text.replace(/^failed to lookup address information:\s*/i, "");
  }
  // Deno's `failed to spawn '/usr/bin/ping': Too many open files`.
  text = text.replace(
    /failed to spawn '([^']*)': (\w)/g,
    (_m, cmd: string, c: string) => `cannot start ${cmd}: ${c.toLowerCase()}`,
  );
  // Node's system errors: `connect EMFILE 127.0.0.1:80`, `bind EMFILE 0.0.0.0`, `write EPIPE`.
  text = text.replace(NODE_SYSTEM_ERROR, (m, call: string, code: string, arg?: string) => {
    if (call === "getaddrinfo" && (code === "ENOTFOUND" || code === "EAI_AGAIN")) {
      return `cannot resolve host: ${arg ?? ""}`.trimEnd();
    }
    const said = ERRNO_TEXTS[code];
    if (said === undefined) return m;
    return arg !== undefined && /^E(NOENT|ACCES|PERM|NOTDIR|ISDIR)$/.test(code)
      ? `${said}: ${arg}`
      : said;
  });
  // Node's ERR_INVALID_ARG_TYPE (`The first argument must be of type string or an instance of
  // Buffer…`) is a library handed something it cannot take: said as that, not as its text.
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ERR_INVALID_ARG_TYPE" || /^The (?:first |"\w+" )?argument must be /.test(text)) {
    text = "a library was given a value it cannot take (ERR_INVALID_ARG_TYPE)";
  }
  text = text.charAt(0).toLowerCase() + text.slice(1);
  // A library's error may quote a URL with its password (docs/contract.md §9).
  text = redactText(text);
  if (raw.length <= 256) {
    if (described.size >= DESCRIBED_MAX) described.clear();
    described.set(raw, text);
  }
  return text;
}

/** `<syscall> E<CODE> [<address or path>]`, as node writes a system error. */
const NODE_SYSTEM_ERROR = /\b([a-z]+) (E[A-Z0-9_]{2,})\b(?: ([^\s;,()]+))?/g;

/** The errno codes node names, as the short texts of docs/contract.md §8 (strerror's, mostly). */
const ERRNO_TEXTS: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EADDRINUSE: "address already in use",
  EADDRNOTAVAIL: "address not available",
  EAGAIN: "resource temporarily unavailable",
  ECONNABORTED: "connection aborted",
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by peer",
  EHOSTDOWN: "host is down",
  EHOSTUNREACH: "host unreachable",
  EINVAL: "invalid argument",
  EISDIR: "is a directory",
  EMFILE: "too many open files",
  ENETDOWN: "network is down",
  ENETUNREACH: "network unreachable",
  ENFILE: "too many open files in the system",
  ENOBUFS: "no buffer space available",
  ENOENT: "no such file or directory",
  ENOMEM: "out of memory",
  ENOSPC: "no space left on device",
  ENOTCONN: "not connected",
  ENOTDIR: "not a directory",
  ENOTSOCK: "not a socket",
  EPERM: "operation not permitted",
  EPIPE: "connection closed by peer",
  EPROTO: "protocol error",
  ETIMEDOUT: "connection timed out",
};

const described = new Map<string, string>();
const DESCRIBED_MAX = 1024;

/**
 * The npm package that Deno could not load because it is not installed
 * (`npm:pg@8.23.1`), when that is what `e` says; else undefined. A wait never
 * downloads (`--cached-only`; docs/development.md): such a run ends at once
 * with one line naming the command that installs what is missing.
 */
export function missingPackage(e: unknown): string | undefined {
  const text = errorText(e);
  const m = /Could not find a matching package for '(npm:[^']+)' in the node_modules directory/
    .exec(text) ??
    /Failed caching npm package '([^']+)'/.exec(text) ??
    /npm package not found in cache: "([^"]+)"/.exec(text);
  if (!m) return undefined;
  return m[1]!.startsWith("npm:") ? m[1]! : `npm:${m[1]}`;
}
