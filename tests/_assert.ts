/**
 * The few assertions the tests need (jsr:@std/assert cannot be reached from
 * these machines). Deep equality comes from node:assert.
 *
 * @module
 */

import { deepStrictEqual } from "node:assert";

/** Fails with `msg` unless `cond` is truthy. */
export function assert(cond: unknown, msg = "assertion failed"): asserts cond {
  if (!cond) throw new Error(msg);
}

/** Deep, strict equality. */
export function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  if (msg === undefined) deepStrictEqual(actual, expected);
  else deepStrictEqual(actual, expected, msg);
}

/** `text` includes `part`. */
export function assertStringIncludes(text: string, part: string, msg?: string): void {
  if (!text.includes(part)) {
    throw new Error(msg ?? `expected text to include ${JSON.stringify(part)}, got:\n${text}`);
  }
}

/** `text` matches `re`. */
export function assertMatch(text: string, re: RegExp, msg?: string): void {
  if (!re.test(text)) throw new Error(msg ?? `expected ${re} to match:\n${text}`);
}

/** `fn` throws an instance of `type`; returns it. */
export function assertThrows<E extends Error>(
  fn: () => unknown,
  type: new (...a: never[]) => E,
): E {
  try {
    fn();
  } catch (e) {
    if (e instanceof type) return e;
    throw new Error(`expected ${type.name}, got ${e}`);
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

/** `fn`'s promise rejects with an instance of `type` whose message includes `text`; returns it. */
export async function assertRejects<E extends Error>(
  fn: () => Promise<unknown>,
  type: new (...a: never[]) => E,
  text = "",
): Promise<E> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof type && e.message.includes(text)) return e;
    throw new Error(`expected ${type.name} with ${JSON.stringify(text)}, got ${e}`);
  }
  throw new Error(`expected ${type.name} to be rejected with`);
}
