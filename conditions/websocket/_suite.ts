/**
 * The websocket kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { buildMissing, freePort } from "../../tests/services/_util.ts";
import { buildPyWs, startPyWs } from "./_service.ts";
import { DEAD_MARK, type KindSuite, MARK, toggle } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: [
      ...["websocket", `ws://user:${DEAD_MARK}@127.0.0.1:${d.silentTcp}/?token=${DEAD_MARK}`],
      ...["--header", `X-Api-Key: ${DEAD_MARK}`],
    ],
  }),
  live: {
    needs: "Python websockets (PyPI)",
    missing: () => buildMissing(buildPyWs),
    make() {
      const port = freePort();
      const server = toggle(() =>
        startPyWs({ port, requireHeader: `Authorization: Bearer ${MARK}` })
      );
      // /greet sends a greeting at once; /deny refuses the upgrade (tests/services/pyws/server.py).
      const url = `ws://127.0.0.1:${port}/greet`;
      const header = (v: string) => ["--header", `Authorization: Bearer ${v}`];
      return {
        satisfied: ["websocket", `ws://localhost:${port}/greet`, ...header(MARK)],
        detail: /upgraded/,
        pending: ["websocket", `ws://127.0.0.1:${port}/deny`, ...header(MARK)],
        pendingError: "upgrade refused: status 403 Forbidden",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        wrong: {
          args: ["websocket", url, ...header("wrong-token")],
          error: "upgrade refused: status 401 Unauthorized",
        },
        secrets: [MARK],
        usage: ["websocket", url, ...header(MARK), "--contains", ""],
        remove: () => server.stop(),
      };
    },
  },
};
