/**
 * glob: the number of paths matching a pattern is within bounds, or zero.
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a glob condition needs. */
export interface GlobOptions {
  /** The bash-style pattern (conditions/_common/glob.ts). */
  readonly pattern: string;
  /** Nothing may match (`--absent`; excludes the counts). */
  readonly absent: boolean;
  /** Fewest matches (`--min-count`; 1 by default, 0 when only `--max-count` is given). */
  readonly min: number;
  /** Most matches (`--max-count`), if bounded. */
  readonly max?: number;
}

/** The glob kind. */
export const glob = defineKind<GlobOptions>({
  name: "glob",
  aliases: [],
  summary: "files matching a pattern appear (or disappear)",
  description:
    "Bash-style patterns with globstar: *, ?, [a-z], {a,b} and ** for any depth; wildcards do not match a leading dot. Quote the pattern so the shell does not expand it. Satisfied when the number of matches is at least --min-count (default 1; 0 when only --max-count is given) and at most --max-count; with --absent, when nothing matches.",
  target: {
    shape: "required",
    placeholder: "PATTERN",
    description: "glob pattern, quoted",
    complete: "file",
  },
  flags: [
    {
      name: "min-count",
      type: "integer",
      min: 0,
      placeholder: "N",
      description: "at least N matches (default 1)",
    },
    {
      name: "max-count",
      type: "integer",
      min: 0,
      placeholder: "N",
      description: "at most N matches",
    },
    { name: "absent", type: "boolean", description: "no path matches" },
  ],
  examples: [
    { args: "glob '/var/spool/out/*.csv' --min-count 3", description: "wait for three CSV files" },
    {
      args: "glob 'build/**/*.{js,map}'",
      description: "wait until the build wrote any bundle or source map",
    },
    {
      args: "glob '/tmp/locks/*.lock' --absent",
      description: "wait until every lock file is gone",
    },
  ],
  parse(input) {
    const pattern = input.target ?? "";
    if (pattern === "") input.fail(undefined, "expected a pattern, got an empty string");
    const absent = input.bool("absent");
    if (absent && (input.has("min-count") || input.has("max-count"))) {
      input.fail(
        "absent",
        `cannot be combined with --${input.has("min-count") ? "min-count" : "max-count"}`,
      );
    }
    const max = input.integer("max-count");
    const min = input.integer("min-count") ?? (max !== undefined ? 0 : 1);
    if (max !== undefined && min > max) {
      input.fail("min-count", `${min} is more than --max-count ${max}`);
    }
    return { target: pattern, options: { pattern, absent, min, max } };
  },
  async validate(options, fail) {
    const { expandBraces } = await import("../_common/glob.ts");
    try {
      expandBraces(options.pattern);
    } catch (e) {
      fail(undefined, `the pattern's ${e instanceof Error ? e.message : e}`);
    }
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
