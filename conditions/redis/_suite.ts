/**
 * The redis kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { assert } from "../../tests/_assert.ts";
import { makeRedis, REDIS_PASSWORD, redisMissing } from "./_service.ts";
import { DEAD_MARK, type KindSuite, loginRow } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: () => ({ args: ["redis", `redis://app:${DEAD_MARK}@127.0.0.1:1/0`, "--key", "k"] }),
  live: loginRow("redis", {
    needs: "Redis",
    missing: redisMissing,
    make: makeRedis,
    password: REDIS_PASSWORD,
    detail: /PONG/,
    pending: [["--key", "app:ready"], 'key "app:ready" does not exist'],
    refused: "WRONGPASS invalid username-password pair or user is disabled.",
    grant: (r) => ({
      url: r.url("late1", "late-pw-1"),
      add: () => r.cli("ACL", "SETUSER", "late1", "on", ">late-pw-1", "~*", "+@all"),
    }),
    bare: (r) => `redis://app@127.0.0.1:${r.port}`,
    usage: ["--equals", "x"],
    tls: (r, pki, other) => {
      const byIp = r.url();
      assert(byIp.startsWith("rediss://"), byIp);
      const byName = `rediss://app:${REDIS_PASSWORD}@localhost:${r.port}`;
      return {
        satisfied: [
          [byName, "--ca-file", pki.ca.certFile],
          [byName.replace("rediss:", "redis:"), "--tls", "--ca-file", pki.ca.certFile],
          [byIp, "--insecure"],
        ],
        detail: "PONG, TLS",
        pending: [
          [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
          [
            [byName, "--ca-file", other.ca.certFile],
            "certificate not trusted (unable to verify the first certificate)",
          ],
        ],
      };
    },
  }),
};
