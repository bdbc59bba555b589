/**
 * The kafka kind end to end against a real Apache Kafka 3.9 broker (one
 * KRaft node from Kafka's own jars, PLAINTEXT and SASL_PLAINTEXT listeners),
 * for what is kafka's own: a bootstrap list, a topic created late,
 * partitions and brokers too few, SASL/SCRAM-SHA-256 and -512 against
 * credentials the broker stores (right, wrong, and for a user the broker
 * has none for), refused bootstrap servers, and usage errors. A broker
 * started late or restarted, SASL/PLAIN with a right and a wrong password,
 * --password-env and --password-file, the human line, the JSON report and
 * the password in no output are the live conformance suite's
 * (tests/conformance/live_test.ts).
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { usageRows } from "../../tests/_suite.ts";
import { type Kafka, kafkaMissing, prepareKafka, type ScramCredential } from "./_service.ts";
import {
  assertKindUsageErrors,
  cliTest,
  runCli,
  runJson,
  runLate,
  timing,
} from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/kafka/_suite.ts). */
const USAGE = await usageRows("kafka");

const FAST = ["--timeout", "120s", "--interval", "300ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const PLAIN_PW = "kafka-plain-pw-1";
// One password per mechanism, so a step can tell which credential the broker checked.
const SCRAM_256_PW = "kafka-scram256-pw-3";
const SCRAM_512_PW = "kafka-scram512-pw-4";
const ONLY_256_PW = "kafka-only256-pw-5";
const SCRAM: ScramCredential[] = [
  { mechanism: "SCRAM-SHA-256", user: "app", password: SCRAM_256_PW },
  { mechanism: "SCRAM-SHA-512", user: "app", password: SCRAM_512_PW },
  // A user with SCRAM-SHA-256 credentials and none for SCRAM-SHA-512.
  { mechanism: "SCRAM-SHA-256", user: "only256", password: ONLY_256_PW },
];
const SCRAM_CASES = [
  { flag: "scram-sha-256", name: "SCRAM-SHA-256", pw: SCRAM_256_PW, otherPw: SCRAM_512_PW },
  { flag: "scram-sha-512", name: "SCRAM-SHA-512", pw: SCRAM_512_PW, otherPw: SCRAM_256_PW },
] as const;
const SHORT = ["--timeout", "2s", "--interval", "300ms"];

function assertNoSecret(texts: string[], secret: string) {
  for (const t of texts) assert(!t.includes(secret), `the password leaked:\n${t}`);
}

Deno.test({
  name: "kafka kind against a real Kafka broker (KRaft)",
  ignore: ignoreWithout("kafka", await kafkaMissing()),
  ...opts,
  fn: kafkaTests,
});

async function kafkaTests(t: Deno.TestContext) {
  const k: Kafka = await prepareKafka({ users: { app: PLAIN_PW }, scram: SCRAM });
  const sasl = `127.0.0.1:${k.saslPort}`;
  try {
    await k.start();
    await t.step(
      "a bootstrap list with a dead address: one answering broker suffices",
      async () => {
        const j = await runJson([...FAST, "kafka", `${k.bootstrap},127.0.0.1:1`]);
        assertEquals([j.code, j.stderr], [0, ""]);
        assertEquals(j.json.conditions[0]!.name, `kafka ${k.bootstrap},127.0.0.1:1`);
        assertMatch(j.json.conditions[0]!.detail, /^cluster \S+: 1 broker$/);
      },
    );

    await t.step(
      "the client's broker forms: a bare IPv6 address and an empty port are port 9092",
      async () => {
        const j = await runJson([...FAST, "kafka", `::1,localhost:, ${k.bootstrap}`]);
        assertEquals([j.code, j.stderr], [0, ""]);
        assertEquals(
          j.json.conditions[0]!.name,
          `kafka [::1]:9092,localhost:9092,${k.bootstrap}`,
        );
      },
    );

    await t.step("a topic created late: pending while unknown, then satisfied", async () => {
      const r = await runLate(
        [...FAST, "kafka", k.bootstrap, "--topic", "orders", "--partitions", "3"],
        () => k.createTopic("orders", 3),
      );
      assertEquals(r.code, 0, r.stderr);
      assertEquals(
        r.attempts[0]!.error,
        'topic "orders" does not exist (UNKNOWN_TOPIC_OR_PARTITION)',
      );
      assertMatch(r.report.conditions[0]!.detail, /; topic "orders": 3 partitions$/);
    });

    await t.step("too few partitions or brokers: timeout naming the numbers", async () => {
      const r = await runJson([
        ...SHORT,
        ...["kafka", k.bootstrap, "--topic", "orders", "--partitions", "5"],
        ...["--", "kafka", k.bootstrap, "--min-brokers", "3"],
      ]);
      assertEquals([r.code, r.json.status], [1, "timeout"]);
      assertEquals(r.json.conditions.map((c) => c.last_error), [
        'topic "orders" has 3 partitions, waiting for at least 5',
        "the cluster lists 1 broker, waiting for at least 3",
      ]);
    });

    for (const c of SCRAM_CASES) {
      await t.step(`SASL/${c.name} with the right password; it shows nowhere`, async () => {
        const args = [...FAST, "kafka", sasl, "--sasl-mechanism", c.flag, "--user", "app"];
        const env = { KPW: c.pw };
        const j = await runJson([...args, "--password-env", "KPW"], { env });
        assertEquals([j.code, j.stderr], [0, ""]);
        assertEquals(j.json.status, "satisfied");
        assertEquals(j.json.conditions[0]!.attempts, 1);
        assertMatch(
          j.json.conditions[0]!.detail,
          new RegExp(`^cluster \\S+: 1 broker, SASL ${c.name} as "app"$`),
        );
        const txt = await runCli([...args, "--password-env", "KPW"], { env });
        assertEquals([txt.code, txt.stdout], [0, ""]);
        assertStringIncludes(txt.stderr, `1 broker, SASL ${c.name} as "app"`);
        assertNoSecret([j.stdout, j.stderr, txt.stdout, txt.stderr], c.pw);
      });

      await t.step(
        `SASL/${c.name} with a wrong password: pending, then exit 1, never showing it`,
        async () => {
          // The wrong password is the other mechanism's right one: the broker
          // keeps a credential per mechanism, and neither may leak.
          const args = [
            ...SHORT,
            ...["kafka", sasl, "--sasl-mechanism", c.flag, "--user", "app"],
            ...["--password-env", "KPW"],
          ];
          const env = { KPW: c.otherPw };
          const j = await runJson(args, { env });
          assertEquals([j.code, j.stderr], [1, ""]);
          assertEquals(j.json.status, "timeout");
          const cond = j.json.conditions[0]!;
          assertEquals([cond.satisfied, cond.detail], [false, ""]);
          assert(cond.attempts >= 2, `retried while pending: ${cond.attempts} attempts`);
          assertEquals(
            cond.last_error,
            'authentication failed for user "app": Authentication failed during authentication ' +
              `due to invalid credentials with SASL mechanism ${c.name}`,
          );
          const txt = await runCli(args, { env });
          assertEquals([txt.code, txt.stdout], [1, ""]);
          assertStringIncludes(
            txt.stderr,
            `not satisfied: kafka ${sasl}: authentication failed for user "app"`,
          );
          assertNoSecret([j.stdout, j.stderr, txt.stdout, txt.stderr], c.otherPw);
          assertNoSecret([j.stdout, j.stderr, txt.stdout, txt.stderr], c.pw);
        },
      );
    }

    await t.step(
      "users without credentials for a mechanism are refused by the broker",
      async () => {
        const run = (mechanism: string, user: string, pw: string) =>
          runJson(
            [
              ...SHORT,
              ...["kafka", sasl, "--sasl-mechanism", mechanism, "--user", user],
              ...["--password-env", "KPW"],
            ],
            { env: { KPW: pw } },
          );
        // The control: only256 and its password pass with the mechanism it has.
        const ok = await run("scram-sha-256", "only256", ONLY_256_PW);
        assertEquals([ok.code, ok.stderr, ok.json.status], [0, "", "satisfied"]);
        assertMatch(ok.json.conditions[0]!.detail, /, SASL SCRAM-SHA-256 as "only256"$/);
        assertNoSecret([ok.stdout], ONLY_256_PW);
        // only256 has no SCRAM-SHA-512 credential, and app's PLAIN password is
        // no SCRAM credential: the broker refuses both, the run stays pending.
        const refused: [string, string][] = [["only256", ONLY_256_PW], ["app", PLAIN_PW]];
        for (const [user, pw] of refused) {
          const r = await run("scram-sha-512", user, pw);
          assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
          assertEquals(
            r.json.conditions[0]!.last_error,
            `authentication failed for user "${user}": Authentication failed during ` +
              "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
          );
          assertNoSecret([r.stdout], pw);
        }
      },
    );
  } finally {
    await k.stop();
  }
}

cliTest(
  "kafka kind: usage errors through the CLI, never showing the password",
  () => assertKindUsageErrors("kafka", USAGE, { secrets: ["S3cr3t-kafka"] }),
);

cliTest("kafka kind: refused bootstrap servers time out with each address", async () => {
  const r = await runJson([...timing("1500ms", "300ms"), "kafka", "127.0.0.1:1,127.0.0.1:2"]);
  assertEquals([r.code, r.stderr], [1, ""]);
  assertEquals(r.json.conditions[0]!.last_error, "connection refused (127.0.0.1:1, 127.0.0.1:2)");
});

cliTest(
  "kafka kind: a listener name or a port the client cannot use is exit 2 naming the target",
  async () => {
    for (
      const [target, message] of [
        ["SASL_SSL://127.0.0.1:9093", '(no scheme), got "SASL_SSL://127.0.0.1:9093"'],
        ["127.0.0.1:0x2384", 'port must be from 1 to 65535, got "0x2384"'],
        ["127.0.0.1:9092:1", 'expected HOST[:PORT] or [IPv6]:PORT, got "127.0.0.1:9092:1"'],
      ]
    ) {
      const r = await runCli(["kafka", target!]);
      assertEquals([r.code, r.stdout], [2, ""]);
      assertEquals(
        r.stderr,
        `waitcmd: condition 1 (kafka): ${
          message!.startsWith("(") ? `expected HOST:PORT[,HOST:PORT...] ${message}` : message
        } (see: waitcmd help kafka)\n`,
      );
    }
  },
);
