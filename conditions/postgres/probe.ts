/**
 * postgres's probe: on each attempt, one `pg` client connects (to each
 * address of the host in turn until one answers), logs in, runs the checks
 * and is closed. No pool, no reconnects: nothing outlives the attempt, and
 * an abort destroys the connection at once.
 *
 * @module
 */

import pg from "pg";
import { Socket } from "node:net";
import {
  connectOrDescribe,
  dataStoreProbe,
  type SessionInput,
} from "../_common/datastore_probe.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { DriverSessions } from "../_common/driver.ts";
import { judgeRows, type TextRows } from "../_common/sql.ts";
import { judgeError } from "./errors.ts";
import type { PostgresOptions } from "./mod.ts";

/** Every column as the server's text, never parsed into numbers or dates. */
const TEXT_TYPES = { getTypeParser: () => (value: string) => value };

/**
 * One session: the client, and the socket it runs on. The socket is ours (pg's `stream`
 * option), so an abort destroys it without reaching into the client.
 */
interface PgSession {
  readonly client: InstanceType<typeof pg.Client>;
  readonly socket: Socket;
}

/** Makes the probe of one postgres condition. */
export function create(options: PostgresOptions, env: ProbeEnv): Probe {
  const sessions = new DriverSessions<PgSession>({
    end: (s) => s.client.end(),
    destroy: (s) => s.socket.destroy(),
  }, env.clock);
  return dataStoreProbe(options, sessions, attempt, judgeError);

  /** One address; in prefer mode, plain text when the server has no TLS. */
  async function attempt(input: SessionInput): Promise<ProbeResult> {
    try {
      return await session(input);
    } catch (e) {
      if (
        options.tls.mode === "prefer" && input.tls !== undefined && e instanceof Error &&
        /does not support SSL/i.test(e.message)
      ) {
        return await session({ ...input, tls: undefined });
      }
      throw e;
    }
  }

  /** Connects, runs the checks and closes; throws what the driver throws. */
  function session({ address, password, tls, signal }: SessionInput): Promise<ProbeResult> {
    const o = options;
    signal.throwIfAborted();
    const socket = new Socket();
    const client = new pg.Client({
      host: address.hostname,
      port: address.port,
      user: o.user,
      database: o.database,
      // A function: pg then reads neither PGPASSWORD nor ~/.pgpass.
      password: () => Promise.resolve(password ?? ""),
      ssl: tls ?? false,
      application_name: "waitcmd",
      keepAlive: false,
      stream: () => socket,
    });
    // A late socket error (after the verdict, after an abort) must not escape as unhandled.
    client.on("error", () => {});
    return sessions.run({ client, socket }, signal, async (_, state) => {
      await connectOrDescribe(() => client.connect(), o.hp.hostname);
      // Up: closing it says goodbye (Terminate) instead of waiting.
      state.up = true;
      if (o.primary) {
        const r = await client.query({
          text: "SELECT pg_is_in_recovery()",
          rowMode: "array",
          types: TEXT_TYPES,
        });
        if (r.rows[0]?.[0] !== "f") {
          return {
            status: "pending",
            error: "the server is in recovery (a standby), not a primary",
          };
        }
      }
      const result = await client.query({
        text: o.sql.query ?? "SELECT 1",
        rowMode: "array",
        types: TEXT_TYPES,
      });
      // Several statements give one result each; the last one counts.
      const last = Array.isArray(result) ? result.at(-1) : result;
      const rows = (last?.rows ?? []) as TextRows;
      const verdict = judgeRows(o.sql, rows);
      if (!verdict.ok) return { status: "pending", error: verdict.error };
      return {
        status: "satisfied",
        detail: `${verdict.detail} as ${o.user}@${o.database}${o.primary ? " on a primary" : ""}${
          tls ? " over TLS" : ""
        }`,
      };
    });
  }
}
