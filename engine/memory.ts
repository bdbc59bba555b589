/**
 * The memory cap of isolated kinds' workers (docs/contract.md §2, docs/reliability.md): the cap
 * (`WAITCMD_MEMORY_CAP`) and the watchdog that samples the process's RSS while workers run and,
 * near the cap, has the owners of the workers at work end them (engine/isolate.ts).
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { after } from "./timers.ts";

/** How often the memory watchdog samples the process's RSS while workers run. */
export const WATCHDOG_INTERVAL_MS = 25;
/** The variable that sets the memory cap. */
export const MEMORY_CAP_VARIABLE = "WAITCMD_MEMORY_CAP";
/** The memory cap without the variable: 512 MiB. */
export const DEFAULT_MEMORY_CAP = 512 * 2 ** 20;
/**
 * How far below the cap the watchdog acts: memory a worker allocates between two samples
 * and while it is being terminated stays under the cap (a quarter of it, at most 128 MiB).
 */
export function watchdogThreshold(cap: number): number {
  return cap - Math.min(128 * 2 ** 20, cap / 4);
}
/**
 * Room above what the run holds once its probes are made, when that alone is more than half
 * the cap (a run of a dozen isolated kinds holds about 420 MiB): the watchdog acts past that
 * instead, if it is higher. A run that holds less keeps the whole margin below the cap.
 */
export const MEMORY_ROOM = 128 * 2 ** 20;
/**
 * Room per watcher the workers serve, on top of the limit: what a condition's watcher holds in
 * its worker (its context, its listener, the object a shared watch keeps for it) is made once
 * its watcher starts, after the floor was noted, and is the run's, no driver's. Measured with
 * 54,694 manifest objects: about 0.9 KiB a watcher, and about half as much for a kept object
 * (docs/reliability.md, large manifests); 2 KiB covers both and the collector's slack. A run
 * of ten watchers gets 20 KiB more; one of 50,000, about 98 MiB.
 */
export const WATCHER_ROOM = 2 * 2 ** 10;
/**
 * The memory cap of `WAITCMD_MEMORY_CAP` (`512M`, `1G`, `768` in MiB), in bytes; the
 * default without it. A value that is not a size is a usage error naming the variable.
 */
export function memoryCap(env: Readonly<Record<string, string>>): number {
  const text = env[MEMORY_CAP_VARIABLE];
  if (text === undefined || text === "") return DEFAULT_MEMORY_CAP;
  const m = /^(\d+(?:\.\d+)?)\s*(m|mb|mib|g|gb|gib)?$/i.exec(text.trim());
  const mib = m ? Number(m[1]) * (/^g/i.test(m[2] ?? "") ? 1024 : 1) : NaN;
  if (!(mib >= 64) || !Number.isFinite(mib)) {
    throw new UsageError(
      MEMORY_CAP_VARIABLE,
      `expected a size of at least 64M, such as 512M or 2G, got ${JSON.stringify(text)}`,
    );
  }
  return Math.round(mib * 2 ** 20);
}

/** `512 MiB`, `1.5 GiB`. */
export function formatCap(bytes: number): string {
  const mib = bytes / 2 ** 20;
  return mib >= 1024 ? `${+(mib / 1024).toFixed(2)} GiB` : `${+mib.toFixed(1)} MiB`;
}

/** What the watchdog reads of the process's memory (`Deno.memoryUsage`, or a test's). */
export type MemorySample = () => { readonly rss: number; readonly heapTotal: number };

/**
 * The memory watchdog: while workers run, samples the process's RSS; near the cap, ends the
 * workers that have attempts or watchers in flight. Each watcher the workers serve widens the
 * limit by `WATCHER_ROOM`.
 *
 * What the main thread's own heap grew by since the run's probes were made is not counted:
 * it is the engine's (ten thousand conditions' attempts, whose garbage the runtime collects
 * when it sees fit), no worker's, and stopping workers frees none of it. A manifest of 10,000
 * objects had its worker stopped for it (docs/reliability.md, large manifests).
 */
export class MemoryWatchdog<
  L extends { readonly busy: boolean; readonly watchers: number },
  O extends { killForMemory(live: L, cap: number): void },
> {
  readonly #live = new Map<L, O>();
  #cap = DEFAULT_MEMORY_CAP;
  /** What the process held once the run's probes were made; 0 before. */
  #floor = 0;
  /** The main thread's heap when the floor was noted (or sampling started); undefined before. */
  #heapBase: number | undefined;
  #stop: (() => void) | undefined;

  constructor(readonly sample: MemorySample = () => Deno.memoryUsage()) {}

  /** Sets the cap (from `memoryCap`); the floor is noted again. */
  setCap(bytes: number): void {
    this.#cap = bytes;
    this.#floor = 0;
    this.#heapBase = undefined;
  }

  /** Notes what the process holds now as the run's floor. */
  noteFloor(): void {
    const m = this.sample();
    this.#floor = m.rss;
    this.#heapBase = m.heapTotal;
  }

  /** The process's RSS less what the main thread's heap grew by since its base. */
  #workersRss(): number {
    const m = this.sample();
    this.#heapBase ??= m.heapTotal;
    return m.rss - Math.max(0, m.heapTotal - this.#heapBase);
  }

  /** The RSS past which workers at work are stopped. */
  get limit(): number {
    const threshold = watchdogThreshold(this.#cap);
    // Room above the floor only for a run that holds much of the cap once its probes are made.
    const base = this.#floor > this.#cap / 2
      ? Math.max(threshold, this.#floor + MEMORY_ROOM)
      : threshold;
    let watchers = 0;
    for (const live of this.#live.keys()) watchers += live.watchers;
    return base + watchers * WATCHER_ROOM;
  }

  /** Watches `live` (a worker of `owner`) until `forget`. */
  watch(owner: O, live: L): void {
    this.#live.set(live, owner);
    if (this.#stop === undefined) this.#tick();
  }

  /** Stops watching `live`; with nothing left, stops sampling. */
  forget(_owner: O, live: L): void {
    this.#live.delete(live);
    if (this.#live.size === 0) {
      this.#stop?.();
      this.#stop = undefined;
    }
  }

  #tick(): void {
    this.#stop = after(WATCHDOG_INTERVAL_MS, () => {
      this.#stop = undefined;
      if (this.#live.size === 0) return;
      this.check();
      if (this.#live.size > 0) this.#tick();
    });
  }

  /** One sample: ends the busy workers once the memory is past the limit. */
  check(): void {
    const rss = this.#workersRss();
    if (rss > this.limit) {
      // Only a worker at work can be growing with what a server sends; one that waits (or
      // loads its kind) holds what it holds, and stopping it would free nothing that grows.
      for (const [live, owner] of this.#live) {
        if (live.busy) owner.killForMemory(live, this.#cap);
      }
    }
  }
}
