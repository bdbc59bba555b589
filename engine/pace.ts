/**
 * Long work before the wait, in slices: a step function or a generator runs
 * until `SLICE_MS` of work have passed, then the event loop has a turn, so a
 * signal is answered within about a slice (docs/contract.md §3). What a run
 * of tens of thousands of conditions takes to lex, parse, validate, expand
 * and explain is seconds on a busy machine; none of it holds a signal.
 *
 * @module
 */

import { turn } from "./timers.ts";

/** How long a slice of work runs before the event loop has a turn. */
export const SLICE_MS = 10;

/** Thrown by a {@link Pacer} once its signal aborted: the work is not wanted any more. */
export class Stopped extends Error {
  override name = "Stopped";
  constructor(readonly reason: unknown) {
    super(`stopped: ${String(reason)}`);
  }
}

/** Gives the event loop a turn once a slice of work has passed. */
export class Pacer {
  #since = performance.now();
  #steps = 0;

  /** `signal`: once it aborts, the next step throws {@link Stopped}. */
  constructor(readonly signal?: AbortSignal, readonly sliceMs: number = SLICE_MS) {}

  /**
   * Call between two pieces of work. The clock is read every eighth call (reading it is not
   * free either); a turn is taken when the slice is over.
   */
  async step(): Promise<void> {
    if ((++this.#steps & 7) !== 0) return;
    if (performance.now() - this.#since < this.sliceMs) return;
    await turn();
    if (this.signal?.aborted) throw new Stopped(this.signal.reason);
    this.#since = performance.now();
  }
}

/**
 * Runs `steps` (a generator that yields between pieces of its work) to its end in slices,
 * and returns what it returns.
 */
export async function paced<T>(steps: Iterator<unknown, T>, pacer = new Pacer()): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pacer.step();
  }
}

/** Runs `steps` to its end at once, for callers that want the answer now (tests, help). */
export function finish<T>(steps: Iterator<unknown, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}
