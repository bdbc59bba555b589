/**
 * The tcp kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { freePort } from "../../tests/services/_util.ts";
import { type KindSuite, tcpServer } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: () => ({ args: ["tcp", "127.0.0.1:1"] }),
  live: {
    needs: "a TCP listener",
    make() {
      const port = freePort();
      const server = tcpServer(port);
      return {
        satisfied: ["tcp", `localhost:${port}`],
        detail: new RegExp(`connected to localhost:${port}`),
        pending: ["tcp", `127.0.0.1:${freePort()}`],
        pendingError: "connection refused",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        remove: () => server.stop(),
      };
    },
    na: { credential: "tcp has no credentials", secret: "tcp takes no secret" },
  },
};
