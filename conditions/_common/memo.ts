/**
 * One value made once and shared by every attempt of a condition (a client,
 * a loaded config), forgotten when making it failed so the next attempt
 * tries again.
 *
 * @module
 */

import { onAbort } from "../../engine/abort.ts";

/** A lazily made value; see `memoize`. */
export interface Memo<T> {
  /**
   * The value, made on first use. A waiting caller stops waiting (rejects
   * with the signal's reason) when `signal` aborts; the making goes on for
   * the next caller.
   */
  get(signal?: AbortSignal): Promise<T>;
  /** Forgets the value (or the making under way): the next `get` makes it again. */
  reset(): void;
  /** The value if it was made, else undefined (for `close`). */
  peek(): Promise<T> | undefined;
}

/** Memoises `make`; a rejected making is forgotten. */
export function memoize<T>(make: () => Promise<T>): Memo<T> {
  let current: Promise<T> | undefined;
  return {
    get(signal) {
      if (!current) {
        const p = make();
        current = p;
        p.catch(() => {
          if (current === p) current = undefined;
        });
      }
      const p = current;
      if (!signal) return p;
      return new Promise<T>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        // onAbort, not an event listener: a signal keeps an event target's bookkeeping (about
        // 230 bytes) once it had one, and every object of a manifest asks with a signal of its
        // own (docs/reliability.md, large manifests).
        const off = onAbort(signal, () => reject(signal.reason));
        p.then((value) => {
          off();
          resolve(value);
        }, (e) => {
          off();
          reject(e);
        });
      });
    },
    reset() {
      current = undefined;
    },
    peek: () => current,
  };
}
