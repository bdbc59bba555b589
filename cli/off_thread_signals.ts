/**
 * A second ear for the cancelling signals, on a worker's thread, for runs of many conditions
 * (docs/reliability.md, "Signals in large runs"). In a run of 30,000 socket conditions, the
 * runtime's main event loop was seen to call a signal listener up to 1.6 s after the signal
 * (and, rarely, never), while its timers ran on time; a listener in a worker of its own hears it
 * at once. Its message back would wait in the same event loop, so the worker writes the signal
 * into shared memory instead, and a timer of the main thread reads it.
 *
 * @module
 */

import { workerUrl } from "../engine/workers.ts";

/** What the worker is sent: where to write, and the signals to listen for. */
export interface EarJob {
  /** [0]: 0, or 1 + the index in `signals` of the first signal heard; [1]: 1 once listening. */
  readonly heard: Int32Array;
  readonly signals: readonly Deno.Signal[];
}

/** How often the main thread reads what the worker heard. */
export const READ_EVERY_MS = 20;

/** Signals heard on a worker's thread and handed to the main thread's `onSignal`. */
export class OffThreadEar {
  readonly #heard = new Int32Array(new SharedArrayBuffer(8));
  readonly #worker: Worker;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(signals: readonly Deno.Signal[], onSignal: (signal: Deno.Signal) => void) {
    this.#worker = new Worker(workerUrl("signals"), { type: "module" });
    this.#worker.postMessage({ heard: this.#heard, signals } satisfies EarJob);
    this.#timer = setInterval(() => {
      const n = Atomics.exchange(this.#heard, 0, 0);
      if (n > 0) onSignal(signals[n - 1]!);
    }, READ_EVERY_MS);
    // It keeps nothing alive: the run's own work does.
    this.#timer.unref();
  }

  /** Whether the worker listens yet (until then, only the main thread's listeners hear). */
  get listening(): boolean {
    return Atomics.load(this.#heard, 1) === 1;
  }

  /** Stops listening: the worker ends, the timer too. */
  stop(): void {
    clearInterval(this.#timer);
    this.#worker.terminate();
  }
}
