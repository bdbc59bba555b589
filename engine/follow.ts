/**
 * Following a probe's watcher (docs/contract.md §10), whichever form the probe gives it in:
 * `listen` (pushed changes) or `watch` (an async iterable, iterated here). The runner and the
 * workers of isolated kinds follow watchers through this one function.
 *
 * @module
 */

import type { Probe, WatchContext } from "./types.ts";

/**
 * Calls `onChange` for each change `probe`'s watcher reports, none after `ctx.signal` aborted.
 * Returns what settles when the watcher ends (rejected when it failed), or undefined when the
 * probe has no watcher.
 */
export function follow(
  probe: Probe,
  ctx: WatchContext,
  onChange: () => void,
): Promise<void> | undefined {
  try {
    if (probe.listen !== undefined) return probe.listen(ctx, onChange);
    if (probe.watch !== undefined) return iterate(probe.watch(ctx), ctx.signal, onChange);
  } catch (e) {
    return Promise.reject(e);
  }
  return undefined;
}

/**
 * Calls `onChange` for each value of `changes` until it ends or `signal` aborts: a watcher
 * written as an async iterable, followed as a listener.
 */
export async function iterate(
  changes: AsyncIterable<unknown>,
  signal: AbortSignal,
  onChange: () => void,
): Promise<void> {
  for await (const _ of changes) {
    if (signal.aborted) break;
    onChange();
  }
}
