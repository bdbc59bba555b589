import { assert, assertEquals } from "../../tests/_assert.ts";
import { optionsOf, parseError, plan } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { describeKafkaError, errorTree, judgeCluster } from "./errors.ts";
import type { KafkaOptions } from "./mod.ts";

Deno.test("kafka parse() reads the bootstrap list, port 9092 by default", () => {
  const o = optionsOf<KafkaOptions>(["kafka", "k1:9093, k2,[::1]:9094"]);
  assertEquals(o.brokers, [
    { hostname: "k1", port: 9093 },
    { hostname: "k2", port: 9092 },
    { hostname: "::1", port: 9094 },
  ]);
  assertEquals(plan(["kafka", "k1:9093,k2"]).conditions[0]!.name, "kafka k1:9093,k2:9092");
  assertEquals([o.topic, o.partitions, o.minBrokers, o.sasl, o.tls.mode], [
    undefined,
    undefined,
    undefined,
    undefined,
    "off",
  ]);
});

Deno.test("kafka parse() takes SASL with a user and a password from the environment", () => {
  const p = plan(
    [
      ...["kafka", "k:9092", "--sasl-mechanism", "scram-sha-512", "--user", "app"],
      ...["--password-env", "PW"],
    ],
    { PW: "kafka-pw-1" },
  );
  const o = p.conditions[0]!.options as KafkaOptions;
  assertEquals(o.sasl, {
    mechanism: "SCRAM-SHA-512",
    user: "app",
    password: { value: "kafka-pw-1" },
  });
  assertEquals(p.secrets, ["kafka-pw-1"]);
  const f = optionsOf<KafkaOptions>([
    ...["kafka", "k", "--sasl-mechanism", "plain", "--user", "app"],
    ...["--password-file", "/run/secrets/kafka"],
  ]);
  assertEquals(f.sasl?.password, { file: "/run/secrets/kafka" });
  const t = optionsOf<KafkaOptions>(["kafka", "k", "--tls", "--insecure", "--topic", "a.b_c-1"]);
  assertEquals([t.tls.mode, t.tls.verify, t.topic], ["on", "none", "a.b_c-1"]);
});

Deno.test("kafka parse() rejects bad targets and combinations", (t) => stepUsageErrors(t, "kafka"));

Deno.test("kafka --sasl-mechanism is an enum with a suggestion", () => {
  const line = parseError(["kafka", "k", "--sasl-mechanism", "scram-sha-265"]);
  assert(line.includes("scram-sha-256"), line);
});

/** An error tree as @platformatic/kafka 2.12 builds it for a refused SASL/PLAIN login. */
function refusedLogin(): Error {
  const protocol = Object.assign(new Error("SASL authentication failed."), {
    code: "PLT_KFK_PROTOCOL",
    apiId: "SASL_AUTHENTICATION_FAILED",
    apiCode: 58,
    serverErrorMessage: "Authentication failed: Invalid username or password",
  });
  const response = Object.assign(
    new Error("Received response with error while executing API SaslAuthenticate(v2)"),
    { code: "PLT_KFK_RESPONSE", errors: [protocol] },
  );
  const auth = Object.assign(new Error("SASL authentication failed."), {
    code: "PLT_KFK_AUTHENTICATION",
    cause: response,
  });
  const network = Object.assign(new Error("Connection to 127.0.0.1:9093 failed."), {
    code: "PLT_KFK_NETWORK",
    cause: auth,
  });
  return Object.assign(new Error("Cannot connect to any broker."), {
    code: "PLT_KFK_MULTIPLE",
    errors: [network],
  });
}

const ctx = { user: "app", topic: "orders", hostname: "k", secrets: ["kafka-pw-1"] };

Deno.test("errorTree() walks nested .errors and .cause once each", () => {
  const tree = errorTree(refusedLogin());
  assertEquals(tree.map((e) => e.code), [
    "PLT_KFK_MULTIPLE",
    "PLT_KFK_NETWORK",
    "PLT_KFK_AUTHENTICATION",
    "PLT_KFK_RESPONSE",
    "PLT_KFK_PROTOCOL",
  ]);
  const loop: { cause?: unknown } = {};
  loop.cause = loop;
  assertEquals(errorTree(loop).length, 1);
});

Deno.test("describeKafkaError() finds the cause in the driver's nested errors", async (t) => {
  const refused = (host: string) =>
    Object.assign(new Error(`Connection to ${host} failed.`), {
      code: "PLT_KFK_NETWORK",
      cause: Object.assign(new Error(`connect ECONNREFUSED ${host}`), { code: "ECONNREFUSED" }),
    });
  const rows: [unknown, string][] = [
    [
      refusedLogin(),
      'authentication failed for user "app": Authentication failed: Invalid username or password',
    ],
    [
      Object.assign(new Error("Cannot connect to any broker."), {
        errors: [refused("a:9092"), refused("b:9092")],
      }),
      "connection refused (a:9092, b:9092)",
    ],
    [
      Object.assign(new Error("Cannot connect to any broker."), {
        errors: [
          refused("a:9092"),
          Object.assign(new Error("Connection to b:9092 failed."), {
            cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
          }),
        ],
      }),
      "a:9092: connection refused; b:9092: connection reset by peer",
    ],
    [
      Object.assign(new Error("Unknown topic orders."), { code: "PLT_KFK_USER" }),
      'topic "orders" does not exist (UNKNOWN_TOPIC_OR_PARTITION)',
    ],
    [
      Object.assign(new Error("Cannot connect to any broker."), {
        errors: [
          Object.assign(new Error("Connection to a:9093 failed."), {
            cause: Object.assign(new Error("Cannot find a suitable SASL mechanism."), {
              code: "PLT_KFK_AUTHENTICATION",
              cause: Object.assign(new Error("Received response"), {
                errors: [
                  Object.assign(
                    new Error("The broker does not support the requested SASL mechanism."),
                    { code: "PLT_KFK_PROTOCOL", apiId: "UNSUPPORTED_SASL_MECHANISM", apiCode: 33 },
                  ),
                ],
              }),
            }),
          }),
        ],
      }),
      "SASL authentication failed: the broker does not support the requested SASL mechanism.",
    ],
    [
      Object.assign(new Error("Received response with error"), {
        errors: [
          Object.assign(new Error("There is no leader for this topic-partition."), {
            code: "PLT_KFK_PROTOCOL",
            apiId: "LEADER_NOT_AVAILABLE",
            apiCode: 5,
          }),
        ],
      }),
      "there is no leader for this topic-partition. (LEADER_NOT_AVAILABLE)",
    ],
    [
      Object.assign(new Error("Connection closed"), { code: "PLT_KFK_NETWORK" }),
      "connection closed by the broker",
    ],
    [
      Object.assign(new Error("Connection to a:9092 timed out."), { code: "PLT_KFK_TIMEOUT" }),
      "connection to a:9092 timed out",
    ],
  ];
  for (const [e, want] of rows) {
    await t.step(want, () => assertEquals(describeKafkaError(e, ctx), want));
  }
});

Deno.test("describeKafkaError() scrubs the password from any driver text", () => {
  const e = Object.assign(new Error("bad"), {
    code: "PLT_KFK_PROTOCOL",
    serverErrorMessage: "user app with kafka-pw-1 rejected",
  });
  assertEquals(describeKafkaError(e, ctx), "user app with *** rejected");
});

Deno.test("judgeCluster() checks brokers, the topic, its partitions and their leaders", () => {
  const view = (leaders?: number[], brokers = 3) => ({
    id: "Mk3",
    brokers,
    topic: leaders ? { name: "orders", leaders } : undefined,
  });
  const none = { topic: undefined, partitions: undefined, minBrokers: undefined };
  assertEquals(judgeCluster(view(), none), { ok: true, detail: "cluster Mk3: 3 brokers" });
  assertEquals(judgeCluster(view(undefined, 1), { ...none, minBrokers: 3 }), {
    ok: false,
    error: "the cluster lists 1 broker, waiting for at least 3",
  });
  const topic = { topic: "orders", partitions: 3, minBrokers: 3 };
  assertEquals(judgeCluster(view([1, 2, 3]), topic), {
    ok: true,
    detail: 'cluster Mk3: 3 brokers; topic "orders": 3 partitions',
  });
  assertEquals(judgeCluster(view([1]), topic), {
    ok: false,
    error: 'topic "orders" has 1 partition, waiting for at least 3',
  });
  assertEquals(judgeCluster(view([1, -1, 2, -1]), topic), {
    ok: false,
    error: 'topic "orders": 2 partitions without a leader (1, 3)',
  });
  assertEquals(judgeCluster(view(), topic), {
    ok: false,
    error: 'topic "orders" does not exist (UNKNOWN_TOPIC_OR_PARTITION)',
  });
});
