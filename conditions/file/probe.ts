/**
 * file's probe: one `stat` per attempt (and a read for `--contains`),
 * woken by changes to the path.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { formatDuration, formatElapsed } from "../../engine/duration.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { createSearcher, formatSize } from "../_common/bytes.ts";
import {
  type FileStamp,
  mergeIterables,
  sameStamp,
  stampOf,
  statIfExists,
} from "../_common/filestamp.ts";
import { watchPath } from "../_common/watch.ts";
import type { FileOptions } from "./mod.ts";

/** Bytes read at once by `fileContains`. */
const CHUNK = 1 << 20;

/**
 * Whether the file contains `text`, reading it in 1 MiB chunks straight
 * into the byte searcher's memory, with an overlap so a match across chunk
 * borders is found; memory stays bounded. Throws what opening or reading
 * throws.
 */
export async function fileContains(
  path: string,
  text: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const needle = new TextEncoder().encode(text);
  const searcher = createSearcher(needle, CHUNK + needle.length);
  const buf = searcher.buffer;
  using file = await Deno.open(path, { read: true });
  let carry = 0;
  while (true) {
    signal?.throwIfAborted();
    const n = await file.read(buf.subarray(carry, carry + CHUNK));
    if (n === null) return false;
    const filled = carry + n;
    if (searcher.find(0, filled) !== -1) return true;
    carry = Math.min(needle.length - 1, filled);
    buf.copyWithin(0, filled - carry, filled);
  }
}

/**
 * Makes the probe of one file condition. A failing `stat` or read other than
 * a missing path escapes `check`: the engine reports it as a pending attempt
 * (docs/contract.md §8).
 */
export function create(options: FileOptions, env: ProbeEnv): Probe {
  const { path, deleted, nonempty, contains, unchangedForMs } = options;
  const steady = unchangedForMs === undefined
    ? undefined
    : new SteadyTracker(unchangedForMs, env.clock);
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const info = await statIfExists(path);
      if (info === undefined) {
        steady?.forget();
        return deleted
          ? { status: "satisfied", detail: "does not exist" }
          : { status: "pending", error: "does not exist" };
      }
      if (deleted) return { status: "pending", error: "still exists" };
      const what = info.isDirectory ? "directory" : formatSize(info.size);
      const unchanged = steady?.see(stampOf(info));
      if (unchanged !== undefined && !unchanged.held) {
        return { status: "pending", error: `${unchanged.text} (${what})` };
      }
      if (nonempty && info.size === 0) return { status: "pending", error: "exists but is empty" };
      if (contains === undefined) {
        return { status: "satisfied", detail: `${unchanged?.text ?? "exists"} (${what})` };
      }
      if (info.isDirectory) return { status: "pending", error: "is a directory, not a file" };
      const quoted = JSON.stringify(contains);
      if (!(await fileContains(path, contains, signal))) {
        return { status: "pending", error: `does not contain ${quoted} (${what})` };
      }
      const prefix = unchanged === undefined ? "" : `${unchanged.text}, `;
      return { status: "satisfied", detail: `${prefix}contains ${quoted} (${what})` };
    },
    watch: (ctx) => {
      const changes = watchPath(path, ctx, { clock: env.clock });
      if (steady === undefined) return changes;
      // Nothing changes when the file has settled: a wake-up at the moment it has been unchanged
      // long enough makes the attempt that sees it, instead of the next interval's.
      return mergeIterables([changes, steady.wakeups(ctx.signal)]);
    },
  };
}

/** What `SteadyTracker.see` found. */
interface Steadiness {
  /** Unchanged for long enough. */
  readonly held: boolean;
  /** `unchanged for 2s` when held, else `unchanged for 0.4s of 2s`. */
  readonly text: string;
}

/**
 * `--unchanged-for`: how long a file's stamp (size, modification time, inode) has stayed the
 * same, counted from the first attempt that saw it (docs/contract.md §5 file). A file that is
 * not there forgets it.
 */
export class SteadyTracker {
  #stamp: FileStamp | undefined;
  #since = 0;
  readonly #needMs: number;
  readonly #clock: Clock;

  constructor(needMs: number, clock: Clock) {
    this.#needMs = needMs;
    this.#clock = clock;
  }

  /** Records `stamp` as seen now. */
  see(stamp: FileStamp): Steadiness {
    const now = this.#clock.now();
    if (!sameStamp(this.#stamp, stamp)) {
      this.#stamp = stamp;
      this.#since = now;
    }
    const ms = now - this.#since;
    const need = formatDuration(this.#needMs);
    return ms >= this.#needMs
      ? { held: true, text: `unchanged for ${need}` }
      : { held: false, text: `unchanged for ${formatElapsed(ms)} of ${need}` };
  }

  /** Forgets what was seen (the path is gone). */
  forget(): void {
    this.#stamp = undefined;
  }

  /** When the stamp seen will have been unchanged long enough (clock ms), if one was seen. */
  get due(): number | undefined {
    return this.#stamp === undefined ? undefined : this.#since + this.#needMs;
  }

  /**
   * Yields once at each moment a stamp seen becomes old enough (`due`), until `signal` aborts;
   * with nothing seen it looks again every second at most.
   */
  async *wakeups(signal: AbortSignal): AsyncIterable<void> {
    let fired: number | undefined;
    while (!signal.aborted) {
      const due = this.due;
      if (due === undefined || due === fired) {
        await this.#clock.sleep(Math.min(this.#needMs, 1000), signal);
        continue;
      }
      const left = due - this.#clock.now();
      if (left > 0) {
        await this.#clock.sleep(left, signal);
        continue;
      }
      fired = due;
      yield;
    }
  }
}
