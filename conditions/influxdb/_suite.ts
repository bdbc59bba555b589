/**
 * The influxdb kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { influxdbMissing, makeInfluxdb } from "./_service.ts";
import { DEAD_MARK, type KindSuite, MARK } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["influxdb", `http://app:${DEAD_MARK}@127.0.0.1:${d.silentTcp}`] }),
  live: {
    needs: "influxd (Debian's influxdb)",
    missing: influxdbMissing,
    async make() {
      const s = await makeInfluxdb({ start: false });
      const withPassword = `http://app:${encodeURIComponent(MARK)}@127.0.0.1:${s.port}`;
      return {
        satisfied: ["influxdb", withPassword],
        detail: /204 No Content/,
        pending: ["influxdb", `${s.url}/influx`],
        pendingError: "/influx/ping answered status 404, expected 2xx",
        up: () => s.start(),
        down: () => s.stop(),
        downError: "connection refused",
        secrets: [MARK],
        usage: ["influxdb", `${withPassword}/?db=x`],
        // A failed TLS handshake with influxd takes most of a second on a busy machine.
        deadline: "2s",
        tls: async (pki, other) => {
          const tls = await makeInfluxdb({
            tls: {
              caFile: pki.ca.certFile,
              certFile: pki.server.certFile,
              keyFile: pki.server.keyFile,
            },
          });
          const byName = `https://localhost:${tls.port}`;
          const byIp = tls.url;
          return {
            satisfied: [[byName, "--ca-file", pki.ca.certFile], [byIp, "--insecure"]],
            detail: "204 No Content",
            pending: [
              [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
              [
                [byName, "--ca-file", other.ca.certFile],
                "certificate not trusted (unable to verify the first certificate)",
              ],
              [[byName], "certificate not trusted (unable to verify the first certificate)"],
            ],
            remove: () => tls.remove(),
          };
        },
        remove: () => s.remove(),
      };
    },
    na: { credential: "InfluxDB answers /ping without authentication" },
  },
  usage: [
    [["influxdb", "localhost:8086"], 'expected an http:// or https:// URL, got "localhost:8086"'],
    [["influxdb", "udp://h:8089"], 'expected an http:// or https:// URL, got "udp://h:8089"'],
    [
      ["influxdb", "http://h:8086/?db=metrics"],
      'expected the server\'s URL without a query or fragment (like http://localhost:8086), got "http://h:8086/?db=metrics"',
    ],
    [
      ["influxdb", "http://app:influx-pw-3@h:8086/#x"],
      'expected the server\'s URL without a query or fragment (like http://localhost:8086), got "http://app:***@h:8086/#x"',
    ],
    [["influxdb", "https://h:8086", "--client-cert", "c.pem"], "--client-cert: needs --client-key"],
    [
      ["influxdb", "https://h:8086", "--ca-file", "ca.pem", "--insecure"],
      "--insecure: cannot be combined with --ca-file",
    ],
    [["influxdb", "http://h:8086", "--status", "204"], "unknown flag --status"],
  ],
};
