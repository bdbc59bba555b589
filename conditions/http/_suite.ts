/**
 * The http kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { freePort } from "../../tests/services/_util.ts";
import { DEAD_MARK, type KindSuite, MARK, toggle } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({
    args: ["http", `http://user:${DEAD_MARK}@127.0.0.1:${d.silentTcp}/?token=${DEAD_MARK}`],
  }),
  live: {
    needs: "an HTTP server (Deno.serve) checking basic auth",
    make() {
      const port = freePort();
      const auth = `Basic ${btoa(`app:${MARK}`)}`;
      const server = toggle(() =>
        Promise.resolve(
          Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, (req) => {
            if (req.headers.get("authorization") !== auth) {
              return new Response("who?", { status: 401 });
            }
            const path = new URL(req.url).pathname;
            return new Response(path === "/ready" ? "ok" : "no", {
              status: path === "/ready" ? 200 : 503,
            });
          }),
        ).then((s) => ({ stop: () => s.shutdown() }))
      );
      const url = (pw: string, path: string) =>
        `http://app:${encodeURIComponent(pw)}@127.0.0.1:${port}${path}`;
      return {
        satisfied: ["http", url(MARK, "/ready")],
        detail: /200 OK/,
        pending: ["http", url(MARK, "/starting")],
        pendingError: "status 503, expected 2xx",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        wrong: { args: ["http", url("wrong-pw", "/ready")], error: "status 401, expected 2xx" },
        secrets: [MARK, btoa(`app:${MARK}`)],
        usage: ["http", url(MARK, "/ready"), "--status", "999"],
        remove: () => server.stop(),
      };
    },
  },
};
