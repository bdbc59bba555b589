/**
 * The kafka kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { kafkaMissing, prepareKafka } from "./_service.ts";
import { DEAD_MARK, type KindSuite, MARK } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: [
      ...["kafka", `127.0.0.1:${d.silentTcp}`, "--sasl-mechanism", "plain", "--user", "app"],
      ...["--password-env", "CONF_KAFKA_PW"],
    ],
    env: { CONF_KAFKA_PW: DEAD_MARK },
  }),
  live: {
    needs: "Apache Kafka (KRaft)",
    missing: kafkaMissing,
    async make() {
      const k = await prepareKafka({ users: { app: "kafka-live-pw" } });
      const sasl = (pwEnv: string) => [
        ...["kafka", `127.0.0.1:${k.saslPort}`, "--sasl-mechanism", "plain", "--user", "app"],
        ...["--password-env", pwEnv],
      ];
      let up = false;
      return {
        satisfied: sasl("KAFKA_PW"),
        detail: /cluster \S+: 1 broker, SASL PLAIN as "app"/,
        pending: [...sasl("KAFKA_PW"), "--topic", "orders"],
        pendingError: 'topic "orders" does not exist (UNKNOWN_TOPIC_OR_PARTITION)',
        up: async () => {
          if (!up) await k.start();
          up = true;
        },
        down: async () => {
          await k.halt();
          up = false;
        },
        downError: `connection refused (127.0.0.1:${k.saslPort})`,
        wrong: {
          args: sasl("KAFKA_WRONG_PW"),
          error:
            'authentication failed for user "app": Authentication failed: Invalid username or password',
        },
        passwordFlags: { bare: sasl("x").slice(0, -2), password: "kafka-live-pw" },
        env: { KAFKA_PW: "kafka-live-pw", KAFKA_WRONG_PW: MARK },
        secrets: [MARK, "kafka-live-pw"],
        usage: [...sasl("KAFKA_WRONG_PW"), "--partitions", "2"],
        deadline: "2s",
        remove: () => k.stop(),
      };
    },
  },
  usage: [
    [
      ["kafka", "kafka://k:9092"],
      'expected HOST:PORT[,HOST:PORT...] (no scheme), got "kafka://k:9092"',
    ],
    [["kafka", "k1,,k2"], 'expected HOST:PORT[,HOST:PORT...], got "k1,,k2"'],
    [["kafka", "k:0"], 'port must be from 1 to 65535, got "0"'],
    [
      ["kafka", "k", "--sasl-mechanism", "gssapi"],
      '--sasl-mechanism: expected one of plain, scram-sha-256, scram-sha-512, got "gssapi"',
    ],
    [
      ["kafka", "k", "--sasl-mechanism", "plain", "--password-env", "PW"],
      "--sasl-mechanism: needs --user",
      { "PW": "x" },
    ],
    [
      ["kafka", "k", "--sasl-mechanism", "plain", "--user", "u"],
      "--sasl-mechanism: needs --password-env or --password-file",
    ],
    [["kafka", "k", "--user", "u"], "--user: needs --sasl-mechanism"],
    [["kafka", "k", "--password-env", "PW"], "--password-env: needs --sasl-mechanism and --user", {
      "PW": "x",
    }],
    [["kafka", "k", "--partitions", "3"], "--partitions: needs --topic"],
    [
      ["kafka", "k", "--topic", "a b"],
      "--topic: expected a topic name (letters, digits, '.', '_', '-'; at most 249), got \"a b\"",
    ],
    [
      ["kafka", "k", "--min-brokers", "0"],
      '--min-brokers: expected a whole number of at least 1, got "0"',
    ],
    [["kafka", "k", "--ca-file", "ca.pem"], "--ca-file: needs --tls"],
    [
      ["kafka", "kafka://h:9092"],
      'expected HOST:PORT[,HOST:PORT...] (no scheme), got "kafka://h:9092"',
    ],
    [
      ["kafka", "h", "--sasl-mechanism", "gssapi"],
      '--sasl-mechanism: expected one of plain, scram-sha-256, scram-sha-512, got "gssapi"',
    ],
    [
      ["kafka", "h", "--sasl-mechanism", "plain", "--password-env", "KPW"],
      "--sasl-mechanism: needs --user",
      { "KPW": "S3cr3t-kafka" },
    ],
    [["kafka", "h", "--partitions", "2"], "--partitions: needs --topic"],
  ],
};
