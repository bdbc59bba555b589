/**
 * The grpc kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { buildMissing, freePort } from "../../tests/services/_util.ts";
import { buildGrpcServer, startGrpcServer } from "./_service.ts";
import { DEAD_MARK, type KindSuite, MARK, toggle } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: ["grpc", `127.0.0.1:${d.silentTcp}`, "--header", `authorization: Bearer ${DEAD_MARK}`],
  }),
  live: {
    needs: "the reference gRPC health server (grpc-go)",
    missing: () => buildMissing(buildGrpcServer),
    make() {
      const h2c = `127.0.0.1:${freePort()}`;
      const server = toggle(() =>
        startGrpcServer({ h2c, requireHeader: `authorization: Bearer ${MARK}` })
      );
      const header = (v: string) => ["--header", `authorization: Bearer ${v}`];
      return {
        satisfied: ["grpc", `localhost:${h2c.split(":")[1]}`, ...header(MARK)],
        detail: /server SERVING/,
        pending: ["grpc", h2c, ...header(MARK), "--service", "none.Service"],
        pendingError: /SERVICE_UNKNOWN|NOT_FOUND|unknown/,
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        wrong: {
          args: ["grpc", h2c, ...header("wrong-token")],
          error: "UNAUTHENTICATED: missing or wrong authorization",
        },
        secrets: [MARK],
        usage: ["grpc", h2c, ...header(MARK), "--servername", "x"],
        remove: () => server.stop(),
      };
    },
  },
};
