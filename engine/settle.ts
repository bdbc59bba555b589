/**
 * The boundary of one attempt, where the error rule (docs/contract.md §8) is
 * applied: what the attempt's body throws becomes its result, and an abort
 * ends the attempt at once whatever the body is still waiting for (a
 * library's import, a driver that ignores signals).
 *
 * @module
 */

import { onAbort } from "./abort.ts";
import { resultOf } from "./attempt.ts";
import { describeError } from "./errors.ts";
import type { ProbeResult } from "./types.ts";

// The one error rule, hints included (engine/attempt.ts).
export { resultOf };

/** Signals of attempts whose caller applies the error rule itself (`guardAttempt`). */
const guarded = new WeakSet<AbortSignal>();

/**
 * Marks `signal` as an attempt's whose caller (the runner) ends the attempt
 * itself when the signal aborts, whatever the probe is doing. A probe's
 * `settle` on that signal then only applies the error rule to its body and
 * does not listen for the abort, so an attempt registers for its abort once,
 * not twice (docs/performance.md, "Cost per condition"). Called directly, as
 * in tests, a probe is settled in full.
 */
export function guardAttempt(signal: AbortSignal): void {
  guarded.add(signal);
}

/**
 * Runs one attempt's `body` and never throws: a thrown value becomes its
 * result (`resultOf`), and when `signal` aborts the attempt resolves at once
 * as pending with the abort's reason, leaving the body to finish (or fail)
 * in the background without an unhandled rejection. On a signal that
 * `guardAttempt` marked, the caller ends the attempt on abort, and this
 * resolves when the body does.
 */
export function settle(
  signal: AbortSignal,
  body: () => Promise<ProbeResult>,
): Promise<ProbeResult> {
  if (guarded.has(signal)) {
    try {
      return Promise.resolve(body()).catch(resultOf);
    } catch (e) {
      return Promise.resolve(resultOf(e));
    }
  }
  const aborted = (): ProbeResult => ({
    status: "pending",
    error: signal.reason instanceof Error ? describeError(signal.reason) : "aborted",
  });
  if (signal.aborted) return Promise.resolve(aborted());
  return new Promise((resolve) => {
    const off = onAbort(signal, () => resolve(aborted()));
    let running: Promise<ProbeResult>;
    try {
      // Promise.resolve: a body that breaks its type and returns a plain value still settles.
      running = Promise.resolve(body());
    } catch (e) {
      running = Promise.reject(e);
    }
    running.then((r) => {
      off();
      resolve(r);
    }, (e: unknown) => {
      off();
      resolve(resultOf(e));
    });
  });
}
