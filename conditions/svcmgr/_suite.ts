/**
 * The svcmgr kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { binariesMissing } from "../../tests/services/_util.ts";
import { startSystemdUser, SYSTEMD_BIN } from "./_service.ts";
import type { KindSuite } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({
    args: ["svcmgr", "none-zq9.service", "--user"],
    env: { DBUS_SESSION_BUS_ADDRESS: `unix:path=${d.dir}/bus`, XDG_RUNTIME_DIR: d.dir },
  }),
  live: {
    needs: "a systemd user manager",
    missing: () => binariesMissing(SYSTEMD_BIN),
    async make() {
      const sd = await startSystemdUser();
      await sd.writeUnit("live.service", "[Service]\nExecStart=/bin/sleep 600\n");
      return {
        // By its alias: the report names the condition "systemd live.service", of kind svcmgr.
        satisfied: ["systemd", "live.service", "--user"],
        detail: /active \(running\)/,
        pending: ["svcmgr", "live.service", "--user", "--failed"],
        pendingError: "active (running)",
        up: () => sd.systemctl(["start", "live.service"]),
        down: () => sd.systemctl(["stop", "live.service"]),
        downError: "inactive (dead)",
        env: sd.env,
        remove: () => sd.stop(),
      };
    },
    na: {
      credential: "svcmgr asks the local manager over D-Bus",
      secret: "svcmgr takes no secret",
    },
  },
  usage: [
    [
      ["svcmgr", "a b"],
      'expected a unit name like nginx or nginx.service, got "a b" (allowed: letters, digits and :_.\\@-)',
    ],
    [["svcmgr", "x", "--active", "--failed"], "--failed: cannot be combined with --active"],
    [["systemd", "x", "--failed", "--inactive"], "--failed: cannot be combined with --inactive"],
  ],
};
