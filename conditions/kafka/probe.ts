/**
 * kafka's probe: on each attempt, one `@platformatic/kafka` admin client
 * asks a bootstrap server for the cluster's metadata (with the topic, when
 * there is one) and is closed. Its own retries are off (the runner
 * retries), so nothing outlives the attempt; an abort closes the client at
 * once.
 *
 * @module
 */

// Before the library: its schemas are then compiled when first used (lazy_ajv.ts).
import "./lazy_ajv.ts";
import { Admin, type AdminOptions } from "@platformatic/kafka";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { DriverSessions } from "../_common/driver.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { readPassword } from "../_common/dsurl.ts";
import { describeKafkaError, judgeCluster } from "./errors.ts";
import type { KafkaOptions } from "./mod.ts";

/** How long connecting to one broker (TCP, TLS, SASL) may take. */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long one request may wait for its answer. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The client's options for one attempt: the bootstrap servers as parsed
 * (brokers.ts), SASL from --sasl-mechanism/--user and the password, TLS
 * from --tls/--insecure/--ca-file; no retries, no topic creation.
 */
export function adminOptions(
  options: KafkaOptions,
  password: string | undefined,
  ca: string | undefined,
): AdminOptions {
  return {
    clientId: "waitcmd",
    bootstrapBrokers: options.brokers.map((b) => ({ host: b.hostname, port: b.port })),
    retries: 0,
    connectTimeout: CONNECT_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    autocreateTopics: false,
    ...(options.sasl === undefined ? {} : {
      sasl: {
        mechanism: options.sasl.mechanism,
        username: options.sasl.user,
        password: password!,
      },
    }),
    ...(options.tls.mode === "off" ? {} : {
      tls: {
        ...(ca === undefined ? {} : { ca }),
        rejectUnauthorized: options.tls.verify !== "none",
      },
    }),
  };
}

/** Makes the probe of one kafka condition. */
export function create(options: KafkaOptions, env: ProbeEnv): Probe {
  // The client has no other way to drop its connections than close(): not awaited on abort.
  const sessions = new DriverSessions<Admin>({
    end: (a) => a.closed ? Promise.resolve() : a.close(),
    destroy: (a) => {
      if (!a.closed) void a.close().catch(() => {});
    },
  }, env.clock);
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const password = options.sasl === undefined
        ? undefined
        : await readPassword(options.sasl.password);
      const ca = options.tls.caFile === undefined
        ? undefined
        : await readFlagFile("ca-file", options.tls.caFile);
      signal.throwIfAborted();
      const admin = new Admin(adminOptions(options, password, ca));
      try {
        return await sessions.run(admin, signal, async (_, state) => {
          // Closing is polite (and bounded by the grace) from the start.
          state.up = true;
          const md = await admin.metadata({
            topics: options.topic === undefined ? [] : [options.topic],
            autocreateTopics: false,
            forceUpdate: true,
          });
          const topic = options.topic === undefined ? undefined : md.topics.get(options.topic);
          const verdict = judgeCluster(
            {
              id: md.id,
              brokers: md.brokers.size,
              controllerId: md.controllerId,
              topic: topic === undefined ? undefined : {
                name: options.topic!,
                leaders: Array.from(
                  { length: topic.partitionsCount },
                  (_, i) => topic.partitions[i]?.leader ?? -1,
                ),
              },
            },
            options,
          );
          if (!verdict.ok) return { status: "pending", error: verdict.error };
          const tls = options.tls.mode === "off" ? "" : ", TLS";
          const sasl = options.sasl === undefined
            ? ""
            : `, SASL ${options.sasl.mechanism} as ${JSON.stringify(options.sasl.user)}`;
          return { status: "satisfied", detail: `${verdict.detail}${sasl}${tls}` };
        });
      } catch (e) {
        return {
          status: "pending",
          error: describeKafkaError(e, {
            user: options.sasl?.user,
            topic: options.topic,
            hostname: options.brokers[0]!.hostname,
            secrets: [password],
          }),
        };
      }
    },
    close: () => sessions.close(),
  };
}
