/**
 * The icmp kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { sh } from "../../tests/services/_util.ts";
import { type KindSuite, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Every loopback address answers ping: the dead case here is ping missing (fatal).
  dead: (d) => ({ args: ["icmp", "127.0.0.1"], env: { PATH: d.dir } }),
  live: {
    needs: "ping and network namespaces",
    missing: async () => {
      const ping = await sh("sh", ["-c", "command -v ping"]).then(() => undefined, () => "no ping");
      if (ping) return ping;
      return await sh("unshare", ["--net", "--", "ip", "link", "set", "lo", "up"]).then(
        () => undefined,
        (e) => `cannot make a network namespace: ${(e as Error).message}`,
      );
    },
    async make() {
      const dir = await tempDir("icmp");
      const flag = `${dir}/answering`;
      // Each run gets a network namespace of its own (no packet leaves the machine), whose
      // loopback ignores echo requests unless the flag file exists; up and down change it.
      const ignore = (on: boolean) => `sysctl -qw net.ipv4.icmp_echo_ignore_all=${on ? 1 : 0}`;
      const setup = `ip link set lo up; [ -e ${flag} ] || ${ignore(true)}`;
      const inNs = (child: Deno.ChildProcess | undefined, cmd: string) =>
        child ? sh("nsenter", ["-t", String(child.pid), "-n", "sh", "-c", cmd]) : undefined;
      return {
        satisfied: ["icmp", "127.0.0.1"],
        detail: /1 echo reply from 127\.0\.0\.1, rtt avg [\d.]+ ms/,
        // No route in the namespace.
        pending: ["icmp", "10.9.9.9"],
        pendingError: "network is unreachable",
        up: async (child) => {
          await Deno.writeTextFile(flag, "");
          await inNs(child, ignore(false));
        },
        down: async (child) => {
          await Deno.remove(flag).catch(() => {});
          await inNs(child, ignore(true));
        },
        downError: /^no echo reply from 127\.0\.0\.1 \(\d+ sent\)$/,
        wrapper: ["unshare", "--net", "--", "sh", "-c", `${setup}\nexec "$0" "$@"`],
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "icmp has no credentials", secret: "icmp takes no secret" },
  },
};
