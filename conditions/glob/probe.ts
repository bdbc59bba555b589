/**
 * glob's probe: one walk of the pattern per attempt, woken by changes in
 * the directories the pattern covers.
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { glob as globPaths } from "../_common/glob.ts";
import { watchGlob } from "../_common/watch.ts";
import type { GlobOptions } from "./mod.ts";

/** Matched paths named in a detail or error; the rest are counted. */
const SHOWN = 5;

function listed(paths: readonly string[]): string {
  const head = paths.slice(0, SHOWN).join(", ");
  return paths.length > SHOWN ? `${head}, ... (+${paths.length - SHOWN} more)` : head;
}

/** Makes the probe of one glob condition. */
export function create(options: GlobOptions, env: ProbeEnv): Probe {
  const { pattern, absent, min, max } = options;
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      // A directory that cannot be read hides what would make --absent or --max false: an
      // error (pending) then, as lockfile and file --deleted (docs/contract.md §5 glob).
      const paths = await globPaths(pattern, { signal, strict: absent || max !== undefined });
      const n = paths.length;
      const count = `${n} match${n === 1 ? "" : "es"}`;
      if (absent) {
        return n === 0
          ? { status: "satisfied", detail: "no matches" }
          : { status: "pending", error: `${count}: ${listed(paths)}` };
      }
      if (n < min) {
        return {
          status: "pending",
          error: n === 0 ? "no matches" : `${count}, need at least ${min}`,
        };
      }
      if (max !== undefined && n > max) {
        return { status: "pending", error: `${count}, need at most ${max}` };
      }
      return {
        status: "satisfied",
        detail: n === 0 ? "no matches" : `${count}: ${listed(paths)}`,
      };
    },
    watch: (ctx) => watchGlob(pattern, ctx, { clock: env.clock }),
  };
}
