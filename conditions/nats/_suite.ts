/**
 * The nats kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { assert } from "../../tests/_assert.ts";
import { makeNats, natsMissing } from "./_service.ts";
import { DEAD_MARK, type KindSuite, MARK } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: ["nats", `nats://app:${DEAD_MARK}@127.0.0.1:${d.silentTcp}`, "--stream", "ORDERS"],
  }),
  live: {
    needs: "nats-server",
    missing: natsMissing,
    async make() {
      const n = await makeNats({ start: false, user: { name: "app", password: "nats-live-pw" } });
      return {
        satisfied: ["nats", n.url("app:nats-live-pw")],
        detail: /NATS \d+\.\d+\.\d+/,
        pending: ["nats", n.url("app:nats-live-pw"), "--jetstream"],
        pendingError: "JetStream is not enabled on the server",
        up: () => n.start(),
        down: () => n.stop(),
        downError: "connection refused",
        wrong: {
          args: ["nats", n.url(`app:${encodeURIComponent(MARK)}`)],
          error: 'authentication failed for user "app": Authorization Violation',
        },
        passwordFlags: { bare: ["nats", n.url("app")], password: "nats-live-pw" },
        secrets: [MARK, "nats-live-pw"],
        usage: ["nats", n.url(`app:${encodeURIComponent(MARK)}`), "--stream", "a.b"],
        tls: async (pki, other) => {
          const tls = await makeNats({
            tls: { certFile: pki.server.certFile, keyFile: pki.server.keyFile },
            jetstream: true,
          });
          const byName = `tls://localhost:${tls.port}`;
          const byIp = tls.url();
          assert(byIp.startsWith("tls://127.0.0.1:"), byIp);
          return {
            satisfied: [
              [byName, "--ca-file", pki.ca.certFile],
              [
                `nats://localhost:${tls.port}`,
                "--tls",
                "--ca-file",
                pki.ca.certFile,
                "--jetstream",
              ],
              [byIp, "--insecure"],
            ],
            detail: /, TLS$/,
            pending: [
              [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
              [
                [byName, "--ca-file", other.ca.certFile],
                "certificate not trusted (unable to verify the first certificate)",
              ],
              [[byName], "certificate not trusted (unable to verify the first certificate)"],
              [
                [`nats://localhost:${tls.port}`],
                "the server requires TLS (use a tls:// URL or --tls)",
              ],
            ],
            remove: () => tls.remove(),
          };
        },
        remove: () => n.remove(),
      };
    },
  },
  usage: [
    [
      ["nats", "http://h:4222"],
      'expected nats://[user:password@|token@]host[:port][,nats://host[:port]...] or tls://..., got "http://h:4222"',
    ],
    [
      ["nats", "nats://a:4222,"],
      'expected nats://[user:password@|token@]host[:port][,nats://host[:port]...] or tls://..., got ""',
    ],
    [
      ["nats", "ws://h:8080"],
      'ws:// servers are not supported (NATS over TCP only), got "ws://h:8080"',
    ],
    [
      ["nats", "nats://u:p@a,nats://v:q@b"],
      "the servers' user-info differ: write the same on each, or on one",
    ],
    [["nats", "nats://"], 'the host is missing in "nats://"'],
    [["nats", "nats://h:0"], 'port must be from 1 to 65535, got "0"'],
    [["nats", "nats://h:x"], 'expected HOST[:PORT] or [IPv6]:PORT, got "h:x"'],
    [["nats", "nats://h/subject"], 'a NATS URL has no path, got "/subject"'],
    [
      ["nats", "nats://h?token=x"],
      'unknown URL parameter "token" (a NATS URL takes none: credentials go in its user-info or the flags)',
    ],
    [
      ["nats", "nats://:pw@h"],
      "the URL has a password but no user (a token is written token@host)",
    ],
    [
      ["nats", "nats://h", "--password-env", "PW"],
      "--password-env: needs a user in the URL (nats://USER@host)",
      { "PW": "x" },
    ],
    [
      ["nats", "nats://u:p@h", "--password-env", "PW"],
      "--password-env: cannot be combined with a password in the URL",
      { "PW": "x" },
    ],
    [
      ["nats", "nats://h", "--token-env", "NOPE"],
      "--token-env: environment variable NOPE is not set",
    ],
    [
      ["nats", "nats://h", "--token-env", "1X"],
      '--token-env: expected an environment variable name, got "1X"',
    ],
    [["nats", "nats://h", "--token-env", "E"], "--token-env: the variable is empty", { "E": "" }],
    [
      ["nats", "nats://u:p@h", "--token-env", "T"],
      "--token-env: cannot be combined with user-info in the URL",
      { "T": "tok" },
    ],
    [
      ["nats", "nats://u:p@h", "--creds-file", "a.creds"],
      "--creds-file: cannot be combined with user-info in the URL",
    ],
    [
      ["nats", "nats://h", "--token-env", "T", "--creds-file", "a.creds"],
      "--creds-file: cannot be combined with --token-env",
      { "T": "tok" },
    ],
    [
      ["nats", "nats://h", "--creds-file", ""],
      "--creds-file: expected a path, got an empty string",
    ],
    [["nats", "nats://h", "--ca-file", "ca.pem"], "--ca-file: needs a tls:// URL or --tls"],
    [["nats", "nats://h", "--insecure"], "--insecure: needs a tls:// URL or --tls"],
    [
      ["nats", "tls://h", "--insecure", "--ca-file", "c"],
      "--insecure: cannot be combined with --ca-file",
    ],
    [["nats", "nats://h", "--stream", ""], "--stream: expected a stream name, got an empty string"],
    [
      ["nats", "nats://h", "--stream", "orders.eu"],
      "--stream: a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got \"orders.eu\"",
    ],
    [
      ["nats", "nats://h", "--stream", "a b"],
      "--stream: a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got \"a b\"",
    ],
    [
      ["nats", "nats://h", "--stream", "a>"],
      "--stream: a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got \"a>\"",
    ],
    [["nats", "nats://h", "--jetstream=yes"], '--jetstream: expected true or false, got "yes"'],
  ],
};
