/**
 * log: a line matching a text or pattern is written to a file (followed like
 * `tail -F`: partial lines, rotation and truncation included).
 *
 * @module
 */

import type { ConditionKind, KindInput, ProbeResult } from "../engine/types.ts";
import { LineMatcher, LogFollower, type StartAt } from "./_logscan.ts";
import { describeError } from "./_net.ts";
import { watchPath } from "./_watch.ts";

/** A text flag's value: non-empty and on one line. */
function lineText(input: KindInput, flag: string, value: string): string {
  if (value === "") input.fail(flag, "expected a text, got an empty string");
  if (/[\r\n]/.test(value)) {
    input.fail(flag, "cannot contain a line break: lines are matched one at a time");
  }
  return value;
}

/** The log kind. */
export const log: ConditionKind = {
  name: "log",
  aliases: [],
  summary: "a line containing a text or matching a pattern is written to a log file",
  description:
    "Follows the file like tail -F. By default only lines written after the start count; --from-start reads the existing content too, --tail N also its last N lines. A line counts once its newline is written (a trailing CR is dropped). A file that does not exist yet is read from its start when it appears. Rotation by rename and create (the rest of the old file is read first) and by truncation (copytruncate) keeps the count. Satisfied when --min-matches lines (default 1) contain --contains and match --matches (both must hold when both are given) and contain no --exclude text; detail is the matched line, the last one with --min-matches.",
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
      description: "a line matching the regular expression (JavaScript syntax) matches",
    },
    {
      name: "exclude",
      type: "string",
      placeholder: "TEXT",
      repeatable: true,
      description: "lines containing TEXT are ignored",
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
    const source = input.string("matches");
    let matches: RegExp | undefined;
    if (source !== undefined) {
      if (source === "") {
        input.fail("matches", "expected a regular expression, got an empty string");
      }
      try {
        matches = new RegExp(source);
      } catch (e) {
        // V8 says "Invalid regular expression: /(/: Unterminated group"; keep the reason.
        const text = describeError(e);
        const why = text.slice(text.lastIndexOf(": ") + 2);
        input.fail(
          "matches",
          `invalid regular expression: ${why.charAt(0).toLowerCase()}${why.slice(1)}`,
        );
      }
    }
    if (contains === undefined && matches === undefined) {
      input.fail(undefined, "expected --contains TEXT or --matches REGEX (or both)");
    }
    const exclude = input.strings("exclude").map((x) => lineText(input, "exclude", x));
    if (input.has("tail") && input.bool("from-start")) {
      input.fail("tail", "cannot be combined with --from-start");
    }
    const startAt: StartAt = input.bool("from-start")
      ? { from: "start" }
      : { from: "tail", lines: input.integer("tail") ?? 0 };
    const required = input.integer("min-matches") ?? 1;

    const matcher = new LineMatcher({ contains, matches, exclude, required });
    const follower = new LogFollower(path, startAt, matcher);
    const satisfied = (): ProbeResult => ({
      status: "satisfied",
      detail: matcher.last,
      summary: required > 1 ? `${required}/${required} matches; last: ${matcher.last}` : undefined,
    });
    // Attempts never overlap: an aborted attempt finishes its read before the next one starts.
    let busy: Promise<unknown> = Promise.resolve();
    const attempt = async (signal: AbortSignal): Promise<ProbeResult> => {
      if (matcher.done) return satisfied();
      let state;
      try {
        state = await follower.poll(signal);
      } catch (e) {
        return { status: "pending", error: describeError(e) };
      }
      if (matcher.done) return satisfied();
      if (state.state === "error") return { status: "pending", error: state.error };
      if (state.state === "missing" && matcher.count === 0) {
        return { status: "pending", error: "does not exist" };
      }
      if (required > 1) return { status: "pending", error: `${matcher.count}/${required} matches` };
      return { status: "pending", error: "no matching line yet" };
    };
    return {
      target: path,
      check({ signal }) {
        const run = busy.then(() => attempt(signal));
        busy = run.catch(() => {});
        return run;
      },
      watch: (ctx) => watchPath(path, ctx, { anyInDirectory: () => follower.lingering }),
      close() {
        follower.close();
      },
    };
  },
};
