/**
 * The exec kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { fileToggle, type KindSuite, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: () => ({ args: ["exec", "--", "sleep", "5"] }),
  live: {
    needs: "a local command",
    async make() {
      const dir = await tempDir("exec");
      const flag = `${dir}/ready`;
      const cmd = ["--", "sh", "-c", 'test -f "$1"', "sh", flag];
      return {
        satisfied: ["exec", ...cmd],
        detail: /exit 0/,
        pending: ["exec", "--", "sh", "-c", "exit 4"],
        pendingError: "exit 4",
        ...fileToggle(flag, () => Deno.writeTextFile(flag, "")),
        downError: "exit 1",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: {
      credential: "exec has no credentials",
      secret:
        "exec takes no secret; the credentials among its arguments are masked in its name (exec_test)",
    },
  },
  usage: [
    [["exec", "--"], "missing command: exec [flags] -- <command> [args...]"],
    [["exec", "--output-contains", "x"], "missing command: exec [flags] -- <command> [args...]"],
    [["exec", "echo"], 'unexpected argument "echo"; the command goes after "--": exec -- echo ...'],
    [
      ["exec", "--exit-code", "256", "--", "true"],
      '--exit-code: expected a whole number from 0 to 255, got "256"',
    ],
    [
      ["exec", "--exit-code", "-1", "--", "true"],
      '--exit-code: expected a whole number from 0 to 255, got "-1"',
    ],
    [
      ["exec", "--exit-code", "x", "--", "true"],
      '--exit-code: expected a whole number from 0 to 255, got "x"',
    ],
    [["exec", "--output-contains"], "--output-contains: missing value TEXT"],
    [["exec", "--cwd", "", "--", "true"], "--cwd: expected a directory, got an empty string"],
    [
      ["exec", "--env", "NOEQUALS", "--", "true"],
      '--env: expected NAME=VALUE with NAME made of letters, digits and _, got "NOEQUALS"',
    ],
    [
      ["exec", "--env", "BAD-NAME=s3cret", "--", "true"],
      '--env: expected NAME=VALUE with NAME made of letters, digits and _, got "BAD-NAME=…"',
    ],
    [
      ["exec", "--env", "=v", "--", "true"],
      '--env: expected NAME=VALUE with NAME made of letters, digits and _, got "=…"',
    ],
    [
      ["exec", "--jsonpath", "status == ok", "--", "true"],
      '--jsonpath: expected a path like $.status, .status or {.status}, got "status"',
    ],
  ],
};
