/**
 * log: a line matching a text or pattern is written to a file (followed like
 * `tail -F`: partial lines, rotation and truncation included).
 *
 * @module
 */

import { namedGroupsOf } from "../_common/captures.ts";
import { defineKind, type KindInput } from "../../engine/types.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "../_common/jsonpath.ts";
import { checkRegexSyntax, parseRegex, validateRegex } from "../_common/textmatch.ts";

/** Where reading starts in content that exists at the first attempt. */
export type StartAt =
  /** Everything (`--from-start`). */
  | { readonly from: "start" }
  /**
   * The last `lines` complete lines (`--tail N`; 0 = only what is added, the default) of the
   * content there was when waitcmd read its command line (`seen`; docs/contract.md §5 log):
   * what is written between then and the first attempt is new too. `seen` null: the file did
   * not exist then, so all of it is new; absent: the content at the first attempt counts.
   */
  | { readonly from: "tail"; readonly lines: number; readonly seen?: FileMark | null };

/** A file's identity and size at one moment. */
export interface FileMark {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
}

/** `path`'s identity and size now; null when there is no such regular file. */
export function markOf(path: string): FileMark | null {
  try {
    const info = Deno.statSync(path);
    if (!info.isFile) return null;
    return { dev: info.dev, ino: info.ino ?? 0, size: info.size };
  } catch {
    return null;
  }
}

/** What a log condition needs. */
export interface LogOptions {
  /** The followed file. */
  readonly path: string;
  /** A line must contain this text (`--contains`). */
  readonly contains?: string;
  /** A line must match this regular expression (`--matches`); checked valid for JavaScript and RE2. */
  readonly matches?: string;
  /** A line must be a JSON object satisfying each of these (`--jsonpath`, http's syntax). */
  readonly jsonpaths: readonly JsonPathExpr[];
  /** Lines containing any of these are ignored (`--exclude`). */
  readonly exclude: readonly string[];
  /** Lines matching any of these expressions are ignored (`--exclude-matches`). */
  readonly excludeMatches: readonly string[];
  /** Where reading starts in the content that exists at the first attempt. */
  readonly startAt: StartAt;
  /** Matching lines needed (`--min-matches`, at least 1). */
  readonly required: number;
}

/** A text flag's value: non-empty and on one line. */
function lineText(input: KindInput, flag: string, value: string): string {
  if (value === "") input.fail(flag, "expected a text, got an empty string");
  if (/[\r\n]/.test(value)) {
    input.fail(flag, "cannot contain a line break: lines are matched one at a time");
  }
  return value;
}

/** The log kind. */
export const log = defineKind<LogOptions>({
  name: "log",
  aliases: [],
  summary: "a line containing a text or matching a pattern is written to a log file",
  description:
    "Follows the file like tail -F. By default only lines written after the start count; --from-start reads the existing content too, --tail N also its last N lines. A line counts once its newline is written (a trailing CR is dropped). A file that does not exist yet is read from its start when it appears. Rotation keeps the count: by rename and create the rest of the old file is read first, and files rotated in and away between two looks are read from beside the log; by copytruncate what only the copy holds is read from the copy. Lines are lost only when a rotated file is compressed or removed before waitcmd looks, or (copytruncate's own gap) written between the copy and the truncation. Satisfied when --min-matches lines (default 1) contain --contains, match --matches and, as JSON objects, satisfy --jsonpath (every one given must hold) and contain no --exclude text nor a match of an --exclude-matches expression; detail is the matched line, the last one with --min-matches.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path of the log file",
    complete: "file",
  },
  flags: [
    {
      name: "contains",
      type: "string",
      placeholder: "TEXT",
      description: "a line containing TEXT matches",
    },
    {
      name: "matches",
      type: "string",
      placeholder: "REGEX",
      description:
        "a line matching the regular expression matches (JavaScript syntax without lookaround or backreferences, run in linear time)",
    },
    {
      name: "jsonpath",
      type: "string",
      placeholder: "EXPR",
      repeatable: true,
      description:
        "a line that is a JSON object satisfying an expression like '$.level == \"info\"' matches (http's syntax); other lines never do",
    },
    {
      name: "exclude",
      type: "string",
      placeholder: "TEXT",
      repeatable: true,
      description: "lines containing TEXT are ignored",
    },
    {
      name: "exclude-matches",
      type: "string",
      placeholder: "REGEX",
      repeatable: true,
      description: "lines matching the regular expression are ignored (the syntax of --matches)",
    },
    {
      name: "from-start",
      type: "boolean",
      description: "scan the existing content too, not only lines added after the start",
    },
    {
      name: "tail",
      type: "integer",
      min: 0,
      placeholder: "N",
      description: "scan the last N lines of the existing content too, then follow",
    },
    {
      name: "min-matches",
      type: "integer",
      min: 1,
      placeholder: "N",
      description: "N matching lines are needed (default 1)",
    },
  ],
  examples: [
    {
      args: "log /var/log/app.log --contains 'Server started'",
      description: "wait until the app logs that it started",
    },
    {
      args: "log app.log --from-start --matches 'listening on .*:\\d+'",
      description: "also accept a line written before waitcmd started",
    },
    {
      args: "log worker.log --contains 'job done' --exclude dry-run --min-matches 3",
      description: "wait for three finished jobs, not counting dry runs",
    },
    {
      args: "log app.jsonl --jsonpath '$.msg == \"server started\" && $.port > 0'",
      description: "wait for a structured (JSON lines) log entry",
    },
    {
      args: "http http://localhost:8080/health -- guard log app.log --contains FATAL",
      description: "wait for the health check, but stop at once (exit 3) if FATAL is logged",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    const contains = input.has("contains")
      ? lineText(input, "contains", input.string("contains")!)
      : undefined;
    const matches = parseRegex(input);
    const jsonpaths = input.strings("jsonpath").map((text) => {
      try {
        return parseJsonPathExpr(text);
      } catch (e) {
        return input.fail("jsonpath", (e as Error).message);
      }
    });
    if (contains === undefined && matches === undefined && jsonpaths.length === 0) {
      input.fail(undefined, "expected --contains TEXT, --matches REGEX or --jsonpath EXPR");
    }
    const exclude = input.strings("exclude").map((x) => lineText(input, "exclude", x));
    const excludeMatches = input.strings("exclude-matches").map((x) => {
      if (x === "") input.fail("exclude-matches", "expected a regular expression, got nothing");
      checkRegexSyntax(input, "exclude-matches", x);
      return x;
    });
    if (input.has("tail") && input.bool("from-start")) {
      input.fail("tail", "cannot be combined with --from-start");
    }
    const startAt: StartAt = input.bool("from-start")
      ? { from: "start" }
      // The baseline is taken here, as early as the process can (docs/contract.md §5 log).
      : { from: "tail", lines: input.integer("tail") ?? 0, seen: markOf(path) };
    const required = input.integer("min-matches") ?? 1;
    return {
      target: path,
      options: { path, contains, matches, jsonpaths, exclude, excludeMatches, startAt, required },
      captures: namedGroupsOf(matches),
    };
  },
  // JavaScript's syntax was checked by parse; RE2 runs it (docs/contract.md §9).
  async validate(options, fail) {
    await validateRegex(options.matches, fail);
    for (const x of options.excludeMatches) await validateRegex(x, fail, "", "exclude-matches");
    if (options.jsonpaths.length === 0) return;
    const { validateJsonPaths } = await import("../_common/jsonpath_lib.ts");
    await validateJsonPaths(options.jsonpaths, fail);
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
