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
 * at the cost of a `Set` operation. The signal of an `Aborter` gets no
 * listener at all: its own `abort()` calls the callbacks. A signal with one
 * callback keeps it without a `Set` (about 150 bytes less: a manifest's
 * every object has a few such signals; docs/reliability.md, large manifests).
 *
 * @module
 */

/**
 * What a signal carries for `onAbort`, as properties of the signal itself (state in the
 * object, no module-wide map): its callbacks, set at its first `onAbort`, and whether its
 * controller is an `Aborter`, whose `abort()` calls them without an event.
 */
const CALLBACKS = Symbol("waitcmd.onAbort");
const DIRECT = Symbol("waitcmd.direct");

type MarkedSignal = AbortSignal & {
  /** None yet (undefined), one, or several; `noop` once the only one was removed. */
  [CALLBACKS]?: Set<() => void> | (() => void) | undefined;
  [DIRECT]?: true;
};

/** Calls and forgets the callbacks of `signal`, which has just aborted. */
function fire(signal: MarkedSignal): void {
  const callbacks = signal[CALLBACKS];
  if (callbacks === undefined) return;
  signal[CALLBACKS] = undefined;
  if (typeof callbacks === "function") return callbacks();
  for (const f of callbacks) f();
  callbacks.clear();
}

/**
 * An AbortController whose `onAbort` callbacks are called by its own
 * `abort()`, so its signal carries no event listener of ours: a signal's
 * first listener costs an EventTarget's bookkeeping, about 0.7 KB held while
 * it waits (docs/performance.md, "Cost per condition"). Listeners that
 * others add to the signal work as usual.
 */
export class Aborter extends AbortController {
  /**
   * Its owner's own callback, called first by `abort()`: one slot, without
   * `onAbort`'s bookkeeping, for the code that made the controller (the
   * runner's attempt, which every attempt of every condition pays for).
   */
  whenAborted: (() => void) | undefined = undefined;

  constructor() {
    super();
    (this.signal as MarkedSignal)[DIRECT] = true;
  }

  override abort(reason?: unknown): void {
    if (this.signal.aborted) return;
    super.abort(reason);
    this.whenAborted?.();
    fire(this.signal);
  }
}

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
  const s = signal as MarkedSignal;
  const callbacks = s[CALLBACKS];
  if (callbacks === undefined && !s[DIRECT]) {
    signal.addEventListener("abort", () => fire(s), { once: true });
  }
  // A wrapper of its own when `fn` is there already, so that each remover removes one.
  const there = callbacks === fn || (callbacks instanceof Set && callbacks.has(fn));
  const entry = there ? () => fn() : fn;
  if (callbacks === undefined || callbacks === noop) s[CALLBACKS] = entry;
  else if (typeof callbacks === "function") s[CALLBACKS] = new Set([callbacks, entry]);
  else callbacks.add(entry);
  return () => {
    const now = s[CALLBACKS];
    if (now === entry) s[CALLBACKS] = noop;
    else if (now instanceof Set) now.delete(entry);
  };
}

/**
 * Removes a registration of `fn` from `signal`'s callbacks, as the remover `onAbort` returns
 * would: for callers that keep `fn` anyway, so that no remover is made per registration (a
 * manifest's every object has a few; docs/reliability.md, large manifests). Does nothing once
 * the signal aborted or when `fn` is not there. A registration is removed either way, not both.
 */
export function offAbort(signal: AbortSignal, fn: () => void): void {
  const s = signal as MarkedSignal;
  const callbacks = s[CALLBACKS];
  if (callbacks === fn) s[CALLBACKS] = noop;
  else if (callbacks instanceof Set) callbacks.delete(fn);
}

function noop(): void {}
