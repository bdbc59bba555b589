/**
 * The output's part of the secrets rule (docs/contract.md §9). waitcmd's own
 * words (kind words, names and targets, JSON keys, statuses, messages) are
 * never masked by value: a secret in them was masked where it stands when
 * they were built (a URL's password, a secret flag's value). Text from
 * outside had the run's secrets masked by value when it came in
 * (engine/attempt.ts); what the output still does on every text is the
 * structural safety net, the password of every URL, in linear time. The
 * captures alone are masked by value here, since `then` gets them as
 * matched. Text lines also get their control characters escaped, so one
 * event is one line (§6); JSON escapes them by itself.
 *
 * @module
 */

import {
  escapeControls,
  linesWithoutControls,
  maskUrlPasswords,
  redactText,
  SecretRegistry,
} from "../engine/masking.ts";

/** Replaces secrets in a text. */
export type Redact = (text: string) => string;

/** The placeholder that stands where a secret was. */
export const MASK = "***";

/** The registry behind a redactor, for `redactDeep`'s shortcut and `redactOutside`. */
const REGISTRY = Symbol("waitcmd.redact.registry");

/**
 * Builds the output's redactor: the password of every URL masked (`scheme://app:***@db`), the
 * rest as it is. Given the run's registry, `redactOutside` masks its secrets too, also those
 * registered after the redactor was made.
 */
export function makeRedactor(secrets: readonly string[] | SecretRegistry): Redact {
  const registry = secrets instanceof SecretRegistry ? secrets : new SecretRegistry(secrets);
  const redact: Redact = (text) => maskUrlPasswords(text);
  return Object.assign(redact, { [REGISTRY]: registry });
}

/**
 * A text from outside that did not come in through an attempt's result (the captures, which
 * `then` gets as matched): the run's secrets masked by value, then `redact`.
 */
export function redactOutside(text: string, redact: Redact): string {
  const registry = (redact as { [REGISTRY]?: SecretRegistry })[REGISTRY];
  return redact(registry === undefined ? text : redactText(text, registry));
}

/** The styles output/text.ts colours with (SGR only): kept when a line is escaped. */
// deno-lint-ignore no-control-regex
const STYLE = /\x1b\[(?:3[1239]|1|22)m/g;

/**
 * A redactor of text lines; `lines`, where it has one, redacts many lines at once and joins
 * them with newlines: the summary of a run of tens of thousands of conditions (one line each)
 * in one pass over its text, not one a line (docs/contract.md §3, the deadline's 100 ms).
 */
export type LineRedact = Redact & { lines?(lines: readonly string[]): string };

/**
 * The redactor of text lines: `redact`, then control characters escaped (a server's newline
 * cannot forge a line of its own). With `styled`, the colours waitcmd itself adds stay.
 */
export function lineRedactor(redact: Redact, styled: boolean): LineRedact {
  if (!styled) {
    const line = (text: string) => escapeControls(redact(text));
    // The output's own redactor masks URL passwords only: a text without `://`, without a
    // control character but the newlines that join its lines, is each of its lines redacted.
    if (!(REGISTRY in redact)) return line;
    return Object.assign(line, {
      lines(lines: readonly string[]): string {
        const text = lines.join("\n");
        if (
          !text.includes("://") && linesWithoutControls(text) &&
          newlines(text) === lines.length - 1
        ) return text;
        return lines.map(line).join("\n");
      },
    });
  }
  return (text) => {
    const red = redact(text);
    const styles = red.match(STYLE);
    if (styles === null) return escapeControls(red);
    return red.split(STYLE).map((p, i) => escapeControls(p) + (styles[i] ?? "")).join("");
  };
}

/** How many newlines `text` holds. */
function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Applies a redactor to every string inside a JSON-like value (a copy; the value itself without secrets). */
export function redactDeep<T>(value: T, redact: Redact): T {
  // Nothing registered: a walk of a 10,000-condition report for nothing (docs/performance.md).
  // The texts probes returned had their URL passwords masked when they came in (engine/attempt.ts),
  // and names and targets are built masked.
  const registry = (redact as { [REGISTRY]?: SecretRegistry })[REGISTRY];
  if (registry !== undefined && registry.size === 0) return value;
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, redact);
    return out as T;
  }
  return value;
}
