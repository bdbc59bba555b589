import { checkOnce } from "../../engine/attempt.ts";
import { assertEquals, assertMatch, assertThrows } from "../../tests/_assert.ts";
import { optionsOf, probeOf } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { type DnsWant, judgeLookup } from "./judge.ts";
import { type DnsOptions, parseServer } from "./mod.ts";
import {
  answerType,
  makeRecord,
  normValue,
  packetType,
  queryName,
  type Rec,
  type RecordType,
} from "./records.ts";
import { svcbText } from "./svcb.ts";

const want = (over: Partial<DnsWant> = {}): DnsWant => ({
  type: "A",
  minCount: 1,
  equals: [],
  contains: [],
  absent: false,
  rcode: undefined,
  wire: true,
  ...over,
});
const recs = (type: RecordType, ...data: unknown[]): Rec[] => data.map((d) => makeRecord(type, d));
const answer = (records: Rec[], rcode = "NOERROR") => ({
  rcode,
  records,
  from: "127.0.0.1:53",
});

Deno.test("makeRecord() renders every type from dns-packet and Deno.resolveDns shapes", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const rows: [RecordType, unknown, string][] = [
    ["A", "10.0.0.5", "10.0.0.5"],
    ["AAAA", "FD00:0:0::5", "fd00::5"],
    ["CNAME", "App.Example.COM.", "app.example.com"],
    ["NS", "ns1.example.com", "ns1.example.com"],
    ["PTR", "host.example.com.", "host.example.com"],
    ["MX", { preference: 10, exchange: "mail.example.com." }, "10 mail.example.com"],
    ["TXT", [enc("v=spf1 "), enc("-all")], '"v=spf1 -all"'],
    ["TXT", ["hello world"], '"hello world"'],
    ["SRV", { priority: 0, weight: 5, port: 8080, target: "app.test." }, "0 5 8080 app.test"],
    ["CAA", { flags: 0, tag: "issue", value: "letsencrypt.org" }, '0 issue "letsencrypt.org"'],
    ["CAA", { critical: true, tag: "iodef", value: "mailto:x@y" }, '128 iodef "mailto:x@y"'],
    [
      "SOA",
      { mname: "ns.t.", rname: "h.t.", serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 },
      "ns.t h.t 1 2 3 4 5",
    ],
  ];
  for (const [type, data, text] of rows) assertEquals(makeRecord(type, data).text, text, type);
});

Deno.test("judgeLookup() is satisfied with enough records and every --equals value", () => {
  const r = recs("A", "10.0.0.5", "10.0.0.6");
  assertEquals(judgeLookup(answer(r), want({ minCount: 2, equals: ["10.0.0.6", "10.0.0.5"] })), {
    status: "satisfied",
    detail: "A 10.0.0.5, 10.0.0.6",
  });
  const cname = recs("CNAME", "app.test");
  for (const v of ["app.test", "APP.TEST.", "app.test."]) {
    assertEquals(
      judgeLookup(answer(cname), want({ type: "CNAME", equals: [v] })).status,
      "satisfied",
      v,
    );
  }
  const mx = recs("MX", { preference: 10, exchange: "mail.test" });
  for (const v of ["10 mail.test", "mail.test.", "10 MAIL.test."]) {
    assertEquals(judgeLookup(answer(mx), want({ type: "MX", equals: [v] })).status, "satisfied", v);
  }
  const txt = recs("TXT", ["hello world"]);
  assertEquals(
    judgeLookup(answer(txt), want({ type: "TXT", equals: ['"hello world"'] })).status,
    "satisfied",
  );
  assertEquals(
    judgeLookup(answer(txt), want({ type: "TXT", contains: ["HELLO"] })).status,
    "satisfied",
  );
});

Deno.test("judgeLookup() explains what is missing", async (t) => {
  const two = recs("A", "10.0.0.5", "10.0.0.6");
  const rows: [string, ReturnType<typeof answer>, DnsWant, string][] = [
    [
      "too few",
      answer(two),
      want({ minCount: 3 }),
      "2 A records, expected at least 3: A 10.0.0.5, 10.0.0.6",
    ],
    [
      "missing value",
      answer(two),
      want({ equals: ["10.0.0.7", "10.0.0.5"] }),
      "A records do not include 10.0.0.7 (got A 10.0.0.5, 10.0.0.6)",
    ],
    [
      "no contains",
      answer(two),
      want({ contains: ["192."] }),
      'no A record contains "192." (got A 10.0.0.5, 10.0.0.6)',
    ],
    [
      "one of several contains",
      answer(recs("TXT", ["v=spf1 -all"], ["hello world"])),
      want({ type: "TXT", contains: ["SPF1", "verify=", "world", "x-"] }),
      'no TXT record contains "verify=", "x-" (got TXT "hello world", "v=spf1 -all")',
    ],
    ["nxdomain", answer([], "NXDOMAIN"), want(), "no A records (NXDOMAIN)"],
    ["nodata", answer([]), want({ type: "AAAA" }), "no AAAA records (NODATA)"],
    ["system", answer([], "NXDOMAIN"), want({ wire: false }), "no A records"],
    ["servfail", answer([], "SERVFAIL"), want(), "SERVFAIL from 127.0.0.1:53"],
    [
      "rcode",
      answer(two),
      want({ rcode: "NXDOMAIN", minCount: 0 }),
      "rcode NOERROR, expected NXDOMAIN",
    ],
    ["absent", answer(two), want({ absent: true }), "still resolves: A 10.0.0.5, 10.0.0.6"],
    [
      "absent servfail",
      answer([], "SERVFAIL"),
      want({ absent: true }),
      "SERVFAIL from 127.0.0.1:53",
    ],
  ];
  for (const [label, found, w, error] of rows) {
    await t.step(label, () => assertEquals(judgeLookup(found, w), { status: "pending", error }));
  }
});

Deno.test("judgeLookup() with --absent and --rcode", () => {
  assertEquals(judgeLookup(answer([], "NXDOMAIN"), want({ absent: true })), {
    status: "satisfied",
    detail: "no A records (NXDOMAIN)",
  });
  assertEquals(judgeLookup(answer([], "NXDOMAIN"), want({ rcode: "NXDOMAIN", minCount: 0 })), {
    status: "satisfied",
    detail: "NXDOMAIN",
  });
  assertEquals(judgeLookup(answer(recs("A", "1.2.3.4")), want({ rcode: "NOERROR", minCount: 0 })), {
    status: "satisfied",
    detail: "NOERROR, A 1.2.3.4",
  });
});

Deno.test("judgeLookup() abbreviates many records", () => {
  const many = recs("A", ...Array.from({ length: 40 }, (_, i) => `127.0.1.${i + 1}`));
  const r = judgeLookup(answer(many), want({ minCount: 40 }));
  assertEquals(r, {
    status: "satisfied",
    detail: "A 127.0.1.1, 127.0.1.2, 127.0.1.3, 127.0.1.4, 127.0.1.5, … (40 records)",
  });
});

Deno.test("parseServer(), queryName() and normValue()", () => {
  assertEquals(parseServer("10.0.0.2"), { hostname: "10.0.0.2", port: 53 });
  assertEquals(parseServer("127.0.0.1:5353"), { hostname: "127.0.0.1", port: 5353 });
  assertEquals(parseServer("[::1]:5353"), { hostname: "::1", port: 5353 });
  assertEquals(parseServer("[fd00::2]"), { hostname: "fd00::2", port: 53 });
  assertEquals(parseServer("fd00::2"), { hostname: "fd00::2", port: 53 });
  assertEquals(parseServer("[FD00:0::2]:53"), { hostname: "fd00::2", port: 53 });
  // A host name is kept as a name (resolved on each attempt), lower-case without its dot.
  assertEquals(parseServer("dns.google"), { hostname: "dns.google", port: 53 });
  assertEquals(parseServer("NS1.Internal.:5353"), { hostname: "ns1.internal", port: 5353 });
  assertEquals(parseServer("localhost:53"), { hostname: "localhost", port: 53 });
  const bad = (text: string) => assertThrows(() => parseServer(text), Error).message;
  const form = "expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got";
  assertEquals(bad("[127.0.0.1]:53"), `${form} "[127.0.0.1]:53"`);
  assertEquals(bad("[dns.google]:53"), `${form} "[dns.google]:53"`);
  assertEquals(bad("1.2.3.400"), `${form} "1.2.3.400"`);
  assertEquals(bad("bad_host!:53"), `${form} "bad_host!:53"`);
  assertEquals(bad("a..b"), `${form} "a..b"`);
  assertEquals(bad("https://dns.google"), `${form} "https://dns.google"`);
  assertEquals(bad("1.2.3.4:0"), 'port must be from 1 to 65535, got "1.2.3.4:0"');
  assertEquals(queryName("10.1.2.3", "PTR"), "3.2.1.10.in-addr.arpa");
  assertEquals(
    queryName("2001:db8::1", "PTR"),
    "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa",
  );
  assertEquals(queryName("example.com.", "A"), "example.com");
  assertEquals(normValue("AAAA", "FD00:0::5"), "fd00::5");
  assertEquals(normValue("CNAME", "App.Test."), "app.test");
});

Deno.test("dns parse() reports malformed values and combinations as usage errors", (t) =>
  stepUsageErrors(t, "dns"));

Deno.test("dns parse() returns plain options: the query name, the resolver, the server", () => {
  assertEquals(optionsOf<DnsOptions>(["dns", "db.internal."]), {
    name: "db.internal",
    ...want({ wire: false }),
    server: undefined,
    transport: "udp",
  });
  const o = optionsOf<DnsOptions>(["dns", "10.1.2.3", "--type", "PTR", "--server", "[::1]:5353"]);
  assertEquals([o.name, o.wire, o.server], [
    "3.2.1.10.in-addr.arpa",
    true,
    { hostname: "::1", port: 5353 },
  ]);
  assertEquals(optionsOf<DnsOptions>(["dns", "gone.test", "--rcode", "NXDOMAIN"]).minCount, 0);
  // Enum values match case-insensitively (the engine's rule) and arrive canonical.
  assertEquals(optionsOf<DnsOptions>(["dns", "a.test", "--type", "a"]).type, "A");
});

Deno.test("a failed wire query is an error of the attempt, naming the server", async () => {
  // Sending to the broadcast address without SO_BROADCAST fails at once (EACCES).
  const probe = await probeOf(["dns", "a.test", "--server", "255.255.255.255"]);
  const error = await checkOnce(probe, new AbortController().signal).then(
    (r) => r.status === "pending" ? r.error : `resolved ${JSON.stringify(r)}`,
  );
  assertMatch(error, /^255\.255\.255\.255:53: /);
});

Deno.test("dns imports dns-packet when a wire resolver's probe is made, before the run's clock starts", async () => {
  const { dnsPacketLibrary } = await import("./wire.ts");
  dnsPacketLibrary.reset(); // as if never imported: other tests of this file may have
  await probeOf(["dns", "app.test", "--resolver", "wire", "--server", "127.0.0.1:53"]);
  const loaded = dnsPacketLibrary.peek();
  assertEquals(loaded === undefined, false, "dns-packet is not being imported");
  assertEquals(typeof (await loaded!).lib.encode, "function");
});

/** Hex text as bytes (record data as dns-packet hands over types it does not know). */
const unhex = (h: string) => Uint8Array.from(h.match(/../g)!.map((b) => parseInt(b, 16)));

Deno.test("svcbText() writes HTTPS/SVCB record data in RFC 9460's presentation form", () => {
  const rows: [string, string | undefined][] = [
    // ServiceMode, root target, alpn=h2,h3 port=8443.
    ["000100000100060268320268330003000220fb", "1 . alpn=h2,h3 port=8443"],
    // AliasMode: priority 0 and a target.
    ["0000036170700474657374" + "00", "0 app.test"],
    // mandatory, no-default-alpn, ipv4hint, ech, ipv6hint, dohpath, an unknown key.
    [
      "0002" + "035356430474657374" + "00" + "0000000400010003" + "00020000" +
      "000400080a0000050a000006" + "00050003616263" + "00060010fd000000000000000000000000000005" +
      "000700092f646e733f646e737d" + "03e70002ff41",
      "2 svc.test mandatory=alpn,port no-default-alpn ipv4hint=10.0.0.5,10.0.0.6 ech=YWJj ipv6hint=fd00::5 dohpath=/dns?dns} key999=\\255A",
    ],
    // An alpn id holding a comma is escaped.
    ["0001000001000403612c62", "1 . alpn=a\\,b"],
    // Not a record: cut short, a compression pointer, a port of 3 bytes.
    ["0001", undefined],
    ["0001c00c", undefined],
    ["000100000300030001bb", undefined],
  ];
  for (const [data, text] of rows) assertEquals(svcbText(unhex(data))?.text, text, data);
  assertEquals(svcbText(unhex("0001036170700474657374000003000220fb"))?.target, "app.test");
});

Deno.test("HTTPS records: --equals and --contains on the presentation", () => {
  const https = [makeRecord("HTTPS", unhex("000100000100060268320268330003000220fb"))];
  assertEquals(https[0]!.text, "1 . alpn=h2,h3 port=8443");
  for (const v of ["1 . alpn=h2,h3 port=8443", "1  .  ALPN=h2,h3 port=8443", "."]) {
    assertEquals(
      judgeLookup(answer(https), want({ type: "HTTPS", equals: [v] })).status,
      "satisfied",
    );
  }
  assertEquals(
    judgeLookup(answer(https), want({ type: "HTTPS", contains: ["alpn=", "h3", "port=8443"] })),
    { status: "satisfied", detail: "HTTPS 1 . alpn=h2,h3 port=8443" },
  );
  assertEquals(
    judgeLookup(answer(https), want({ type: "HTTPS", contains: ["port=443 "] })).status,
    "pending",
  );
  // Record data that is not an SVCB record is shown in RFC 3597's generic form.
  assertEquals(makeRecord("SVCB", unhex("0001")).text, "\\# 2 0001");
});

Deno.test("ANY: every answer record, as TYPE VALUE; --equals by value or TYPE VALUE", () => {
  const any = [
    makeRecord("ANY", "10.1.2.3", "A"),
    makeRecord("ANY", ["hello world"], "TXT"),
    makeRecord("ANY", unhex("000100000100060268320268330003000220fb"), "HTTPS"),
    makeRecord("ANY", { cpu: "RFC8482", os: "" }, "HINFO"),
  ];
  assertEquals(any.map((r) => r.text), [
    "A 10.1.2.3",
    'TXT "hello world"',
    "HTTPS 1 . alpn=h2,h3 port=8443",
    "HINFO RFC8482",
  ]);
  assertEquals(judgeLookup(answer(any.slice(0, 2)), want({ type: "ANY" })), {
    status: "satisfied",
    detail: 'ANY A 10.1.2.3, TXT "hello world"',
  });
  for (
    const v of [
      "10.1.2.3",
      "a 10.1.2.3",
      "hello world",
      'TXT "hello world"',
      "HINFO RFC8482",
      "rfc8482",
    ]
  ) {
    assertEquals(
      judgeLookup(answer(any), want({ type: "ANY", equals: [v] })).status,
      "satisfied",
      v,
    );
  }
  for (const v of ["TXT 10.1.2.3", "10.1.2.4", "Hello World"]) {
    assertEquals(judgeLookup(answer(any), want({ type: "ANY", equals: [v] })).status, "pending", v);
  }
  assertEquals(
    judgeLookup(answer(any), want({ type: "ANY", contains: ['txt "hello', "alpn=h2"] })).status,
    "satisfied",
  );
  assertEquals(normValue("ANY", "cname App.Test."), "CNAME app.test");
  assertEquals(packetType("HTTPS"), "UNKNOWN_65");
  assertEquals(packetType("SVCB"), "UNKNOWN_64");
  assertEquals(packetType("ANY"), "ANY");
  assertEquals(answerType("UNKNOWN_65"), "HTTPS");
  assertEquals(answerType("UNKNOWN_99"), "UNKNOWN_99");
});

Deno.test("dns parse(): HTTPS, SVCB, ANY and --transport imply wire; --contains repeats", () => {
  for (
    const args of [["--type", "HTTPS"], ["--type", "svcb"], ["--type", "ANY"], [
      "--transport",
      "tcp",
    ]]
  ) {
    assertEquals(optionsOf<DnsOptions>(["dns", "a.test", ...args]).wire, true, args.join(" "));
  }
  const o = optionsOf<DnsOptions>([
    ...["dns", "a.test", "--type", "TXT", "--contains", "a", "--contains", "b"],
    ...["--server", "ns.test:5353", "--transport", "TCP"],
  ]);
  assertEquals([o.contains, o.server, o.transport, o.wire], [
    ["a", "b"],
    { hostname: "ns.test", port: 5353 },
    "tcp",
    true,
  ]);
});

Deno.test("a --server name that does not resolve is a pending attempt naming it", async () => {
  const probe = await probeOf(["dns", "a.test", "--server", "no-such-server.invalid:5353"]);
  const r = await checkOnce(probe, new AbortController().signal);
  assertEquals(r.status, "pending");
  assertMatch(
    r.status === "pending" ? r.error : "",
    /^cannot resolve host no-such-server\.invalid: /,
  );
});

Deno.test("HTTPS --equals takes the record, the target or one parameter", () => {
  const https = [
    makeRecord("HTTPS", unhex("0001036170700474657374000001000602683202683300030002" + "20fb")),
  ];
  assertEquals(https[0]!.text, "1 app.test alpn=h2,h3 port=8443");
  for (
    const v of [
      "alpn=h3",
      "ALPN=h2",
      "alpn=h2,h3",
      "port=8443",
      "App.Test.",
      "1 app.test alpn=h2,h3 port=8443",
    ]
  ) {
    assertEquals(
      judgeLookup(answer(https), want({ type: "HTTPS", equals: [v] })).status,
      "satisfied",
      v,
    );
  }
  for (const v of ["alpn=h", "port=443", "alpn=h2,h3 port=8443", "other.test"]) {
    assertEquals(
      judgeLookup(answer(https), want({ type: "HTTPS", equals: [v] })).status,
      "pending",
      v,
    );
  }
});
