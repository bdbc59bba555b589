/**
 * The log kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { type KindSuite, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["log", `${d.dir}/none.log`, "--contains", "x"] }),
  live: {
    needs: "a local log file",
    async make() {
      const dir = await tempDir("log");
      const log = `${dir}/app.log`;
      await Deno.writeTextFile(log, "starting\n");
      return {
        satisfied: ["log", log, "--contains", "ready", "--from-start"],
        detail: /.*/,
        pending: ["log", log, "--contains", "never", "--from-start"],
        pendingError: "no matching line yet",
        up: async () => {
          if (!(await Deno.readTextFile(log)).includes("ready")) {
            await Deno.writeTextFile(log, "service ready\n", { append: true });
          }
        },
        downError: "no matching line yet",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: {
      credential: "log has no credentials",
      secret: "log takes no secret",
      restart: "a log holds once a line came; rotation and truncation are in log_test",
    },
  },
  usage: [
    [["log", "a.log"], "expected --contains TEXT, --matches REGEX or --jsonpath EXPR"],
    [
      ["log", "a.log", "--exclude", "x"],
      "expected --contains TEXT, --matches REGEX or --jsonpath EXPR",
    ],
    [["log", "", "--contains", "x"], "expected a path, got an empty string"],
    [["log", "a.log", "--contains", ""], "--contains: expected a text, got an empty string"],
    [
      ["log", "a.log", "--contains", "a\nb"],
      "--contains: cannot contain a line break: lines are matched one at a time",
    ],
    [
      ["log", "a.log", "--contains", "a", "--exclude", "b\r\n"],
      "--exclude: cannot contain a line break: lines are matched one at a time",
    ],
    [["log", "a.log", "--matches", ""], "--matches: expected a regular expression, got nothing"],
    [
      ["log", "a.log", "--contains", "x", "--exclude-matches", ""],
      "--exclude-matches: expected a regular expression, got nothing",
    ],
    [
      ["log", "a.log", "--contains", "x", "--exclude-matches", "(a"],
      "--exclude-matches: invalid regular expression /(a/: unterminated group",
    ],
    [
      ["log", "a.log", "--contains", "x", "--exclude-matches", "(?<=a)b"],
      "--exclude-matches: not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): invalid named capture: (?<=a)b",
    ],
    [
      ["log", "a.log", "--jsonpath", "$.a =="],
      "--jsonpath: expected a value after $.a ==",
    ],
    [
      ["log", "a.log", "--jsonpath", " "],
      '--jsonpath: expected an expression like $.status == "ok", got nothing',
    ],
    [
      ["log", "a.log", "--matches", "(a"],
      "--matches: invalid regular expression /(a/: unterminated group",
    ],
    [
      ["log", "a.log", "--contains", "x", "--from-start", "--tail", "5"],
      "--tail: cannot be combined with --from-start",
    ],
    [
      ["log", "a.log", "--contains", "x", "--tail", "-1"],
      '--tail: expected a whole number of at least 0, got "-1"',
    ],
    [
      ["log", "a.log", "--contains", "x", "--min-matches", "0"],
      '--min-matches: expected a whole number of at least 1, got "0"',
    ],
  ],
};
