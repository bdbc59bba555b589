/**
 * A deterministic clock for runner tests: time moves only when the test says
 * so, and `drive()` runs a promise to completion by jumping from timer to
 * timer, so `--stable-for 10m` takes microseconds.
 *
 * @module
 */

import type { Clock } from "./clock.ts";

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
}

/** A clock whose time advances only through `fireNext`/`advance`/`drive`. */
export class FakeClock implements Clock {
  #now = 0;
  #seq = 0;
  #timers: Timer[] = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, resolve };
      this.#timers.push(timer);
      signal?.addEventListener("abort", () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        resolve();
      }, { once: true });
    });
  }

  /** Number of pending timers. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Jumps to the earliest timer and fires every timer due then; false when none is pending. */
  fireNext(): boolean {
    if (this.#timers.length === 0) return false;
    this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const at = this.#timers[0]!.at;
    this.#now = Math.max(this.#now, at);
    const due = this.#timers.filter((t) => t.at <= this.#now);
    this.#timers = this.#timers.filter((t) => t.at > this.#now);
    for (const t of due) t.resolve();
    return true;
  }

  /** Moves time forward by `ms`, firing timers on the way. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    while (true) {
      await settle();
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers[0];
      if (!next || next.at > until) break;
      this.fireNext();
    }
    this.#now = until;
    await settle();
  }
}

/** Lets every queued promise callback (and zero-delay real timer) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
}

/** Runs `promise` to completion, advancing the clock whenever nothing else can happen. */
export async function drive<T>(clock: FakeClock, promise: Promise<T>): Promise<T> {
  let done = false;
  let value: T | undefined;
  let error: unknown;
  let failed = false;
  promise.then((v) => {
    done = true;
    value = v;
  }, (e) => {
    done = true;
    failed = true;
    error = e;
  });
  for (let steps = 0; steps < 1_000_000; steps++) {
    await settle();
    if (done) break;
    if (!clock.fireNext()) {
      throw new Error("Cannot drive the run: no timer pending and the run is not done");
    }
  }
  if (failed) throw error;
  return value as T;
}
