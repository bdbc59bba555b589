/**
 * The permission kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { type KindSuite, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["permission", `${d.dir}/none`, "--mode", "0644"] }),
  live: {
    needs: "a local file",
    async make() {
      const dir = await tempDir("permission");
      const f = `${dir}/app.key`;
      return {
        satisfied: ["permission", f, "--mode", "0640"],
        detail: /file 0640, owner \d+, group \d+/,
        pending: ["permission", f, "--mode", "0600"],
        pendingError: "mode is 0640, not 0600",
        up: async () => {
          await Deno.writeTextFile(f, "key\n");
          await Deno.chmod(f, 0o640);
        },
        down: () => Deno.chmod(f, 0o644),
        downError: /does not exist|mode is 0644, not 0640/,
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "permission has no credentials", secret: "permission takes no secret" },
  },
  usage: [
    [
      ["permission", "/x"],
      "permission needs at least one of --mode, --mode-includes, --owner, --group, --type",
    ],
    [
      ["permission", "/x", "--mode", "0999"],
      '--mode: expected an octal mode like 0644, got "0999"',
    ],
    [
      ["perm", "/x", "--mode", "rw-r--r--"],
      '--mode: expected an octal mode like 0644, got "rw-r--r--"',
    ],
    [
      ["permission", "/x", "--mode", "644", "--mode-includes", "600"],
      "--mode-includes: cannot be combined with --mode",
    ],
    [
      ["permission", "/x", "--owner", ""],
      "--owner: expected a name or a numeric id, got an empty string",
    ],
    [["permission", "/x", "--group", "a:b"], '--group: expected a name or a numeric id, got "a:b"'],
    [
      ["perm", "/x", "--type", "pipe"],
      '--type: expected one of file, dir, symlink, socket, fifo, got "pipe"',
    ],
    [
      ["perm", "/x", "--owner", "no-such-user-zq9"],
      '--owner: no user named "no-such-user-zq9" on this system',
    ],
    [
      ["perm", "/x", "--group", "no-such-group-zq9"],
      '--group: no group named "no-such-group-zq9" on this system',
    ],
  ],
};
