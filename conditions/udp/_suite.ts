/**
 * The udp kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { createSocket, type Socket } from "node:dgram";
import { freeUdpPort } from "../../tests/services/chrony.ts";
import { type KindSuite, toggle } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["udp", `127.0.0.1:${d.silentUdp}`, "--send", "ping"] }),
  live: {
    needs: "a UDP responder (node:dgram)",
    async make() {
      const port = await freeUdpPort();
      const server = toggle(async () => {
        const s: Socket = createSocket("udp4");
        s.on("message", (msg, from) => {
          if (msg.toString() === "ping") s.send("pong ready", from.port, from.address);
        });
        await new Promise<void>((res) => s.bind(port, "127.0.0.1", res));
        return { stop: () => new Promise<void>((res) => s.close(() => res())) };
      });
      return {
        satisfied: ["udp", `127.0.0.1:${port}`, "--send", "ping", "--contains", "ready"],
        detail: /.*ready.*/,
        pending: ["udp", `127.0.0.1:${port}`, "--send", "ping", "--contains", "never"],
        pendingError: /no matching reply within 1s/,
        up: () => server.start(),
        down: () => server.stop(),
        downError: /no reply|refused/,
        deadline: "2s",
        remove: () => server.stop(),
      };
    },
    na: { credential: "udp has no credentials", secret: "udp takes no secret" },
  },
};
