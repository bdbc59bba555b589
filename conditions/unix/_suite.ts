/**
 * The unix kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { type KindSuite, tcpServer, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["unix", `${d.dir}/none.sock`] }),
  live: {
    needs: "a Unix socket listener",
    async make() {
      const dir = await tempDir("unix");
      const path = `${dir}/app.sock`;
      const server = tcpServer(0, () => Deno.listen({ transport: "unix", path }));
      return {
        satisfied: ["unix", path],
        detail: /connected to .*\/app\.sock/,
        pending: ["unix", `${dir}/other.sock`],
        pendingError: "no such file or directory",
        up: () => server.start(),
        down: async () => {
          await server.stop();
          await Deno.remove(path).catch(() => {});
        },
        downError: "no such file or directory",
        remove: async () => {
          await server.stop();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    na: { credential: "unix has no credentials", secret: "unix takes no secret" },
  },
};
