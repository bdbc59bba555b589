/**
 * Removes secrets from every text waitcmd writes. Kinds declare secret flags
 * (and register secrets read from the environment); output runs everything
 * through one redactor, so no renderer can forget.
 *
 * @module
 */

/** Replaces secrets in a text. */
export type Redact = (text: string) => string;

/** The placeholder that stands where a secret was. */
export const MASK = "***";

/** Builds a redactor for these secrets (longest first, so overlapping secrets vanish whole). */
export function makeRedactor(secrets: readonly string[]): Redact {
  // Very short values would shred unrelated text and protect nothing.
  const list = [...new Set(secrets)].filter((s) => s.length >= 3).sort((a, b) =>
    b.length - a.length
  );
  if (list.length === 0) return keep;
  return (text) => {
    let out = text;
    for (const s of list) {
      if (out.includes(s)) out = out.split(s).join(MASK);
    }
    return out;
  };
}

/** The redactor of a run without secrets: every text as it is. */
const keep: Redact = (text) => text;

/** Applies a redactor to every string inside a JSON-like value (a copy; the value itself without secrets). */
export function redactDeep<T>(value: T, redact: Redact): T {
  // Nothing to remove: a walk of a 10,000-condition report for nothing (docs/performance.md).
  if (redact === keep) return value;
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, redact);
    return out as T;
  }
  return value;
}
