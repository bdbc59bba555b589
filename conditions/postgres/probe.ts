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
  attemptEveryAddress,
  attemptOnSocket,
  connectOrDescribe,
  type SessionInput,
} from "../_common/datastore_probe.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { DriverSessions } from "../_common/driver.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { judgeRows, type TextRows } from "../_common/sql.ts";
import { judgeError } from "./errors.ts";
import type { PostgresOptions } from "./mod.ts";
import { resolvePostgres } from "./resolve.ts";
import type { PgEndpoint, TargetSessionAttrs } from "./url.ts";

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
export function create(given: PostgresOptions, env: ProbeEnv): Probe {
  // Validated already (the kind's validate): a failure here cannot happen.
  const options = resolvePostgres(given, (_flag, message) => {
    throw new Error(message);
  });
  const sessions = new DriverSessions<PgSession>({
    end: (s) => s.client.end(),
    destroy: (s) => s.socket.destroy(),
  }, env.clock);
  return {
    check: ({ signal }) => everyHost(signal),
    close: () => sessions.close(),
  };

  /**
   * Each host in libpq's order (random with `load_balance_hosts=random`)
   * until one is satisfied; `prefer-standby` looks for a standby first, then
   * takes any server, as libpq does.
   */
  async function everyHost(signal: AbortSignal): Promise<ProbeResult> {
    const hosts = options.loadBalance ? shuffled(options.endpoints) : options.endpoints;
    const passes: TargetSessionAttrs[] = options.targetSessionAttrs === "prefer-standby"
      ? ["standby", "any"]
      : [options.targetSessionAttrs];
    const failed: { endpoint: PgEndpoint; result: ProbeResult & { status: "pending" } }[] = [];
    for (const attrs of passes) {
      for (const endpoint of hosts) {
        const result = await oneHost(endpoint, attrs, signal);
        if (result.status !== "pending") return result;
        if (!failed.some((f) => f.endpoint === endpoint)) failed.push({ endpoint, result });
      }
    }
    return combined(failed);
  }

  /** One host: every address of a TCP host, or the socket in a directory. */
  function oneHost(
    endpoint: PgEndpoint,
    attrs: TargetSessionAttrs,
    signal: AbortSignal,
  ): Promise<ProbeResult> {
    const run = (input: SessionInput) => attempt(input, endpoint, attrs);
    if (endpoint.socketDir === undefined) {
      return attemptEveryAddress({ ...options, hp: endpoint.hp }, signal, run, judgeError);
    }
    // No TLS on a Unix socket, as libpq.
    const o = { ...options, hp: endpoint.hp };
    return attemptOnSocket(o, endpoint.socketDir, false, signal, run, judgeError);
  }

  /** One address; in prefer mode, plain text when the server has no TLS. */
  async function attempt(
    input: SessionInput,
    endpoint: PgEndpoint,
    attrs: TargetSessionAttrs,
  ): Promise<ProbeResult> {
    try {
      return await session(input, endpoint, attrs);
    } catch (e) {
      if (
        options.tls.mode === "prefer" && input.tls !== undefined && e instanceof Error &&
        /does not support SSL/i.test(e.message)
      ) {
        return await session({ ...input, tls: undefined }, endpoint, attrs);
      }
      throw e;
    }
  }

  /**
   * The URL's client certificate (read at each attempt: a sidecar may still
   * be writing it) and TLS versions, as node:tls options.
   */
  async function tlsFiles(): Promise<Record<string, unknown>> {
    const c = options.clientCert;
    const x = options.tlsExtra;
    const root = options.rootCertFile;
    return {
      ...(root === undefined ? {} : { ca: await readUrlFile("sslrootcert", root) }),
      ...(c?.certFile === undefined ? {} : { cert: await readUrlFile("sslcert", c.certFile) }),
      ...(c?.keyFile === undefined ? {} : { key: await readUrlFile("sslkey", c.keyFile) }),
      ...(c?.passphrase === undefined ? {} : { passphrase: c.passphrase }),
      ...(x.minVersion === undefined ? {} : { minVersion: x.minVersion }),
      ...(x.maxVersion === undefined ? {} : { maxVersion: x.maxVersion }),
      ...(x.sni === false ? { servername: undefined } : {}),
    };
  }

  /** Connects, runs the checks and closes; throws what the driver throws. */
  async function session(
    { address, password, tls, signal }: SessionInput,
    endpoint: PgEndpoint,
    attrs: TargetSessionAttrs,
  ): Promise<ProbeResult> {
    const o = options;
    signal.throwIfAborted();
    const ssl = tls === undefined ? false : { ...tls, ...await tlsFiles() };
    signal.throwIfAborted();
    const socket = new Socket();
    const client = new pg.Client(
      {
        ...o.client,
        // A socket directory: pg connects to DIR/.s.PGSQL.PORT.
        host: endpoint.socketDir ?? address.hostname,
        port: address.port,
        user: o.user,
        database: o.database,
        // A function: pg then reads neither PGPASSWORD nor ~/.pgpass.
        password: () => Promise.resolve(password ?? ""),
        ssl,
        application_name: o.client.application_name ?? "waitcmd",
        keepAlive: false,
        ...(o.connectTimeoutMs === undefined
          ? {}
          : { connectionTimeoutMillis: o.connectTimeoutMs }),
        stream: () => socket,
      } as ConstructorParameters<typeof pg.Client>[0],
    );
    // A late socket error (after the verdict, after an abort) must not escape as unhandled.
    client.on("error", () => {});
    return sessions.run({ client, socket }, signal, async (_, state) => {
      await connectOrDescribe(() => client.connect(), o.hp.hostname);
      // Up: closing it says goodbye (Terminate) instead of waiting.
      state.up = true;
      const wrongKind = await sessionKind(client, attrs);
      if (wrongKind !== undefined) return { status: "pending", error: wrongKind };
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
        detail: `${verdict.detail} as ${o.user}@${o.database}${ON[attrs] ?? ""}${
          tls ? " over TLS" : ""
        }`,
      };
    });
  }
}

/** The detail's words for a `target_session_attrs` that held. */
const ON: Partial<Record<TargetSessionAttrs, string>> = {
  primary: " on a primary",
  standby: " on a standby",
  "read-write": " on a read-write server",
  "read-only": " on a read-only server",
};

/**
 * Why the server is not the kind of session `attrs` asks for, or undefined
 * when it is (libpq's checks: `pg_is_in_recovery()` for primary and standby,
 * `transaction_read_only` for read-write and read-only).
 */
async function sessionKind(
  client: InstanceType<typeof pg.Client>,
  attrs: TargetSessionAttrs,
): Promise<string | undefined> {
  if (attrs === "any" || attrs === "prefer-standby") return undefined;
  const text = attrs === "primary" || attrs === "standby"
    ? "SELECT pg_is_in_recovery()"
    : "SELECT current_setting('transaction_read_only')";
  const r = await client.query({ text, rowMode: "array", types: TEXT_TYPES });
  const value = r.rows[0]?.[0];
  if (attrs === "primary" && value !== "f") {
    return "the server is in recovery (a standby), not a primary";
  }
  if (attrs === "standby" && value !== "t") return "the server is a primary, not a standby";
  if (attrs === "read-write" && value !== "off") return "the server is read-only, not read-write";
  if (attrs === "read-only" && value !== "on") return "the server is read-write, not read-only";
  return undefined;
}

/** Several hosts that all failed: their common text, else each host's. */
function combined(
  failed: readonly { endpoint: PgEndpoint; result: ProbeResult & { status: "pending" } }[],
): ProbeResult {
  const first = failed[0]!.result;
  if (failed.every((f) => f.result.error === first.error)) return first;
  const error = failed.map((f) => {
    const host = hostText(f.endpoint);
    return f.result.error.includes(host) ? f.result.error : `${host}: ${f.result.error}`;
  }).join("; ");
  return { status: "pending", error, ...(first.hint === undefined ? {} : { hint: first.hint }) };
}

function hostText(endpoint: PgEndpoint): string {
  const { hostname, port } = endpoint.hp;
  if (endpoint.socketDir !== undefined) return `${hostname}/.s.PGSQL.${port}`;
  return hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A file a URL parameter names, read through the flags' cap; the error names the parameter. */
async function readUrlFile(param: string, path: string): Promise<string> {
  try {
    return await readFlagFile(param, path);
  } catch (e) {
    throw new Error((e as Error).message.replace(`--${param} `, `${param}=`));
  }
}
