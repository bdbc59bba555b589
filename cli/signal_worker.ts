/**
 * The worker of cli/off_thread_signals.ts: it listens for the signals it is sent, and writes the
 * first one heard into the shared memory the main thread reads on a timer.
 * Message in: an {@link EarJob}; out: nothing.
 *
 * @module
 */

import type { EarJob } from "./off_thread_signals.ts";

const scope = self as unknown as { onmessage: ((e: MessageEvent<EarJob>) => void) | null };
scope.onmessage = (e) => {
  const { heard, signals } = e.data;
  signals.forEach((sig, i) => {
    // The first signal stands (as the main thread's first abort does); later ones are left.
    Deno.addSignalListener(sig, () => Atomics.compareExchange(heard, 0, 0, i + 1));
  });
  Atomics.store(heard, 1, 1);
};
