/**
 * mongodb's probe: on each attempt, one MongoClient (one connection at most
 * per server, no retries of its own) sends hello and ping and is closed; an
 * abort closes it at once. The driver's server selection gives up after
 * 2 s, so an attempt ends by itself with the reason.
 *
 * @module
 */

import { MongoClient, type ReadPreferenceMode } from "mongodb";
import type { Fail, Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { DriverSessions } from "../_common/driver.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { readPassword } from "../_common/dsurl.ts";
import { describeMongoError } from "./errors.ts";
import { guardFraming } from "./framing.ts";
import { type HelloReply, judgeHello } from "./judge.ts";
import type { MongodbOptions } from "./mod.ts";
import { driverOptions } from "./options.ts";

/** Makes the probe of one mongodb condition. */
export async function create(options: MongodbOptions, env: ProbeEnv): Promise<Probe> {
  await guardFraming();
  // The client has no other way to drop its connections than close(): not awaited on abort.
  const sessions = new DriverSessions<MongoClient>({
    end: (c) => c.close(),
    destroy: (c) => void c.close().catch(() => {}),
  }, env.clock);
  const firstHost = /^[^:]+:\/\/(?:[^/?#]*@)?\[?([^\]:,/?#]*)/.exec(options.uri)?.[1] ?? "";
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const password = options.password === undefined
        ? undefined
        : await readPassword(options.password);
      const ca = options.tls.caFile === undefined
        ? undefined
        : await readFlagFile("ca-file", options.tls.caFile);
      signal.throwIfAborted();
      const client = new MongoClient(options.uri, driverOptions(options, password, ca));
      try {
        return await sessions.run(client, signal, async (_, state) => {
          // Closing is polite (and bounded by the grace) from the start: it also ends a connect.
          state.up = true;
          await client.connect();
          const admin = client.db("admin");
          const readPreference: ReadPreferenceMode = options.primary
            ? "primary"
            : "primaryPreferred";
          const hello = await helloOf(admin, readPreference);
          const verdict = judgeHello(hello, options);
          if (!verdict.ok) return { status: "pending", error: verdict.error };
          await admin.command({ ping: 1 }, { readPreference });
          const version = await admin.command({ buildInfo: 1 }, { readPreference })
            .then((b) => (typeof b.version === "string" ? `MongoDB ${b.version}, ` : ""))
            .catch(() => "");
          return { status: "satisfied", detail: `ping ok: ${version}${verdict.role}` };
        });
      } catch (e) {
        return {
          status: "pending",
          error: describeMongoError(e, {
            user: options.user,
            hostname: firstHost,
            secrets: [password],
          }),
        };
      }
    },
    close: () => sessions.close(),
  };
}

/**
 * Lets the driver parse the URI and options before anything is probed (a
 * usage error, exit 2): the constructor opens nothing, mongodb+srv:// is
 * resolved only on connect.
 */
export function validateUri(options: MongodbOptions, fail: Fail): Promise<void> {
  try {
    new MongoClient(options.uri, driverOptions(options, "placeholder", undefined));
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    fail(
      undefined,
      `the driver rejects the URI: ${message.charAt(0).toLowerCase()}${message.slice(1)}`,
    );
  }
  return Promise.resolve();
}

/** A database handle, as far as the probe uses it. */
interface Db {
  command(
    cmd: Record<string, unknown>,
    options: { readPreference: ReadPreferenceMode },
  ): Promise<Record<string, unknown>>;
}

/** `hello`, or the legacy `isMaster` on a server too old to know it (CommandNotFound). */
async function helloOf(admin: Db, readPreference: ReadPreferenceMode): Promise<HelloReply> {
  try {
    return await admin.command({ hello: 1 }, { readPreference });
  } catch (e) {
    if ((e as { code?: unknown }).code !== 59) throw e;
    return await admin.command({ isMaster: 1 }, { readPreference });
  }
}
