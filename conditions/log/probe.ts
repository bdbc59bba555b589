/**
 * log's probe: one follower per condition, kept across attempts (its read
 * offset, partial line and match count), woken by changes to the file.
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { compileRegex } from "../_common/regex.ts";
import { watchPath } from "../_common/watch.ts";
import { LogFollower } from "./follow.ts";
import { LineMatcher } from "./match.ts";
import type { LogOptions } from "./mod.ts";

/** Makes the probe of one log condition. */
export function create(options: LogOptions, env: ProbeEnv): Probe {
  const { path, required } = options;
  const matcher = new LineMatcher({
    contains: options.contains,
    matches: options.matches === undefined ? undefined : compileRegex(options.matches),
    jsonpaths: options.jsonpaths,
    exclude: options.exclude,
    excludeMatches: options.excludeMatches.map((x) => compileRegex(x)),
    required,
  });
  const follower = new LogFollower(path, options.startAt, matcher, env.clock);
  const satisfied = (): ProbeResult => ({
    status: "satisfied",
    detail: matcher.last,
    summary: required > 1 ? `${required}/${required} matches; last: ${matcher.last}` : undefined,
    captures: matcher.captures,
  });
  // A read error escapes `check`: the engine reports it as a pending attempt (docs/contract.md §8).
  const attempt = async (signal: AbortSignal): Promise<ProbeResult> => {
    if (matcher.done) return satisfied();
    const state = await follower.poll(signal);
    if (matcher.done) return satisfied();
    if (state.state === "error") return { status: "pending", error: state.error };
    if (state.state === "missing" && matcher.count === 0) {
      return { status: "pending", error: "does not exist" };
    }
    if (required > 1) return { status: "pending", error: `${matcher.count}/${required} matches` };
    return { status: "pending", error: "no matching line yet" };
  };
  // Attempts never overlap: an aborted attempt finishes its read before the next one starts.
  let busy: Promise<unknown> = Promise.resolve();
  return {
    check({ signal }) {
      const run = busy.then(() => attempt(signal));
      busy = run.catch(() => {});
      return run;
    },
    // The end of the file (or its absence) is noted before `--start` starts anything.
    baseline(signal) {
      const run = busy.then(() => follower.poll(signal));
      busy = run.catch(() => {});
      return busy.then(() => {});
    },
    watch: (ctx) =>
      watchPath(path, ctx, { anyInDirectory: () => follower.lingering, clock: env.clock }),
    close() {
      follower.close();
    },
  };
}
