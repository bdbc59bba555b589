/**
 * A real Apache Kafka broker for the kafka kind's tests: one KRaft node
 * (broker and controller in one JVM) from Kafka's own jars, fetched from
 * Maven Central by scripts/services/build-kafka.sh, on free 127.0.0.1 ports,
 * with a PLAINTEXT listener and a SASL_PLAINTEXT listener offering PLAIN,
 * SCRAM-SHA-256 and SCRAM-SHA-512 (PLAIN users in the listener's JAAS config;
 * SCRAM credentials written into the metadata log when the storage is
 * formatted, as `kafka-storage format --add-scram` does), its data in a
 * temporary directory.
 *
 * ```ts
 * const k = await prepareKafka({                           // formatted, not started
 *   users: { app: "pw" },
 *   scram: [{ mechanism: "SCRAM-SHA-256", user: "app", password: "s-pw" }],
 * });
 * await k.start();                                          // ~5-10 s
 * await k.createTopic("orders", 3);
 * await k.restart({ users: { app: "new-pw" } });           // same data, new users
 * await k.stop();
 * ```
 */

import {
  freePort,
  javaBuildMissing,
  reapOnExit,
  runBuildScript,
  type Service,
  sh,
  spawnService,
  waitUntil,
} from "../../tests/services/_util.ts";

/** The Kafka version the build script fetches (keep in step with build-kafka.sh). */
export const KAFKA_VERSION = "3.9.1";

/** The jars' directory (building it once, cached), or throws ServiceUnavailableError. */
export async function kafkaLib(): Promise<string> {
  return await runBuildScript("build-kafka.sh", `Kafka ${KAFKA_VERSION}`);
}

/** Why Kafka cannot be had here (no java, no mvn, no jars), or undefined. */
export function kafkaMissing(): Promise<string | undefined> {
  return javaBuildMissing(kafkaLib);
}

/** SASL/PLAIN users of the SASL listener: name -> password. */
export type KafkaUsers = Record<string, string>;

/** One SCRAM credential the broker stores (per user and mechanism). */
export interface ScramCredential {
  readonly mechanism: "SCRAM-SHA-256" | "SCRAM-SHA-512";
  readonly user: string;
  /**
   * The password; it goes into `--add-scram NAME=[...]`, whose value syntax
   * has no escapes, so it must not hold `"`, `,`, `=`, `[` or `]`.
   */
  readonly password: string;
}

/** A formatted broker, started or not. */
export interface Kafka {
  /** The PLAINTEXT listener's port. */
  readonly port: number;
  /** The SASL_PLAINTEXT listener's port (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512). */
  readonly saslPort: number;
  /** `127.0.0.1:PORT` of the PLAINTEXT listener. */
  readonly bootstrap: string;
  readonly dir: string;
  readonly logFile: string;
  /** Starts the broker; resolves once it answers a metadata request. */
  start(): Promise<void>;
  /** Stops the broker process (its data stays). */
  halt(): Promise<void>;
  /** halt(), then start() again, optionally with other SASL/PLAIN users (SCRAM ones stay). */
  restart(opts?: { users?: KafkaUsers }): Promise<void>;
  /** Creates a topic through the PLAINTEXT listener. */
  createTopic(name: string, partitions: number): Promise<void>;
  /** Stops the broker and removes `dir`. */
  stop(): Promise<void>;
}

/**
 * Writes the config, formats the storage (with the SCRAM credentials, if
 * any); `start()` runs the broker.
 */
export async function prepareKafka(
  opts: { users?: KafkaUsers; scram?: readonly ScramCredential[] } = {},
): Promise<Kafka> {
  for (const c of opts.scram ?? []) {
    if (/[",=[\]]/.test(c.password) || /[",=[\]]/.test(c.user)) {
      throw new Error(
        `SCRAM user or password of ${c.user} holds a character --add-scram can't take`,
      );
    }
  }
  const lib = await kafkaLib();
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-kafka-" });
  const reaper = reapOnExit(dir);
  const port = freePort();
  const saslPort = freePort();
  const controllerPort = freePort();
  const logFile = `${dir}/kafka.log`;
  const config = `${dir}/server.properties`;
  const writeConfig = (users: KafkaUsers) => {
    const jaas = Object.entries(users).map(([u, p]) => `user_${u}="${p}"`).join(" ");
    Deno.writeTextFileSync(
      config,
      [
        "process.roles=broker,controller",
        "node.id=1",
        `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
        `listeners=PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort},CONTROLLER://127.0.0.1:${controllerPort}`,
        `advertised.listeners=PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config=" +
        `org.apache.kafka.common.security.plain.PlainLoginModule required ${jaas};`,
        // Each enabled mechanism needs a login module on the listener; SCRAM's
        // (no options) checks clients against the credentials in the metadata log.
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=" +
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=" +
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "auto.create.topics.enable=false",
        "group.initial.rebalance.delay.ms=0",
        `log.dirs=${dir}/data`,
        "",
      ].join("\n"),
    );
  };
  writeConfig(opts.users ?? { app: "app-secret" });
  await Deno.writeTextFile(
    `${dir}/log4j.properties`,
    [
      "log4j.rootLogger=WARN, stdout",
      "log4j.appender.stdout=org.apache.log4j.ConsoleAppender",
      "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout",
      "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n",
      "",
    ].join("\n"),
  );
  const javaArgs = [
    "-Xmx320m",
    "-Xss1m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
    `-Dlog4j.configuration=file:${dir}/log4j.properties`,
    "-cp",
    `${lib}/*`,
  ];
  // A cluster id is 16 bytes in URL-safe base64 without padding.
  const id = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))))
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  // `--cluster-id=ID` in one word: an id starting with "-" (1 in 64) would read as an option.
  await sh("java", [
    ...javaArgs,
    "kafka.tools.StorageTool",
    "format",
    `--cluster-id=${id}`,
    "--config",
    config,
    // SCRAM users are metadata records: written here, before the first start,
    // the broker has them from its first moment (no kafka-configs round trip).
    ...(opts.scram ?? []).flatMap((c) => [
      "--add-scram",
      `${c.mechanism}=[name=${c.user},password="${c.password}"]`,
    ]),
  ]);

  let service: Service | undefined;
  const metadataAnswers = async (): Promise<boolean> => {
    const { Admin } = await import("@platformatic/kafka");
    const admin = new Admin({
      clientId: "waitcmd-tests",
      bootstrapBrokers: [`127.0.0.1:${port}`],
      retries: 0,
      connectTimeout: 1000,
      requestTimeout: 2000,
    });
    try {
      await admin.metadata({ topics: [] });
      return true;
    } catch {
      return false;
    } finally {
      await admin.close().catch(() => {});
    }
  };
  const k: Kafka = {
    port,
    saslPort,
    bootstrap: `127.0.0.1:${port}`,
    dir,
    logFile,
    async start() {
      if (service) return;
      service = spawnService("java", [...javaArgs, "kafka.Kafka", config], { logFile });
      reaper.setPids([service.pid]);
      await waitUntil(`kafka on 127.0.0.1:${port}`, metadataAnswers, {
        timeoutMs: 120_000,
        everyMs: 250,
        logFile,
      });
    },
    async halt() {
      const s = service;
      service = undefined;
      reaper.setPids([]);
      await s?.stop();
    },
    async restart(o = {}) {
      await k.halt();
      if (o.users) writeConfig(o.users);
      await k.start();
    },
    async createTopic(name, partitions) {
      const { Admin } = await import("@platformatic/kafka");
      const admin = new Admin({ clientId: "waitcmd-tests", bootstrapBrokers: [k.bootstrap] });
      try {
        await admin.createTopics({ topics: [name], partitions, replicas: 1 });
      } finally {
        await admin.close().catch(() => {});
      }
    },
    async stop() {
      await k.halt();
      reaper.release();
      if (!Deno.env.get("WAITCMD_KEEP_SERVICE_DIRS")) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
  return k;
}
