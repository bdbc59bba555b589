/**
 * One flag's words as a typed value (docs/contract.md §1): the flag's name and inline value, its
 * text checked against its declared type and range, `--timeout`, and the message
 * for a flag a condition does not take. Pure: every failure is a `UsageError`.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { parseDuration } from "./duration.ts";
import { COMMON_CONDITION_FLAGS, GLOBAL_FLAGS } from "./options.ts";
import { didYouMean } from "./suggest.ts";
import type { ConditionKind, FlagSpec } from "./types.ts";

/** A flag's value as its type gives it. */
export type FlagValue = string | boolean | number;

/**
 * The message for a flag a condition does not take: the nearest flag of the kind, or where a
 * global option belongs (`-t`, `--timeout` after a condition), or how flags are written.
 */
export function unknownFlag(tok: string, name: string, long: boolean, kind: ConditionKind): string {
  const all = [...kind.flags, ...COMMON_CONDITION_FLAGS].map((f) => f.name);
  const global = GLOBAL_FLAGS.find((f) => long ? f.name === name : f.short === name);
  let hint = long ? didYouMean(name, all, (s) => `--${s}`) : "";
  if (!hint && global) {
    hint = `; global options such as ${long ? "--" + name : `-${name} (--${global.name})`} go ` +
      "before the first condition";
  }
  if (!long) hint ||= `; flags are written --name`;
  return `unknown flag ${long ? "--" + name : tok}${hint}`;
}

/**
 * A flag's text as its declared type, range-checked; `raw` undefined means
 * a boolean flag given bare. Throws a `UsageError` located at `where`.
 */
export function typedValue(
  spec: FlagSpec,
  raw: string | undefined,
  where: string,
  topic: string | undefined,
  siblings: readonly FlagSpec[] = [],
): FlagValue {
  const fail = (msg: string): never => {
    throw new UsageError(where, msg, topic);
  };
  if (spec.type === "boolean") {
    if (raw === undefined || raw === "true") return true;
    if (raw === "false") return false;
    return fail(`expected true or false, got ${q(raw)}`);
  }
  if (raw === undefined) return fail("missing value");
  switch (spec.type) {
    case "string":
      return raw;
    case "enum": {
      const values = spec.values ?? [];
      // Enum values are matched case-insensitively (`--type aaaa`), then given canonically.
      const found = values.find((v) => v.toLowerCase() === raw.toLowerCase());
      if (found === undefined) {
        // A value of another flag of the kind (`docker web --status healthy`) points at that flag.
        const owner = siblings.find((f) =>
          f !== spec && f.type === "enum" &&
          f.values?.some((v) => v.toLowerCase() === raw.toLowerCase())
        );
        const hint = owner ? ` (did you mean --${owner.name} ${raw}?)` : didYouMean(raw, values);
        fail(`expected one of ${values.join(", ")}, got ${q(raw)}${hint}`);
      }
      return found!;
    }
    case "integer": {
      const min = spec.min;
      const max = spec.max;
      const reserved = Object.keys(spec.reserved ?? {});
      const range =
        (min !== undefined && max !== undefined
          ? ` from ${min} to ${max}`
          : min !== undefined
          ? ` of at least ${min}`
          : "") + (reserved.length ? ` other than ${reserved.join(" and ")}` : "");
      if (!/^-?\d+$/.test(raw)) return fail(`expected a whole number${range}, got ${q(raw)}`);
      const n = Number(raw);
      if (
        !Number.isSafeInteger(n) || (min !== undefined && n < min) ||
        (max !== undefined && n > max)
      ) {
        return fail(`expected a whole number${range}, got ${q(raw)}`);
      }
      const why = spec.reserved?.[n];
      if (why !== undefined) return fail(`${n} is ${why}; expected a whole number${range}`);
      return n;
    }
    case "duration": {
      const ms = parseDuration(raw);
      if (ms === undefined) {
        return fail(`expected a duration like 30s, 2m or 1h30m, got ${q(raw)}`);
      }
      return ms;
    }
  }
}

/** `--timeout`'s value: a duration, or `0` / `none` for no deadline (Infinity). */
export function timeoutValue(raw: string, where: string): number {
  if (raw.toLowerCase() === "none") return Infinity;
  const ms = parseDuration(raw);
  if (ms === undefined) {
    throw new UsageError(
      where,
      `expected a duration like 30s, 2m or 1h30m, got ${q(raw)}`,
    );
  }
  return ms === 0 ? Infinity : ms;
}

/** `--name=value` or `-n` split into the name and the inline value, if any. */
export function splitFlag(tok: string): { name: string; inline: string | undefined } {
  const body = tok.replace(/^--?/, "");
  const eq = body.indexOf("=");
  if (eq < 0) return { name: body, inline: undefined };
  return { name: body.slice(0, eq), inline: body.slice(eq + 1) };
}

/** Quotes a user's word for an error line. */
export function q(s: string): string {
  return JSON.stringify(s);
}
