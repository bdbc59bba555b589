/**
 * The dns kind end to end against Debian's dnsmasq (A, CNAME, TXT, MX, SRV,
 * PTR, NXDOMAIN, names added while waiting) and the dns-packet fake server
 * (truncated UDP answers that force TCP, SERVFAIL, REFUSED, flaky and silent
 * names), plus the system resolver on /etc/hosts.
 */

import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { USAGE_ROWS } from "../_usage_rows.ts";
import { type DnsFake, startDnsFake } from "../services/dnsfake.ts";
import { type Dnsmasq, DNSMASQ_BIN, dnsQuery, startDnsmasq } from "../services/dnsmasq.ts";
import { waitUntil } from "../services/_util.ts";
import { assertKindUsageErrors, expectJson, runJson } from "./_cli.ts";

const FAST = ["--timeout", "8s", "--interval", "100ms"];
const SHORT = ["--timeout", "1s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

/** Why dnsmasq cannot be had, or undefined. */
const dnsmasqMissing = await Deno.stat(DNSMASQ_BIN).then(
  () => undefined,
  () => `${DNSMASQ_BIN} not found (run scripts/install-test-deps.sh)`,
);

Deno.test({
  name: "dns kind against dnsmasq over the wire",
  ignore: ignoreWithout("dnsmasq", dnsmasqMissing),
  ...opts,
  fn: dnsmasqTests,
});

async function dnsmasqTests(t: Deno.TestContext) {
  const d: Dnsmasq = await startDnsmasq({
    a: { "app.test": "10.1.2.3", "multi.test": ["10.0.0.5", "10.0.0.6"], "six.test": "fd00::5" },
    cname: { "www.test": "app.test" },
    txt: { "app.test": ["hello world", "v=spf1 -all"] },
    mx: { "app.test": [{ exchange: "mail.test", preference: 10 }] },
    srv: [{ name: "_http._tcp.app.test", target: "app.test", port: 8080 }],
  });
  const S = ["--server", d.server];
  try {
    await t.step("several A records: JSON report, --min-count and --equals", async () => {
      const r = await runJson([
        ...FAST,
        ...["dns", "multi.test"],
        ...S,
        ...["--min-count", "2", "--equals", "10.0.0.6", "--equals", "10.0.0.5"],
      ]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.stderr, "");
      const c = r.json.conditions[0]!;
      assertEquals(c.name, "dns multi.test");
      assertEquals(c.detail, "A 10.0.0.5, 10.0.0.6");
      assertEquals(c.last_error, "");
    });

    await t.step("too few records or a missing value time out naming them", async () => {
      await expectJson([...SHORT, "dns", "multi.test", ...S, "--min-count", "3"], {
        code: 1,
        status: "timeout",
        error: "2 A records, expected at least 3: A 10.0.0.5, 10.0.0.6",
      });
      await expectJson([...SHORT, "dns", "multi.test", ...S, "--equals", "10.0.0.7"], {
        code: 1,
        status: "timeout",
        error: "A records do not include 10.0.0.7 (got A 10.0.0.5, 10.0.0.6)",
      });
    });

    await t.step(
      "CNAME compares case-insensitively, with or without the trailing dot",
      async () => {
        for (const v of ["app.test.", "APP.test", "app.test"]) {
          const r = await runJson([
            ...FAST,
            ...["dns", "www.test", "--type", "CNAME"],
            ...S,
            ...["--equals", v],
          ]);
          assertEquals(r.code, 0, `${v}: ${r.stdout}`);
          assertEquals(r.json.conditions[0]!.detail, "CNAME app.test");
        }
        const a = await runJson([...FAST, "dns", "www.test", ...S]);
        assertEquals(a.json.conditions[0]!.detail, "A 10.1.2.3");
      },
    );

    await t.step("TXT, MX, SRV, AAAA and PTR records", async () => {
      const cases: [string[], string][] = [
        [
          ["app.test", "--type", "TXT", "--equals", "hello world", "--contains", "SPF1"],
          "hello world",
        ],
        [["app.test", "--type", "MX", "--equals", "mail.test."], "MX 10 mail.test"],
        [
          ["_http._tcp.app.test", "--type", "SRV", "--equals", "app.test:8080"],
          "SRV 0 0 8080 app.test",
        ],
        [["six.test", "--type", "AAAA", "--equals", "FD00:0::5"], "AAAA fd00::5"],
        [["10.1.2.3", "--type", "PTR", "--equals", "app.test"], "PTR app.test"],
      ];
      for (const [args, detail] of cases) {
        const r = await runJson([...FAST, "dns", ...args, ...S]);
        assertEquals(r.code, 0, `${args.join(" ")}: ${r.stdout}`);
        assert(r.json.conditions[0]!.detail.includes(detail), r.json.conditions[0]!.detail);
      }
    });

    await t.step("NXDOMAIN and NODATA are told apart", async () => {
      await expectJson([...SHORT, "dns", "nope.test", ...S], {
        code: 1,
        error: "no A records (NXDOMAIN)",
      });
      const nodata = await runJson([...SHORT, "dns", "app.test", "--type", "AAAA", ...S]);
      assertEquals(nodata.json.conditions[0]!.last_error, "no AAAA records (NODATA)");
    });

    await t.step("--rcode and --absent", async () => {
      const r = await runJson([...FAST, "dns", "nope.test", ...S, "--rcode", "NXDOMAIN"]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.detail, "NXDOMAIN");
      const noerr = await runJson([
        ...FAST,
        ...["dns", "app.test", "--type", "AAAA"],
        ...S,
        ...["--rcode", "NOERROR"],
      ]);
      assertEquals(noerr.code, 0, "NOERROR holds for NODATA");
      const wrong = await runJson([...SHORT, "dns", "app.test", ...S, "--rcode", "NXDOMAIN"]);
      assertEquals(wrong.json.conditions[0]!.last_error, "rcode NOERROR, expected NXDOMAIN");
      const absent = await runJson([...FAST, "dns", "nope.test", ...S, "--absent"]);
      assertEquals(absent.json.conditions[0]!.detail, "no A records (NXDOMAIN)");
      const still = await runJson([...SHORT, "dns", "app.test", ...S, "--absent"]);
      assertEquals(still.json.conditions[0]!.last_error, "still resolves: A 10.1.2.3");
    });

    await t.step("a name removed while waiting: --absent holds once it is gone", async () => {
      await d.addHost("gone.test", "10.9.9.9");
      await waitUntil(
        "dnsmasq to serve gone.test",
        async () => (await dnsQuery(d.server, "gone.test", "A")).answers.length > 0,
      );
      const gone = await runJson([...FAST, "dns", "gone.test", ...S, "--absent"], {
        started: () => d.removeHost("gone.test"),
      });
      assertEquals(gone.code, 0, gone.stdout);
    });
  } finally {
    await d.stop();
  }
}

Deno.test("dns kind against the fake server: truncation, errors and silence", opts, async (t) => {
  const f: DnsFake = await startDnsFake({ flakyFailures: 3 });
  const S = ["--server", f.server];
  try {
    await t.step("a truncated UDP answer is retried over TCP", async () => {
      const r = await runJson([...FAST, "dns", f.names.truncated, ...S, "--min-count", "40"]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(
        r.json.conditions[0]!.detail,
        "A 127.0.1.1, 127.0.1.2, 127.0.1.3, 127.0.1.4, 127.0.1.5, … (40 records)",
      );
      const q = await f.queries();
      assert(q.some((l) => l.startsWith(`query udp ${f.names.truncated} A`)), q.join("\n"));
      assert(q.some((l) => l.startsWith(`query tcp ${f.names.truncated} A`)), q.join("\n"));
      const txt = await runJson([
        ...FAST,
        ...["dns", f.names.truncated, "--type", "TXT"],
        ...S,
        ...["--contains", "chunk3"],
      ]);
      assertEquals(txt.code, 0, txt.stdout);
    });

    await t.step("SERVFAIL is retried, and --rcode SERVFAIL / REFUSED match", async () => {
      await expectJson([...SHORT, "dns", f.names.servfail, ...S], {
        code: 1,
        error: `SERVFAIL from ${f.server}`,
      });
      const sf = await runJson([...FAST, "dns", f.names.servfail, ...S, "--rcode", "SERVFAIL"]);
      assertEquals(sf.json.conditions[0]!.detail, "SERVFAIL");
      await expectJson([...FAST, "dns", f.names.refused, ...S, "--rcode", "REFUSED"], { code: 0 });
    });

    await t.step("a flaky name resolves after its failures", async () => {
      const r = await runJson([...FAST, "dns", f.names.flaky, ...S, "--equals", "127.0.0.3"]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.attempts, 4);
    });

    await t.step("SOA and NS of the zone", async () => {
      const soa = await runJson([
        ...FAST,
        ...["dns", f.zone, "--type", "SOA"],
        ...S,
        ...["--equals", `ns.${f.zone}`],
      ]);
      assertEquals(soa.code, 0, soa.stdout);
      assertMatch(
        soa.json.conditions[0]!.detail,
        new RegExp(`^SOA ns\\.${f.zone} hostmaster\\.${f.zone} 1 `),
      );
      const ns = await runJson([
        ...FAST,
        ...["dns", f.zone, "--type", "NS"],
        ...S,
        ...["--equals", `NS.${f.zone}.`],
      ]);
      assertEquals(ns.code, 0, ns.stdout);
    });

    await t.step("a silent server: --attempt-timeout, or the query gives up after 5s", async () => {
      await expectJson([
        ...SHORT,
        ...["--attempt-timeout", "300ms", "dns", f.names.silent],
        ...S,
      ], { code: 1, error: "attempt timed out after 300ms" });
      await expectJson([
        ...["--timeout", "7s", "--interval", "100ms", "dns", f.names.silent],
        ...S,
      ], { code: 1, error: `no answer from ${f.server} within 5s (udp)` });
    });
  } finally {
    await f.stop();
  }
});

Deno.test("dns kind with the system resolver honours /etc/hosts", async () => {
  const r = await runJson([...FAST, "dns", "localhost", "--equals", "127.0.0.1"]);
  assertEquals(r.code, 0, r.stdout);
  assertEquals(r.json.conditions[0]!.detail, "A 127.0.0.1");
});

Deno.test("dns kind rejects every malformed value with exit 2 before probing", () =>
  assertKindUsageErrors("dns", USAGE_ROWS.dns));
