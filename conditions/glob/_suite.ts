/**
 * The glob kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { fileToggle, type KindSuite, tempDir, writeWhole } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["glob", `${d.dir}/*.none`] }),
  live: {
    needs: "a local directory",
    async make() {
      const dir = await tempDir("glob");
      await Deno.mkdir(`${dir}/out/deep`, { recursive: true });
      return {
        satisfied: ["glob", `${dir}/out/**/*.ready`],
        detail: /1 match: .*\/out\/deep\/app\.ready/,
        pending: ["glob", `${dir}/out/**/*.never`],
        pendingError: "no matches",
        ...fileToggle(
          `${dir}/out/deep/app.ready`,
          () => writeWhole(`${dir}/out/deep/app.ready`, ""),
        ),
        downError: "no matches",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "glob has no credentials", secret: "glob takes no secret" },
  },
  usage: [
    [["glob", ""], "expected a pattern, got an empty string"],
    [["glob"], "missing target PATTERN"],
    [["glob", "{a,b}".repeat(11)], "the pattern's {a,b} groups expand to more than 1024 patterns"],
    [
      ["glob", "*.x", "--absent", "--min-count", "1"],
      "--absent: cannot be combined with --min-count",
    ],
    [
      ["glob", "*.x", "--absent", "--max-count", "0"],
      "--absent: cannot be combined with --max-count",
    ],
    [
      ["glob", "*.x", "--absent", "--max-count", "1"],
      "--absent: cannot be combined with --max-count",
    ],
    [
      ["glob", "*.x", "--min-count", "5", "--max-count", "2"],
      "--min-count: 5 is more than --max-count 2",
    ],
    [
      ["glob", "*.x", "--min-count", "-1"],
      '--min-count: expected a whole number of at least 0, got "-1"',
    ],
    [
      ["glob", "*.x", "--max-count", "many"],
      '--max-count: expected a whole number of at least 0, got "many"',
    ],
    [
      ["glob", "*.x", "--min-count", "x"],
      '--min-count: expected a whole number of at least 0, got "x"',
    ],
  ],
};
