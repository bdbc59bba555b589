/**
 * mysql's probe: on each attempt, one `mysql2` connection (to each address
 * of the host in turn until one answers) logs in, runs the query and is
 * closed. No pool and no timers of the driver's own: nothing outlives the
 * attempt, and an abort destroys the connection at once.
 *
 * @module
 */

import mysql from "mysql2";
import { connect as netConnect } from "node:net";
import type { TLSSocket } from "node:tls";
import {
  attemptEveryAddress,
  attemptOnSocket,
  connectOrDescribe,
  type SessionInput,
} from "../_common/datastore_probe.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import type { NodeTlsOptions } from "../_common/datastore.ts";
import { DriverSessions } from "../_common/driver.ts";
import { canonicalIp } from "../_common/net.ts";
import { judgeRows, type TextRows } from "../_common/sql.ts";
import { judgeError } from "./errors.ts";
import type { MysqlOptions } from "./mod.ts";
import { resolveMysql } from "./resolve.ts";

/** The part of a mysql2 connection the probe uses. */
interface Connection {
  connect(cb: (err: Error | null) => void): void;
  query(sql: string, cb: (err: Error | null, result: unknown, fields: unknown) => void): void;
  end(cb: (err?: Error | null) => void): void;
  destroy(): void;
  on(event: "error", listener: (err: Error) => void): void;
}

/** Makes the probe of one mysql condition. */
export function create(given: MysqlOptions, env: ProbeEnv): Probe {
  // Validated already (the kind's validate): a failure here cannot happen.
  const o = resolveMysql(given, (_flag, message) => {
    throw new Error(message);
  });
  const sessions = new DriverSessions<Connection>({
    // COM_QUIT, once the queries before it are answered.
    end: (c) => new Promise<void>((resolve) => c.end(() => resolve())),
    destroy: (c) => c.destroy(),
  }, env.clock);
  return {
    check: ({ signal }) =>
      o.socketPath === undefined
        ? attemptEveryAddress(o, signal, attempt, judgeError)
        : attemptOnSocket(o, o.socketPath, true, signal, attempt, judgeError),
    close: () => sessions.close(),
  };

  /** One address; with the Go driver's `tls=preferred`, plain text when the server has no TLS. */
  async function attempt(input: SessionInput): Promise<ProbeResult> {
    try {
      return await session(input);
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      if (
        o.tls.mode === "prefer" && input.tls !== undefined && code === "HANDSHAKE_NO_SSL_SUPPORT"
      ) {
        return await session({ ...input, tls: undefined });
      }
      throw e;
    }
  }

  /** Connects, runs the query and closes; throws what the driver throws. */
  function session({ address, password, tls, signal }: SessionInput): Promise<ProbeResult> {
    signal.throwIfAborted();
    const socket = o.socketPath === undefined
      ? netConnect({ host: address.hostname, port: address.port })
      : netConnect({ path: o.socketPath });
    socket.setNoDelay(true);
    // The driver verifies the name of a DNS host itself; an IP address is checked below.
    const hostIsIp = canonicalIp(o.hp.hostname) !== undefined;
    const conn: Connection = mysql.createConnection({
      ...o.driver,
      // The host as typed: the driver takes the TLS server name from it.
      host: o.hp.hostname,
      port: address.port,
      stream: socket,
      user: o.user,
      password,
      database: o.database,
      ssl: tls === undefined ? undefined : {
        ...o.sslExtra,
        ...(tls.ca === undefined ? {} : { ca: tls.ca }),
        rejectUnauthorized: tls.rejectUnauthorized,
        verifyIdentity: o.tls.verify === "full" && !hostIsIp,
      },
      // Every column as the server's text (Buffers, decoded below); no driver timers.
      typeCast: false,
      rowsAsArray: true,
      multipleStatements: true,
      // No driver timer: the URL's connectTimeout is ours (below), cleared with the attempt.
      connectTimeout: 0,
    });
    // A late socket error (after the verdict, after an abort) must not escape as unhandled.
    conn.on("error", () => {});
    return sessions.run<ProbeResult>(conn, signal, async (_, state) => {
      await connectOrDescribe(
        () =>
          withinConnectTimeout(
            o.driver.connectTimeout as number | undefined,
            new Promise<void>((resolve, reject) => conn.connect((e) => e ? reject(e) : resolve())),
            () => conn.destroy(),
          ),
        o.hp.hostname,
      );
      // Up: closing it says goodbye (COM_QUIT) instead of waiting.
      state.up = true;
      if (tls !== undefined && o.tls.verify === "full" && hostIsIp) checkIpIdentity(conn, tls);
      const { result, fields } = await new Promise<{ result: unknown; fields: unknown }>(
        (resolve, reject) =>
          conn.query(
            o.sql.query ?? "SELECT 1",
            (err, result, fields) => {
              if (err && (err as { fatal?: boolean }).fatal) state.up = false;
              err ? reject(err) : resolve({ result, fields });
            },
          ),
      );
      const verdict = judgeRows(o.sql, lastRows(result, fields));
      if (!verdict.ok) return { status: "pending", error: verdict.error };
      const who = `${o.user}${o.database === undefined ? "" : `@${o.database}`}`;
      return {
        status: "satisfied",
        detail: `${verdict.detail} as ${who}${tls ? " over TLS" : ""}`,
      };
    });
  }
}

/**
 * `connecting`, failed with ETIMEDOUT (as the driver's own timer would) when it takes more than
 * the URL's `connectTimeout` milliseconds; `stop` ends the connection then. The timer is ours so
 * that it ends with the attempt, whatever the driver does.
 */
function withinConnectTimeout(
  ms: number | undefined,
  connecting: Promise<void>,
  stop: () => void,
): Promise<void> {
  if (!ms) return connecting;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stop();
      reject(Object.assign(new Error(`connect ETIMEDOUT after ${ms} ms (connectTimeout)`), {
        code: "ETIMEDOUT",
      }));
    }, ms);
  });
  return Promise.race([connecting, late]).finally(() => clearTimeout(timer));
}

/**
 * The certificate of a server reached by IP address must name that
 * address; the driver only checks DNS names. Throws the node:tls error.
 * mysql2 takes no `checkServerIdentity` of ours (sidorares/node-mysql2#2295,
 * open), so the check reads the TLS socket the driver keeps as `stream`.
 */
function checkIpIdentity(conn: Connection, tls: NodeTlsOptions): void {
  const socket = (conn as { stream?: TLSSocket }).stream;
  const cert = socket?.getPeerCertificate?.();
  if (!cert) return;
  const err = tls.checkServerIdentity("", cert);
  if (err) throw err;
}

/**
 * The rows of the last result set as text. With several statements the
 * driver gives one result per statement (and `fields` as a list of lists);
 * a statement without rows (UPDATE) gives none.
 */
function lastRows(result: unknown, fields: unknown): TextRows {
  const several = Array.isArray(fields) && fields.length > 0 && Array.isArray(fields[0]);
  const last = several && Array.isArray(result) ? result.at(-1) : result;
  if (!Array.isArray(last)) return [];
  const decoder = new TextDecoder();
  return last.map((row: unknown) =>
    (Array.isArray(row) ? row : []).map((v: unknown) =>
      v === null || v === undefined ? null : v instanceof Uint8Array ? decoder.decode(v) : String(v)
    )
  );
}
