/**
 * The boundary of one attempt, where the error rule (docs/contract.md §8) is
 * applied: what the attempt's body throws becomes its result, and an abort
 * ends the attempt at once whatever the body is still waiting for (a
 * library's import, a driver that ignores signals).
 *
 * @module
 */

import { onAbort } from "./abort.ts";
import { describeError, FatalError } from "./errors.ts";
import type { ProbeResult } from "./types.ts";

/** The result the error rule gives a thrown value: `FatalError` is fatal, anything else pending. */
export function resultOf(e: unknown): ProbeResult {
  return e instanceof FatalError
    ? { status: "fatal", error: e.message }
    : { status: "pending", error: describeError(e) };
}

/**
 * Runs one attempt's `body` and never throws: a thrown value becomes its
 * result (`resultOf`), and when `signal` aborts the attempt resolves at once
 * as pending with the abort's reason, leaving the body to finish (or fail)
 * in the background without an unhandled rejection.
 */
export function settle(
  signal: AbortSignal,
  body: () => Promise<ProbeResult>,
): Promise<ProbeResult> {
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
