/**
 * Many sleeps on few timers: the CLI clock's scheduler (engine/clock.ts).
 *
 * Pending sleeps sit in a binary heap by deadline; a timer is armed for the
 * earliest one only. Sleeps whose deadlines fall in the same tick wake in one
 * turn of the event loop (ten conditions at one `--interval`: one wake-up a
 * round, not ten). A cancelled sleep leaves at once (lazily in the heap); a
 * timer armed for a deadline that went away fires once for nothing.
 *
 * @module
 */

import { onAbort } from "./abort.ts";

/** Arms a one-shot timer that calls `fire` after `ms`; it cannot be cancelled. */
export type ArmTimer = (ms: number, fire: () => void) => void;

interface Entry {
  readonly at: number;
  readonly slack: number;
  readonly seq: number;
  done: boolean;
  readonly wake: () => void;
}

/** The longest delay one timer takes (2^31-1 ms, about 24.8 days); longer sleeps re-arm. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How late a sleep of at least SLACK_FROM_MS may end (never early): the timer
 * for the earliest such sleep fires SLACK_MS after its deadline and wakes
 * every sleep due by then, so sleeps started a few ms apart (one attempt
 * after another) wake together. Shorter sleeps end on their deadline.
 */
const SLACK_FROM_MS = 100;
const SLACK_MS = 4;

/** A scheduler of sleeps over one kind of uncancellable timer. */
export class SleepScheduler {
  readonly #now: () => number;
  readonly #arm: ArmTimer;
  #heap: Entry[] = [];
  #seq = 0;
  /** Deadlines of the timers armed and not fired yet. */
  #armed: number[] = [];
  /** Cancelled entries still in the heap. */
  #dead = 0;

  constructor(now: () => number, arm: ArmTimer) {
    this.#now = now;
    this.#arm = arm;
  }

  /** Sleeps pending. */
  get pending(): number {
    return this.#heap.length - this.#dead;
  }

  /** Timers armed and not fired yet. */
  get timers(): number {
    return this.#armed.length;
  }

  /** Resolves after `ms` (never rejects), or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const delay = Math.max(0, ms);
      let off: (() => void) | undefined;
      const entry: Entry = {
        at: this.#now() + delay,
        slack: delay >= SLACK_FROM_MS ? SLACK_MS : 0,
        seq: this.#seq++,
        done: false,
        wake: () => {
          off?.();
          resolve();
        },
      };
      if (signal) {
        off = onAbort(signal, () => {
          if (entry.done) return;
          entry.done = true;
          this.#dead++;
          this.#compact();
          resolve();
        });
      }
      this.#push(entry);
      this.#ensureArmed();
    });
  }

  /** Wakes every sleep that is due, then arms a timer for the next one. */
  #tick(): void {
    const now = this.#now();
    while (this.#heap.length > 0 && this.#heap[0]!.at <= now) {
      const e = this.#pop();
      if (e.done) {
        this.#dead--;
        continue;
      }
      e.done = true;
      e.wake();
    }
    this.#ensureArmed();
  }

  #ensureArmed(): void {
    while (this.#heap.length > 0 && this.#heap[0]!.done) {
      this.#pop();
      this.#dead--;
    }
    const next = this.#heap[0];
    if (next === undefined) return;
    const due = next.at + next.slack;
    // A timer that fires by then will see to it.
    if (this.#armed.some((t) => t <= due)) return;
    const now = this.#now();
    const ms = Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(due - now)));
    // What the timer is armed for: that moment, or the farthest one timer reaches.
    const deadline = Math.min(due, now + ms);
    this.#armed.push(deadline);
    this.#arm(ms, () => {
      const i = this.#armed.indexOf(deadline);
      if (i >= 0) this.#armed.splice(i, 1);
      this.#tick();
    });
  }

  /** Drops cancelled entries once they are most of the heap (cancels outnumber wake-ups). */
  #compact(): void {
    if (this.#dead < 64 || this.#dead * 2 < this.#heap.length) return;
    const live = this.#heap.filter((e) => !e.done);
    this.#heap = [];
    this.#dead = 0;
    for (const e of live) this.#push(e);
  }

  #push(e: Entry): void {
    const h = this.#heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(e, h[p]!)) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = e;
  }

  #pop(): Entry {
    const h = this.#heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      // Sift `last` down from the root, moving smaller children up (no swaps).
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const r = l + 1;
        const c = r < h.length && before(h[r]!, h[l]!) ? r : l;
        if (!before(h[c]!, last)) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Calls `fn` after `ms` (on Deno's own timers: no node:timers at start-up, engine/clock.ts). */
export function after(ms: number, fn: () => void): () => void {
  const signal = AbortSignal.timeout(ms);
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}

/**
 * A turn of the event loop: timers, I/O and signals are seen. Long work before the wait takes
 * one at bounded intervals, so a signal is answered (docs/contract.md §3).
 */
export function turn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
