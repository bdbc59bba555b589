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

/** The longest delay one timer takes (2^31-1 ms, about 24.8 days); longer sleeps chain timers. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The real clock. */
export const realClock: Clock = {
  now: () => performance.now(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      let left = Math.max(0, ms);
      let timer: ReturnType<typeof setTimeout>;
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      // A longer delay would overflow to 1 ms (`--timeout 30d` ending at once).
      const arm = () => {
        const step = Math.min(left, MAX_TIMER_MS);
        left -= step;
        timer = setTimeout(() => {
          if (left > 0) return arm();
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, step);
      };
      arm();
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};

/** How long `cliClock` bridges a sleep before it arms a cancellable timer. */
const BRIDGE_MS = 50;
let timersLoaded = false;

/**
 * The CLI's clock: `realClock` without a start-up cost. In Deno 2.9 the
 * first `setTimeout` of a process loads the node:timers machinery (about
 * 5 ms, most of a decided-at-once run); `AbortSignal.timeout` runs on
 * Deno's own timers for about 0.3 ms but cannot be cancelled. Until a real
 * timer has been needed, a sleep therefore waits its first 50 ms on
 * `AbortSignal.timeout` and only then arms a cancellable `setTimeout` for the
 * rest (from then on every sleep is a plain `realClock.sleep`), so a run
 * decided within 50 ms never loads the timers. The time slept is the same
 * either way; an abandoned bridge keeps the event loop alive for at most
 * 50 ms, which the CLI never waits for (it ends with `Deno.exit`). Library
 * code and tests use `realClock`.
 */
export const cliClock: Clock = {
  now: realClock.now,
  sleep(ms, signal) {
    if (timersLoaded) return realClock.sleep(ms, signal);
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const start = performance.now();
      const bridge = AbortSignal.timeout(Math.min(Math.max(0, ms), BRIDGE_MS));
      const onAbort = () => {
        bridge.removeEventListener("abort", onBridge);
        resolve();
      };
      const onBridge = () => {
        signal?.removeEventListener("abort", onAbort);
        const rest = ms - (performance.now() - start);
        if (rest <= 0) return resolve();
        timersLoaded = true;
        realClock.sleep(rest, signal).then(resolve);
      };
      bridge.addEventListener("abort", onBridge, { once: true });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};
