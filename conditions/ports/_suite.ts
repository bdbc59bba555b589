/**
 * The ports kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { freePort } from "../../tests/services/_util.ts";
import { type KindSuite, tcpServer } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: () => ({ args: ["ports", "127.0.0.1", "--range", "1-2"] }),
  live: {
    needs: "TCP listeners",
    make() {
      const [a, b] = [freePort(), freePort()];
      const servers = [tcpServer(a), tcpServer(b)];
      return {
        satisfied: ["ports", "127.0.0.1", "--range", `${a},${b}`],
        detail: /all 2 ports open \(\d+, \d+\)/,
        pending: ["ports", "127.0.0.1", "--range", `${a},${freePort()}`],
        pendingError: /closed: \d+ \(1 of 2 open\)/,
        up: () => Promise.all(servers.map((s) => s.start())),
        down: () => Promise.all(servers.map((s) => s.stop())),
        downError: /closed: .*connection refused/,
        remove: () => Promise.all(servers.map((s) => s.stop())).then(() => {}),
      };
    },
    na: { credential: "ports has no credentials", secret: "ports takes no secret" },
  },
  usage: [
    [["ports", "h", "--range", "0-2"], '--range: ports must be from 1 to 65535, got "0-2"'],
    [["ports", "a/b", "--range", "1"], 'expected a host, got "a/b"'],
  ],
};
