/**
 * How many attempts of a run are under way at once (docs/contract.md §4, attempts under way):
 * at most a fixed number; an attempt due past that waits until one ends, first come first
 * served. A run of tens of thousands of conditions otherwise holds a socket per condition at
 * once, which the process's end then waits for the kernel to close (docs/reliability.md).
 *
 * @module
 */

/** The most attempts of one run under way at once. */
export const MAX_UNDER_WAY = 1024;

/** The slots of a run's attempts. */
export class AttemptSlots {
  #free: number;
  /** Waiting takers, in order; those before `#head` were served. */
  #waiting: ((got: boolean) => void)[] = [];
  #head = 0;
  #closed = false;

  constructor(readonly limit: number = MAX_UNDER_WAY) {
    this.#free = limit;
  }

  /** Takers waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  /**
   * A slot: `true` at once when one is free, else a promise of one; `false` once the slots are
   * closed (the run ended). Each slot taken is given back with {@link give}.
   */
  take(): true | Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (this.#free > 0) {
      this.#free--;
      return true;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Gives a slot back: to the first taker waiting, or to the free ones. */
  give(): void {
    if (this.#head < this.#waiting.length) {
      const next = this.#waiting[this.#head++]!;
      // Served takers are dropped once they are half the list: a copy costs no more than the
      // takers served since the last one.
      if (this.#head * 2 >= this.#waiting.length) {
        this.#waiting = this.#waiting.slice(this.#head);
        this.#head = 0;
      }
      next(true);
      return;
    }
    this.#free++;
  }

  /**
   * The run ended: a later taker gets `false`. The takers waiting are let go, never answered,
   * as a condition's pause is not woken at the end (docs/contract.md §4, end of run): tens of
   * thousands of them would each take a step before the verdict is written.
   */
  close(): void {
    this.#closed = true;
    this.#waiting = [];
    this.#head = 0;
  }
}
