/**
 * kafka: a Kafka cluster answers a metadata request through its bootstrap
 * servers, and optionally a topic exists with enough partitions and the
 * cluster has enough brokers (docs/contract.md §5 kafka).
 *
 * The probe talks to the cluster with `npm:@platformatic/kafka`, imported
 * only by probe.ts; `errors.ts` turns its nested errors into pending texts.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import { SESSION_READ_MAX, TLS_FLAGS, type TlsChoice, tlsChoice } from "../_common/datastore.ts";
import { PASSWORD_FLAGS, passwordFlags, type PasswordSource } from "../_common/dsurl.ts";
import { formatHostPort, type HostPort } from "../_common/net.ts";
import { parseBrokers } from "./brokers.ts";

/** SASL mechanisms, as typed and as Kafka names them. */
const MECHANISMS = {
  plain: "PLAIN",
  "scram-sha-256": "SCRAM-SHA-256",
  "scram-sha-512": "SCRAM-SHA-512",
} as const;

/** A SASL mechanism as Kafka names it. */
export type SaslMechanism = (typeof MECHANISMS)[keyof typeof MECHANISMS];

/** What a kafka condition needs. */
export interface KafkaOptions {
  /** The bootstrap servers, port 9092 where none was given. */
  readonly brokers: readonly HostPort[];
  /** --topic: the topic exists and each partition has a leader. */
  readonly topic: string | undefined;
  /** --partitions: the topic has at least this many partitions. */
  readonly partitions: number | undefined;
  /** --min-brokers: the cluster's metadata lists at least this many brokers. */
  readonly minBrokers: number | undefined;
  /** SASL authentication, when --sasl-mechanism is given. */
  readonly sasl:
    | {
      readonly mechanism: SaslMechanism;
      readonly user: string;
      readonly password: PasswordSource;
    }
    | undefined;
  readonly tls: TlsChoice;
}

/** Kafka's own limit on topic names: letters, digits, `.`, `_`, `-`, at most 249. */
const TOPIC = /^[A-Za-z0-9._-]{1,249}$/;

/** The kafka kind. */
export const kafka = defineKind<KafkaOptions>({
  name: "kafka",
  aliases: [],
  summary: "a Kafka cluster answers a metadata request, and a topic exists",
  description:
    "Connects to the first bootstrap server that answers (each in turn), authenticates when --sasl-mechanism is given, and asks for the cluster's metadata; the connections are closed after each attempt. With --topic, the topic must exist and every partition must have a leader; with --partitions, it must have at least N partitions; with --min-brokers, the cluster must list at least N brokers. Pending, with the broker's own text: refused or reset connections, a broker starting up, wrong credentials or a user not created yet (\"authentication failed for user ...\"), a SASL mechanism the broker does not offer, a missing topic or one whose partitions have no leader yet, TLS failures. Nothing is fatal. The password comes from --password-env or --password-file and never shows. --tls connects with TLS, verified against each broker's host name unless --insecure.",
  target: {
    shape: "required",
    placeholder: "HOST:PORT[,HOST:PORT...]",
    description:
      "bootstrap servers, comma-separated, each as the client reads one: host, host:port, [IPv6]:port or a bare IPv6 address; port 9092 when omitted; no scheme",
  },
  flags: [
    {
      name: "topic",
      type: "string",
      placeholder: "NAME",
      description: "the topic exists and each of its partitions has a leader",
    },
    {
      name: "partitions",
      type: "integer",
      min: 1,
      placeholder: "N",
      description: "with --topic: the topic has at least N partitions",
    },
    {
      name: "min-brokers",
      type: "integer",
      min: 1,
      placeholder: "N",
      description: "the cluster lists at least N brokers",
    },
    {
      name: "sasl-mechanism",
      type: "enum",
      values: Object.keys(MECHANISMS),
      placeholder: "MECHANISM",
      description: "authenticate with SASL; needs --user and --password-env or --password-file",
    },
    { name: "user", type: "string", placeholder: "NAME", description: "SASL user name" },
    ...PASSWORD_FLAGS,
    ...TLS_FLAGS,
  ],
  examples: [
    { args: "kafka kafka-1:9092,kafka-2:9092", description: "wait until the cluster answers" },
    {
      args: "kafka broker:9092 --topic orders --partitions 6 --min-brokers 3",
      description: "wait until the orders topic has 6 partitions on a 3-broker cluster",
    },
    {
      args:
        "kafka broker:9093 --tls --ca-file ca.pem --sasl-mechanism scram-sha-512 --user app --password-env PASSWORD",
      description: "the same over TLS with a SCRAM login",
    },
  ],
  parse(input) {
    const options = parseOptions(input);
    return { target: options.brokers.map(formatHostPort).join(","), options };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
});

function parseOptions(input: KindInput): KafkaOptions {
  let brokers: HostPort[] = [];
  try {
    brokers = parseBrokers(input.target ?? "");
  } catch (e) {
    input.fail(undefined, (e as Error).message);
  }

  const topic = input.string("topic");
  if (topic !== undefined && !TOPIC.test(topic)) {
    input.fail(
      "topic",
      `expected a topic name (letters, digits, '.', '_', '-'; at most 249), got ${
        JSON.stringify(topic)
      }`,
    );
  }
  const partitions = input.integer("partitions");
  if (partitions !== undefined && topic === undefined) input.fail("partitions", "needs --topic");

  const mechanism = input.string("sasl-mechanism") as keyof typeof MECHANISMS | undefined;
  const user = input.string("user");
  if (user === "") input.fail("user", "expected a user name, got an empty string");
  const password = passwordFlags(input);
  let sasl: KafkaOptions["sasl"];
  if (mechanism !== undefined) {
    if (user === undefined) input.fail("sasl-mechanism", "needs --user");
    if (password === undefined) {
      input.fail("sasl-mechanism", "needs --password-env or --password-file");
    }
    sasl = { mechanism: MECHANISMS[mechanism], user: user!, password: password! };
  } else {
    if (user !== undefined) input.fail("user", "needs --sasl-mechanism");
    if (password !== undefined) {
      input.fail(
        input.has("password-env") ? "password-env" : "password-file",
        "needs --sasl-mechanism and --user",
      );
    }
  }
  return {
    brokers,
    topic,
    partitions,
    minBrokers: input.integer("min-brokers"),
    sasl,
    tls: tlsChoice(input, {}, "--tls"),
  };
}
