/**
 * The dns kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { binariesMissing, waitUntil } from "../../tests/services/_util.ts";
import { DNSMASQ_BIN, dnsQuery, startDnsmasq } from "../../tests/services/dnsmasq.ts";
import type { KindSuite } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({
    args: ["dns", "app.test", "--resolver", "wire", "--server", `127.0.0.1:${d.silentUdp}`],
  }),
  live: {
    needs: "dnsmasq",
    missing: () => binariesMissing(DNSMASQ_BIN),
    async make() {
      const d = await startDnsmasq({ a: { "app.test": "10.1.2.3" } });
      const resolves = async () => (await dnsQuery(d.server, "live.test", "A")).answers.length > 0;
      const wire = ["--resolver", "wire", "--server", d.server];
      return {
        satisfied: ["dns", "live.test", ...wire],
        detail: /A 10\.9\.8\.7/,
        pending: ["dns", "app.test", ...wire, "--equals", "10.9.9.9"],
        pendingError: "A records do not include 10.9.9.9 (got A 10.1.2.3)",
        up: async () => {
          if (!(await resolves())) await d.addHost("live.test", "10.9.8.7");
        },
        down: async () => {
          await d.removeHost("live.test");
          await waitUntil("dnsmasq to drop live.test", async () => !(await resolves()));
        },
        downError: /NXDOMAIN/,
        remove: () => d.stop(),
      };
    },
    na: { credential: "dns has no credentials", secret: "dns takes no secret" },
  },
  usage: [
    [["dns", "bad name"], 'expected a DNS name, got "bad name"'],
    [
      ["dns", "10.0.0.1"],
      'expected a DNS name, got the IP address "10.0.0.1" (use --type PTR for reverse lookups)',
    ],
    [
      ["dns", "a.test", "--type", "CNAM"],
      '--type: expected one of A, AAAA, CNAME, MX, NS, TXT, SRV, CAA, PTR, SOA, HTTPS, SVCB, ANY, got "CNAM" (did you mean CNAME?)',
    ],
    [
      ["dns", "a.test", "--server", "x_y!"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "x_y!"',
    ],
    [
      ["dns", "a.test", "--resolver", "system", "--server", "1.1.1.1"],
      "--server: needs --resolver wire (the system resolver uses the OS configuration)",
    ],
    [
      ["dns", "a.test", "--resolver", "system", "--rcode", "NXDOMAIN"],
      "--rcode: needs --resolver wire (the system resolver does not report rcodes)",
    ],
    [
      ["dns", "a.test", "--absent", "--equals", "1.1.1.1"],
      "--absent: cannot be combined with --equals",
    ],
    [
      ["dns", "a.test", "--rcode", "NXDOMAIN", "--min-count", "2"],
      "--rcode: NXDOMAIN has no records to check; cannot be combined with --min-count",
    ],
    [
      ["dns", "a.test", "--equals", "not-an-ip"],
      '--equals: expected an IPv4 address for --type A, got "not-an-ip"',
    ],
    [
      ["dns", "a.test", "--min-count", "0"],
      '--min-count: expected a whole number of at least 1, got "0"',
    ],
    [["dns", "bad_name!"], 'expected a DNS name, got "bad_name!"'],
    [
      ["dns", "127.0.0.1"],
      'expected a DNS name, got the IP address "127.0.0.1" (use --type PTR for reverse lookups)',
    ],
    [
      ["dns", "a.test", "--type", "AXFR"],
      '--type: expected one of A, AAAA, CNAME, MX, NS, TXT, SRV, CAA, PTR, SOA, HTTPS, SVCB, ANY, got "AXFR"',
    ],
    [
      ["dns", "a.test", "--type", "HTTPS", "--resolver", "system"],
      "--type: HTTPS needs --resolver wire (the system resolver cannot ask for it)",
    ],
    [
      ["dns", "a.test", "--type", "ANY", "--resolver", "system"],
      "--type: ANY needs --resolver wire (the system resolver cannot ask for it)",
    ],
    [
      ["dns", "a.test", "--transport", "tcp", "--resolver", "system"],
      "--transport: needs --resolver wire (the system resolver chooses its own)",
    ],
    [
      ["dns", "a.test", "--transport", "quic"],
      '--transport: expected one of udp, tcp, got "quic"',
    ],
    [
      ["dns", "a.test", "--server", "[dns.test]:53"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "[dns.test]:53"',
    ],
    [
      ["dns", "a.test", "--server", "ns.test:dns"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "ns.test:dns"',
    ],
    [
      ["dns", "a.test", "--type", "TXT", "--contains", "a", "--contains", ""],
      "--contains: expected a text, got an empty string",
    ],
    [
      ["dns", "a.test", "--min-count", "zero"],
      '--min-count: expected a whole number of at least 1, got "zero"',
    ],
    [["dns", "a.test", "--resolver", "dig"], '--resolver: expected one of system, wire, got "dig"'],
    [
      ["dns", "a.test", "--server", "127.0.0.1:99999"],
      '--server: port must be from 1 to 65535, got "127.0.0.1:99999"',
    ],
    [
      ["dns", "a.test", "--server", "[127.0.0.1]:53"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "[127.0.0.1]:53"',
    ],
    [
      ["dns", "a.test", "--rcode", "GONE"],
      '--rcode: expected one of NOERROR, NXDOMAIN, SERVFAIL, REFUSED, FORMERR, NOTIMP, got "GONE"',
    ],
    [
      ["dns", "a.test", "--resolver", "system", "--server", "127.0.0.1"],
      "--server: needs --resolver wire (the system resolver uses the OS configuration)",
    ],
    [
      ["dns", "a.test", "--absent", "--min-count", "2"],
      "--absent: cannot be combined with --min-count",
    ],
    [
      ["dns", "a.test", "--rcode", "SERVFAIL", "--equals", "1.2.3.4"],
      "--rcode: SERVFAIL has no records to check; cannot be combined with --equals",
    ],
    [
      ["dns", "a.test", "--type", "AAAA", "--equals", "10.0.0.1.5"],
      '--equals: expected an IPv6 address for --type AAAA, got "10.0.0.1.5"',
    ],
    [["dns", "a.test", "--contains", ""], "--contains: expected a text, got an empty string"],
  ],
};
