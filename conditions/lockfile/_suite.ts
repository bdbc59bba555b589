/**
 * The lockfile kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { fileToggle, type KindSuite, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["lockfile", `${d.dir}/none.lock`, "--present"] }),
  live: {
    needs: "a local lock file",
    async make() {
      const dir = await tempDir("lockfile");
      const lock = `${dir}/app.lock`;
      return {
        satisfied: ["lockfile", lock, "--present"],
        detail: /lock file exists \(modified .*\)/,
        pending: ["lockfile", `${dir}/other.lock`, "--present"],
        pendingError: "does not exist",
        ...fileToggle(lock, () => Deno.writeTextFile(lock, "")),
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "lockfile has no credentials", secret: "lockfile takes no secret" },
  },
  usage: [
    [
      ["lockfile", "x.lock", "--absent", "--present"],
      "--present: cannot be combined with --absent",
    ],
    [
      ["lockfile", "a.lock", "--absent", "--present"],
      "--present: cannot be combined with --absent",
    ],
    [
      ["lockfile", "x.lock", "--older-than", "5m"],
      "--older-than: needs --present (a stale lock is a present one)",
    ],
    [
      ["lockfile", "a.lock", "--older-than", "5m"],
      "--older-than: needs --present (a stale lock is a present one)",
    ],
    [
      ["lockfile", "x.lock", "--absent", "--older-than", "5m"],
      "--older-than: needs --present (a stale lock is a present one)",
    ],
    [
      ["lockfile", "x.lock", "--present", "--older-than", "0"],
      "--older-than: must be greater than 0",
    ],
    [
      ["lockfile", "a.lock", "--present", "--older-than", "soon"],
      '--older-than: expected a duration like 30s, 2m or 1h30m, got "soon"',
    ],
    [["lockfile"], "missing target PATH"],
  ],
};
