/**
 * Time, injected: the runner never calls `Date.now` or `setTimeout` itself,
 * so tests drive `--stable-for 10m` in microseconds with a fake clock.
 *
 * @module
 */

import { onAbort } from "./abort.ts";
import { MAX_TIMER_MS, SleepScheduler } from "./timers.ts";

/** A source of time and of waiting. */
export interface Clock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /**
   * Resolves after `ms`, or as soon as `signal` aborts (it never rejects, so
   * an abandoned sleep cannot become an unhandled rejection).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const realClock: Clock = {
  now: () => performance.now(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      let left = Math.max(0, ms);
      let timer: ReturnType<typeof setTimeout>;
      // A `Set` entry, not an event listener, per sleep (engine/abort.ts).
      const off = signal
        ? onAbort(signal, () => {
          clearTimeout(timer);
          resolve();
        })
        : undefined;
      // A longer delay would overflow to 1 ms (`--timeout 30d` ending at once).
      const arm = () => {
        const step = Math.min(left, MAX_TIMER_MS);
        left -= step;
        timer = setTimeout(() => {
          if (left > 0) return arm();
          off?.();
          resolve();
        }, step);
      };
      arm();
    });
  },
};

/**
 * The CLI's clock: `realClock` without the cost of Deno's `setTimeout`. In
 * Deno 2.9 the global `setTimeout` is node:timers', and its first use loads
 * that machinery (about 7 ms of CPU, a tenth of a short run's;
 * docs/performance.md). `AbortSignal.timeout` runs on Deno's own timers for
 * a fraction of that but cannot be cancelled, so the CLI's sleeps share one
 * scheduler (engine/timers.ts): one such timer armed for the earliest
 * deadline, sleeps due together woken together. A cancelled sleep leaves at
 * once; a timer left armed for it may keep the event loop alive until it
 * fires, which the CLI never waits for (it ends with `Deno.exit`). Library
 * code and tests use `realClock`.
 */
export const cliClock: Clock = (() => {
  const scheduler = new SleepScheduler(realClock.now, (ms, fire) => {
    AbortSignal.timeout(ms).addEventListener("abort", fire, { once: true });
  });
  return { now: realClock.now, sleep: (ms, signal) => scheduler.sleep(ms, signal) };
})();
