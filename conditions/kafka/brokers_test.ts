/**
 * Parity of the kafka target with the client's own reading
 * (`@platformatic/kafka`'s exported `parseBroker`, the oracle, which its
 * clients apply to each `bootstrapBrokers` string): for bootstrap server
 * forms from the client's and Kafka's documentation (`bootstrap.servers`:
 * `host1:port1,host2:port2,...`), what waitcmd extracts equals what the
 * client extracts from each comma-separated entry. Forms the client parses
 * into something no connection can use are refused by waitcmd as usage
 * errors; each such row checks that the client's result is indeed unusable.
 * The TLS and SASL flags are checked against the client's own option
 * validation.
 */

import { isIPv6 as nodeIsIPv6 } from "node:net";
import { Admin, allowedSASLMechanisms, parseBroker as clientParse } from "@platformatic/kafka";
import { assert, assertEquals } from "../../tests/_assert.ts";
import { optionsOf, usageError } from "../../tests/_kit.ts";
import { isIPv6, parseBrokers } from "./brokers.ts";
import type { KafkaOptions } from "./mod.ts";
import { adminOptions } from "./probe.ts";

/** What a target means: each bootstrap server's host and port. */
type Brokers = { host: string; port: number }[];

/** The client's reading of a comma list: its parser on each entry (it takes an array). */
function oracle(text: string): Brokers {
  return text.split(",").map((p) => {
    const b = clientParse(p.trim());
    return { host: b.host, port: b.port };
  });
}

function ours(text: string): Brokers {
  return parseBrokers(text).map((b) => ({ host: b.hostname, port: b.port }));
}

/** Whether a broker the client parsed names a host and port a connection can reach. */
function usable(b: { host: string; port: number }): boolean {
  return Number.isInteger(b.port) && b.port >= 1 && b.port <= 65535 && b.host !== "" &&
    !/[\s/]/.test(b.host) && (!b.host.includes(":") || nodeIsIPv6(b.host));
}

/** Forms the client takes, from its README (`localhost:9092`) and Kafka's `bootstrap.servers`. */
const ACCEPTED: string[] = [
  "localhost:9092",
  "localhost",
  "127.0.0.1:9092",
  "kafka-1:9092,kafka-2:9092,kafka-3:9092",
  "broker:29092",
  "my-cluster-kafka-bootstrap.kafka.svc.cluster.local:9092",
  "kafka-0.kafka-headless.default.svc:9093,kafka-1.kafka-headless.default.svc:9093",
  "b-1.msk.example.amazonaws.com:9098,b-2.msk.example.amazonaws.com:9098",
  "pkc-4nym6.us-east-1.aws.confluent.cloud:9092",
  "[::1]:9092",
  "[::1]",
  "[2001:db8::1]:9093",
  "::1",
  "2001:db8::1",
  "fe80::1%eth0",
  "[::1]:",
  "localhost:",
  "k1:9093, k2, [::1]:9094",
  "KAFKA:09092",
  "kafka_broker:9092",
];

Deno.test("kafka target parity with the client's parseBroker on documented forms", async (t) => {
  assert(ACCEPTED.length >= 15);
  for (const form of ACCEPTED) {
    await t.step(form, () => {
      const want = oracle(form);
      assert(want.every(usable), `the client's reading is unusable: ${JSON.stringify(want)}`);
      assertEquals(ours(form), want);
    });
  }
});

/** Forms the client parses into nothing it can connect to: usage errors naming the target. */
const REFUSED: [string, string][] = [
  ["kafka://k:9092", 'expected HOST:PORT[,HOST:PORT...] (no scheme), got "kafka://k:9092"'],
  ["PLAINTEXT://k:9092", "(no scheme)"],
  ["SASL_SSL://k:9093", "(no scheme)"],
  ["k:0", 'port must be from 1 to 65535, got "0"'],
  ["k:65536", 'port must be from 1 to 65535, got "65536"'],
  ["k:port", 'port must be from 1 to 65535, got "port"'],
  ["k:0x2384", 'port must be from 1 to 65535, got "0x2384"'],
  [":9092", 'expected HOST[:PORT] or [IPv6]:PORT, got ":9092"'],
  ["k:9092:1", 'expected HOST[:PORT] or [IPv6]:PORT, got "k:9092:1"'],
  ["[::1]:x", 'port must be from 1 to 65535, got "x"'],
  ["k1:9092,kafka://k2:9092", 'expected HOST[:PORT] or [IPv6]:PORT, got "kafka://k2:9092"'],
  ["k/x:9092", 'expected HOST[:PORT] or [IPv6]:PORT, got "k/x:9092"'],
  ["k 1:9092", 'expected HOST[:PORT] or [IPv6]:PORT, got "k 1:9092"'],
];

Deno.test("kafka target: what the client parses but cannot connect to is a usage error", async (t) => {
  for (const [form, part] of REFUSED) {
    await t.step(form, async () => {
      // Two forms the client would connect with, refused on purpose: a hex port (its Number()
      // reads 0x2384 as 9092; broker lists write decimal digits) and an empty host (node's net
      // connects to localhost then; `:9092` is a typo far more often than a wish for localhost).
      if (form !== "k:0x2384" && form !== ":9092") {
        assert(!oracle(form).every(usable), `the client can use ${form}: ${oracle(form)}`);
      }
      const e = await usageError(["kafka", form]);
      assert(e.startsWith("waitcmd: condition 1 (kafka): "), e);
      assert(e.includes(part), `${form}: ${e}`);
    });
  }
  for (const list of ["k1,,k2", "k1,", ",k1"]) {
    const e = await usageError(["kafka", list]);
    assert(e.includes(`expected HOST:PORT[,HOST:PORT...], got ${JSON.stringify(list)}`), e);
  }
});

Deno.test("kafka TLS and SASL flags become options the client's own validation accepts", () => {
  const mechanisms: [string, string][] = [
    ["plain", "PLAIN"],
    ["scram-sha-256", "SCRAM-SHA-256"],
    ["scram-sha-512", "SCRAM-SHA-512"],
  ];
  for (const [flag, name] of mechanisms) {
    assert((allowedSASLMechanisms as string[]).includes(name), name);
    const o = optionsOf<KafkaOptions>(
      ["kafka", "[::1]:9093,k", "--sasl-mechanism", flag, "--user", "app", "--password-env", "P"],
      { P: "pw" },
    );
    const opts = adminOptions(o, "pw", undefined);
    assertEquals(opts.sasl as unknown, { mechanism: name, username: "app", password: "pw" });
    assertEquals(opts.bootstrapBrokers, [{ host: "::1", port: 9093 }, { host: "k", port: 9092 }]);
    // The constructor validates the options against the client's schema (it connects lazily).
    void new Admin(opts).close();
  }
  const tls: [string[], Record<string, unknown> | undefined][] = [
    [[], undefined],
    [["--tls"], { rejectUnauthorized: true }],
    [["--tls", "--insecure"], { rejectUnauthorized: false }],
    [["--tls", "--ca-file", "/ca.pem"], { ca: "PEM", rejectUnauthorized: true }],
  ];
  for (const [flags, want] of tls) {
    const o = optionsOf<KafkaOptions>(["kafka", "k", ...flags]);
    const opts = adminOptions(o, undefined, o.tls.caFile === undefined ? undefined : "PEM");
    assertEquals(opts.tls as Record<string, unknown> | undefined, want);
    void new Admin(opts).close();
  }
});

Deno.test("kafka's IPv6 test says what node's net.isIPv6 says", () => {
  const samples = [
    "::1",
    "::",
    "1::",
    "2001:db8::1",
    "2001:DB8:0:0:8:800:200C:417A",
    "fe80::1%eth0",
    "fe80::1%",
    "fe80::1%eth 0",
    "fe80::1%25eth0",
    "::ffff:192.0.2.1",
    "::ffff:192.0.2.256",
    "::ffff:192.0.2.01",
    "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:1.2.3.4",
    "1::2::3",
    ":1",
    "1:",
    ":::",
    "12345::1",
    "g::1",
    "[::1]",
    "::1]/x[",
    "127.0.0.1",
    "localhost",
    "",
    ":",
  ];
  for (const s of samples) assertEquals(isIPv6(s), nodeIsIPv6(s), s);
});
