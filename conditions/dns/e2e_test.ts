/**
 * The dns kind end to end against Debian's dnsmasq (A, CNAME, TXT, MX, SRV,
 * PTR, HTTPS, SVCB, ANY, NXDOMAIN, names added while waiting, a server
 * started late or again with new records, --server as a host name,
 * --transport tcp, a recipe) and the dns-packet fake server (truncated UDP
 * answers that force TCP, --transport tcp, SERVFAIL, REFUSED, flaky and
 * silent names, ANY answered minimally as RFC 8482 allows), plus the system
 * resolver on /etc/hosts.
 */

import { assert, assertEquals, assertMatch } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { usageRows } from "../../tests/_suite.ts";
import { type DnsFake, startDnsFake } from "../../tests/services/dnsfake.ts";
import { type Dnsmasq, DNSMASQ_BIN, dnsQuery, startDnsmasq } from "../../tests/services/dnsmasq.ts";
import { waitUntil } from "../../tests/services/_util.ts";
import { freePort } from "../../tests/services/_util.ts";
import {
  assertKindUsageErrors,
  expectJson,
  runJson,
  runLate,
  writeRecipe,
} from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/dns/_suite.ts). */
const USAGE = await usageRows("dns");

const FAST = ["--timeout", "8s", "--interval", "100ms"];
const SHORT = ["--timeout", "1s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

/** An HTTPS record (RFC 9460 wire form): priority 1, target ".", alpn=h2,h3, port=8443. */
const HTTPS_HEX = "000100000100060268320268330003000220fb";
/** Its presentation, as --contains and --equals see it. */
const HTTPS_TEXT = "1 . alpn=h2,h3 port=8443";
/** An SVCB record: priority 1, target app.test, port=8443. */
const SVCB_HEX = "0001036170700474657374000003000220fb";

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
    rr: [
      { name: "app.test", type: 65, hex: HTTPS_HEX },
      { name: "_dns.app.test", type: 64, hex: SVCB_HEX },
    ],
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

    await t.step(
      "HTTPS and SVCB records: --contains and --equals on their presentation",
      async () => {
        const https = await runJson([
          ...FAST,
          ...["dns", "app.test", "--type", "HTTPS"],
          ...S,
          ...["--contains", "alpn=h2,h3", "--contains", "port=8443", "--equals", HTTPS_TEXT],
        ]);
        assertEquals(https.code, 0, https.stdout);
        assertEquals(https.json.conditions[0]!.detail, `HTTPS ${HTTPS_TEXT}`);
        const svcb = await runJson([
          ...FAST,
          ...["dns", "_dns.app.test", "--type", "SVCB", "--equals", "APP.test."],
          ...S,
        ]);
        assertEquals(svcb.code, 0, svcb.stdout);
        assertEquals(svcb.json.conditions[0]!.detail, "SVCB 1 app.test port=8443");
        await expectJson([
          ...SHORT,
          "dns",
          "app.test",
          "--type",
          "HTTPS",
          ...S,
          "--contains",
          "h3",
          "--contains",
          "ech=",
        ], {
          code: 1,
          status: "timeout",
          error: `no HTTPS record contains "ech=" (got HTTPS ${HTTPS_TEXT})`,
        });
        await expectJson([...SHORT, "dns", "www.nope.test", "--type", "HTTPS", ...S], {
          code: 1,
          error: "no HTTPS records (NXDOMAIN)",
        });
      },
    );

    await t.step("ANY holds on any answer record, each read as TYPE VALUE", async () => {
      const r = await runJson([
        ...FAST,
        ...["dns", "app.test", "--type", "ANY"],
        ...S,
        ...["--min-count", "3", "--equals", "10.1.2.3", "--equals", "TXT hello world"],
        ...["--contains", "HTTPS 1 . alpn="],
      ]);
      assertEquals(r.code, 0, r.stdout);
      const detail = r.json.conditions[0]!.detail;
      assert(detail.startsWith("ANY A 10.1.2.3, "), detail);
      assert(detail.includes(`HTTPS ${HTTPS_TEXT}`), detail);
      assert(detail.includes('TXT "hello world"'), detail);
      // A name with one record: one is enough.
      const one = await runJson([...FAST, "dns", "_dns.app.test", "--type", "ANY", ...S]);
      assertEquals(one.json.conditions[0]!.detail, "ANY SVCB 1 app.test port=8443");
      await expectJson([...SHORT, "dns", "nope.test", "--type", "ANY", ...S], {
        code: 1,
        error: "no ANY records (NXDOMAIN)",
      });
    });

    await t.step("several --contains: every text must be in some record", async () => {
      const r = await runJson([
        ...FAST,
        ...["dns", "app.test", "--type", "TXT"],
        ...S,
        ...["--contains", "hello", "--contains", "SPF1 -all"],
      ]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.detail, 'TXT "hello world", "v=spf1 -all"');
      await expectJson([
        ...SHORT,
        ...["dns", "app.test", "--type", "TXT"],
        ...S,
        ...["--contains", "hello", "--contains", "dkim", "--contains", "spf1"],
      ], {
        code: 1,
        status: "timeout",
        error: 'no TXT record contains "dkim" (got TXT "hello world", "v=spf1 -all")',
      });
    });

    await t.step("--server as a host name, and a name that does not resolve", async () => {
      const r = await runJson([
        ...FAST,
        ...["dns", "app.test", "--server", `localhost:${d.port}`, "--equals", "10.1.2.3"],
      ]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.detail, "A 10.1.2.3");
      // A few seconds: the system resolver may ask resolv.conf's nameserver before it gives up.
      await expectJson([
        ...["--timeout", "3s", "--interval", "200ms"],
        ...["dns", "app.test", "--server", `no-such-server.invalid:${d.port}`],
      ], {
        code: 1,
        status: "timeout",
        error: "cannot resolve host no-such-server.invalid: no such host",
      });
    });

    await t.step("--transport tcp against dnsmasq, and a recipe with the new flags", async () => {
      const r = await runJson([
        ...FAST,
        ...["dns", "app.test", "--type", "TXT", "--transport", "tcp"],
        ...S,
        ...["--contains", "hello"],
      ]);
      assertEquals(r.code, 0, r.stdout);
      const dir = await Deno.makeTempDir({ prefix: "waitcmd-dns-recipe-" });
      try {
        const recipe = await writeRecipe(dir, [
          "timeout: 8s",
          "interval: 100ms",
          "conditions:",
          "  - kind: dns",
          "    target: app.test",
          "    flags:",
          "      type: HTTPS",
          `      server: localhost:${d.port}`,
          "      transport: tcp",
          "      contains: [alpn=h2, port=8443]",
        ]);
        const viaRecipe = await runJson(["-f", recipe]);
        assertEquals(viaRecipe.code, 0, viaRecipe.stdout);
        assertEquals(viaRecipe.json.conditions[0]!.detail, `HTTPS ${HTTPS_TEXT}`);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  } finally {
    await d.stop();
  }
}

Deno.test({
  name: "dns kind: a server started late, or again with a new record",
  ignore: ignoreWithout("dnsmasq", dnsmasqMissing),
  ...opts,
  fn: async (t) => {
    const servers: Dnsmasq[] = [];
    try {
      await t.step(
        "HTTPS over UDP at a named server that starts after the first attempt",
        async () => {
          const port = freePort();
          const r = await runLate([
            ...["--timeout", "20s", "--interval", "100ms", "--attempt-timeout", "500ms"],
            ...["dns", "late.test", "--type", "HTTPS", "--server", `localhost:${port}`],
            ...["--equals", "alpn=h3"],
          ], async () => {
            servers.push(
              await startDnsmasq({ port, rr: [{ name: "late.test", type: 65, hex: HTTPS_HEX }] }),
            );
          });
          assertEquals(r.code, 0, r.stdout + r.stderr);
          assertEquals(r.attempts[0]!.error, "attempt timed out after 500ms");
          assertEquals(r.report.conditions[0]!.detail, `HTTPS ${HTTPS_TEXT}`);
        },
      );

      await t.step("--transport tcp: refused until the server starts", async () => {
        const port = freePort();
        const r = await runLate([
          ...["--timeout", "20s", "--interval", "100ms"],
          ...["dns", "late.test", "--transport", "tcp", "--server", `127.0.0.1:${port}`],
        ], async () => {
          servers.push(await startDnsmasq({ port, a: { "late.test": "10.7.7.7" } }));
        });
        assertEquals(r.code, 0, r.stdout + r.stderr);
        assertEquals(r.report.conditions[0]!.detail, "A 10.7.7.7");
        assertEquals(r.attempts[0]!.error, `127.0.0.1:${port} (tcp): connection refused`);
      });

      await t.step("a record added by restarting dnsmasq with a new --dns-rr", async () => {
        const first = await startDnsmasq({ a: { "svc.test": "10.1.1.1" } });
        servers.push(first);
        const r = await runLate([
          ...["--timeout", "20s", "--interval", "100ms", "--attempt-timeout", "500ms"],
          ...["dns", "svc.test", "--type", "HTTPS", "--server", first.server],
        ], async () => {
          await first.stop();
          servers.push(
            await startDnsmasq({
              port: first.port,
              a: { "svc.test": "10.1.1.1" },
              rr: [{ name: "svc.test", type: 65, hex: HTTPS_HEX }],
            }),
          );
        });
        assertEquals(r.code, 0, r.stdout + r.stderr);
        assertEquals(r.attempts[0]!.error, "no HTTPS records (NODATA)");
        assertEquals(r.report.conditions[0]!.detail, `HTTPS ${HTTPS_TEXT}`);
      });
    } finally {
      for (const s of servers) await s.stop();
    }
  },
});

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

    await t.step("--transport tcp asks over TCP only", async () => {
      const before = (await f.queries()).length;
      const r = await runJson([...FAST, "dns", f.names.ok, ...S, "--transport", "tcp"]);
      assertEquals(r.code, 0, r.stdout);
      const q = (await f.queries()).slice(before);
      assertEquals(q.map((l) => l.split(" -> ")[0]), [`query tcp ${f.names.ok} A`]);
    });

    await t.step("ANY: a minimal answer (RFC 8482) is a record; a refusal is pending", async () => {
      const r = await runJson([...FAST, "dns", f.names.minimal, "--type", "ANY", ...S]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.detail, "ANY HINFO RFC8482");
      await expectJson([...SHORT, "dns", f.names.refused, "--type", "ANY", ...S], {
        code: 1,
        error: `REFUSED from ${f.server}`,
      });
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
  assertKindUsageErrors("dns", USAGE));
