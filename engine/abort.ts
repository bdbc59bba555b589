/**
 * Listening for an abort without paying for an event listener each time.
 *
 * Every attempt and every pause between attempts waits on an abort signal.
 * Deno's `addEventListener`/`removeEventListener` run several layers of
 * JavaScript (option conversion, listener lists) and an `abort()` with a
 * listener dispatches a whole event; at a slow `--interval` that code runs
 * cold, and it was a large share of an attempt's cost (docs/performance.md,
 * "Cost per condition"). Here each signal gets ONE real listener, the first
 * time it is listened to; callbacks are kept in a `Set`, added and removed
 * at the cost of a `Set` operation.
 *
 * @module
 */

/** The callbacks of each signal that has been listened to and has not aborted yet. */
const hubs = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `fn` once when `signal` aborts (at once, synchronously, when it
 * already has). Returns the function that removes `fn` again; calling it
 * after the abort does nothing.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return noop;
  }
  let hub = hubs.get(signal);
  if (hub === undefined) {
    const callbacks = new Set<() => void>();
    hubs.set(signal, callbacks);
    signal.addEventListener("abort", () => {
      hubs.delete(signal);
      for (const f of callbacks) f();
      callbacks.clear();
    }, { once: true });
    hub = callbacks;
  }
  // A wrapper of its own, so that the same `fn` registered twice is removed once per remover.
  const entry = () => fn();
  hub.add(entry);
  const callbacks = hub;
  return () => {
    callbacks.delete(entry);
  };
}

function noop(): void {}
