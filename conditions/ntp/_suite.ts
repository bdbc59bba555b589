/**
 * The ntp kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { chronyMissing, freeUdpPort, startChrony } from "../../tests/services/chrony.ts";
import { type KindSuite, toggle } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["ntp", `127.0.0.1:${d.silentUdp}`] }),
  live: {
    needs: "chrony",
    missing: chronyMissing,
    async make() {
      const port = await freeUdpPort();
      const chrony = toggle(() => startChrony({ port }));
      return {
        satisfied: ["ntp", `127.0.0.1:${port}`],
        detail: /offset [+-]\d+\.\d{3}ms, stratum 8/,
        pending: ["ntp", `127.0.0.1:${port}`, "--max-stratum", "2"],
        pendingError: "stratum 8 is above --max-stratum 2 (offset ",
        up: () => chrony.start(),
        down: () => chrony.stop(),
        downError: /no reply/,
        deadline: "2s",
        remove: () => chrony.stop(),
      };
    },
    na: { credential: "ntp has no credentials", secret: "ntp takes no secret" },
  },
};
