/**
 * Time, injected: the runner never calls `Date.now` or `setTimeout` itself,
 * so tests drive `--stable-for 10m` in microseconds with a fake clock.
 *
 * @module
 */

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
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};
