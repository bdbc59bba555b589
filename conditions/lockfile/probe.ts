/**
 * lockfile's probe: one `lstat` per attempt, woken by changes to the path
 * (docs/contract.md §5 lockfile, §10).
 *
 * @module
 */

import { formatDuration } from "../../engine/duration.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { watchPath } from "../_common/watch.ts";
import type { LockfileOptions } from "./mod.ts";

/**
 * How old a file modified at `mtime` is. A file's mtime is wall-clock time,
 * so this compares it with the wall clock (the engine's clock is monotonic);
 * a modification time in the future counts as age 0.
 */
export function ageOf(mtime: Date | null, now: number): number {
  return mtime === null ? 0 : Math.max(0, now - mtime.getTime());
}

/** Makes the probe of one lockfile condition. */
export function create(options: LockfileOptions, env: ProbeEnv): Probe {
  const { path, want, olderThanMs } = options;
  return {
    check: async (): Promise<ProbeResult> => {
      let info: Deno.FileInfo;
      try {
        info = await Deno.lstat(path);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
        return want === "absent"
          ? { status: "satisfied", detail: "no lock file" }
          : { status: "pending", error: "does not exist" };
      }
      const age = ageOf(info.mtime, Date.now());
      const shown = age < 1000 ? "under 1s" : formatDuration(Math.floor(age / 1000) * 1000);
      if (want === "absent") {
        return { status: "pending", error: `lock file exists (modified ${shown} ago)` };
      }
      if (olderThanMs !== undefined && age < olderThanMs) {
        return {
          status: "pending",
          error: `lock file modified ${shown} ago, not yet ${formatDuration(olderThanMs)}`,
        };
      }
      const stale = olderThanMs !== undefined ? ", stale" : "";
      return { status: "satisfied", detail: `lock file exists (modified ${shown} ago${stale})` };
    },
    watch: (ctx) => watchPath(path, ctx, { clock: env.clock }),
  };
}
