/**
 * The user's mistakes, as opposed to ours: a `UsageError` means exit 2 and
 * one line on stderr, before anything is probed.
 *
 * @module
 */

import type { Registry } from "./registry.ts";

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
 * A failure no retry can fix (a job failed, a command does not exist).
 * Thrown by a probe or a helper, it ends the run with exit 3
 * (docs/contract.md §8); every other thrown value is a pending attempt.
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
  if (/^failed to lookup address information/i.test(text)) {
    text = "cannot resolve host: " + text.replace(/^failed to lookup address information:\s*/i, "");
  }
  text = text.charAt(0).toLowerCase() + text.slice(1);
  if (raw.length <= 256) {
    if (described.size >= DESCRIBED_MAX) described.clear();
    described.set(raw, text);
  }
  return text;
}

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
