/**
 * The ssh kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { binariesMissing, freePort } from "../../tests/services/_util.ts";
import { SSHD_BIN, startSshd } from "../../tests/services/sshd.ts";
import { DEAD_MARK, type KindSuite, MARK, toggle } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: ["ssh", `127.0.0.1:${d.silentTcp}`, "--user", "u", "--password", DEAD_MARK],
  }),
  live: {
    needs: "OpenSSH sshd",
    missing: () => binariesMissing(SSHD_BIN),
    make() {
      const port = freePort();
      const sshd = toggle(() => startSshd({ port }));
      const target = `127.0.0.1:${port}`;
      const login = ["--user", "waittest", "--password-env", "SSH_PW"];
      return {
        satisfied: ["ssh", target, ...login],
        detail: /logged in as waittest .*/,
        pending: ["ssh", target, ...login, "--banner-contains", "Dropbear"],
        pendingError: /banner/,
        up: () => sshd.start(),
        down: () => sshd.stop(),
        downError: "connection refused",
        wrong: {
          args: ["ssh", target, "--user", "waittest", "--password", MARK],
          error: "authentication failed for user waittest",
        },
        passwordFlags: { bare: ["ssh", target, "--user", "waittest"], password: "s3cret" },
        env: { SSH_PW: "s3cret" },
        secrets: [MARK, "s3cret"],
        usage: ["ssh", target, "--password", MARK],
        // sshd answers a failed password after a delay (PAM): two attempts take seconds.
        deadline: "6s",
        remove: () => sshd.stop(),
      };
    },
  },
  usage: [
    [["ssh", "h:99999"], 'port must be from 1 to 65535, got "99999"'],
    [
      ["ssh", "h", "--host-key-sha256", "abc"],
      '--host-key-sha256: expected SHA256: and 43 base64 characters, as ssh-keygen -lf prints it, got "abc"',
    ],
    [["ssh", "h", "--user", "u"], "--user: needs --password, --password-env or --password-file"],
    [["ssh", "h", "--password", "p"], "--password: needs --user"],
    [
      ["ssh", "h", "--user", "u", "--password", "p", "--password-file", "f"],
      "--password-file: cannot be combined with --password",
    ],
    [
      ["ssh", "h", "--user", "u", "--password-env", "NOPE_UNSET"],
      "--password-env: environment variable NOPE_UNSET is not set",
    ],
    [
      ["ssh", "h", "--user", "u", "--password-env", "1X"],
      '--password-env: expected an environment variable name, got "1X"',
    ],
    [
      ["ssh", "h", "--banner-contains", ""],
      "--banner-contains: expected a text, got an empty string",
    ],
    [
      ["ssh", "h", "--user", "", "--password", "p"],
      "--user: expected a user name, got an empty string",
    ],
  ],
};
