/**
 * Removes secrets from every text waitcmd writes. Kinds declare secret flags
 * (and register secrets read from the environment or found at run time);
 * output runs everything through one redactor, so no renderer can forget
 * (docs/contract.md §9). Text lines also get their control characters
 * escaped, so one event is one line (§6); JSON escapes them by itself.
 *
 * @module
 */

import { escapeControls, redactText, SecretRegistry } from "../engine/secrets.ts";

/** Replaces secrets in a text. */
export type Redact = (text: string) => string;

/** The placeholder that stands where a secret was. */
export const MASK = "***";

/** The registry behind a redactor, for `redactDeep`'s shortcut. */
const REGISTRY = Symbol("waitcmd.redact.registry");

/**
 * Builds a redactor for these secrets (longest first, so overlapping secrets vanish whole) and
 * the password of every URL. Given the run's registry, secrets registered later count too.
 */
export function makeRedactor(secrets: readonly string[] | SecretRegistry): Redact {
  const registry = secrets instanceof SecretRegistry ? secrets : new SecretRegistry(secrets);
  const redact: Redact = (text) => redactText(text, registry);
  return Object.assign(redact, { [REGISTRY]: registry });
}

/** The styles output/text.ts colours with (SGR only): kept when a line is escaped. */
// deno-lint-ignore no-control-regex
const STYLE = /\x1b\[(?:3[1239]|1|22)m/g;

/**
 * The redactor of text lines: `redact`, then control characters escaped (a server's newline
 * cannot forge a line of its own). With `styled`, the colours waitcmd itself adds stay.
 */
export function lineRedactor(redact: Redact, styled: boolean): Redact {
  if (!styled) return (text) => escapeControls(redact(text));
  return (text) => {
    const red = redact(text);
    const styles = red.match(STYLE);
    if (styles === null) return escapeControls(red);
    return red.split(STYLE).map((p, i) => escapeControls(p) + (styles[i] ?? "")).join("");
  };
}

/** Applies a redactor to every string inside a JSON-like value (a copy; the value itself without secrets). */
export function redactDeep<T>(value: T, redact: Redact): T {
  // Nothing registered: a walk of a 10,000-condition report for nothing (docs/performance.md).
  // The texts probes returned had their URL passwords masked when they came in (engine/attempt.ts).
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
