/**
 * Throwaway PostgreSQL 15 servers (Debian's `postgresql` package) for the
 * postgres kind's tests. A template data directory is made once per test
 * process (initdb, a role `app` with a password, a database `app`) and
 * copied for each server, which keeps a start to well under a second.
 * Each server listens on 127.0.0.1 on a free port with its Unix socket in
 * its own temporary directory, runs as the `postgres` user (PostgreSQL
 * refuses root) through `setpriv`, and can be stopped, started again on the
 * same port, promoted from standby, or given TLS.
 *
 * ```ts
 * const pg = await makePostgres();            // started
 * await pg.psql("CREATE TABLE t (x int)");   // as the superuser, over the socket
 * pg.url("app", APP_PASSWORD)                 // postgres://app:...@127.0.0.1:PORT/app
 * await pg.remove();
 * ```
 */

import {
  binariesMissing,
  dataTemplate,
  freePort,
  killGroup,
  restartable,
  type Service,
  sh,
  spawnService,
  started,
  userinfo,
  waitUntil,
} from "../../tests/services/_util.ts";

/** Debian's PostgreSQL 15 binaries. */
export const PG_BIN = "/usr/lib/postgresql/15/bin";
/** The login role of the template and its password. */
export const PG_USER = "app";
export const PG_PASSWORD = "app-pw-7Hq";

/** Why PostgreSQL cannot run here, or undefined. */
export async function postgresMissing(): Promise<string | undefined> {
  const bin = await binariesMissing(`${PG_BIN}/postgres`);
  if (bin) return bin;
  try {
    await sh("id", ["postgres"]);
  } catch {
    return "no postgres user (the postgresql package makes it)";
  }
  return undefined;
}

/** Runs a command as the postgres user. */
function asPostgres(cmd: string, args: string[]): string[] {
  return ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", cmd, ...args];
}

const fromTemplate = dataTemplate("postgres", "waitcmd-pgtemplate-", async (dir, data) => {
  await sh(
    "setpriv",
    asPostgres(`${PG_BIN}/initdb`, [
      "-D",
      data,
      "-U",
      "postgres",
      "-E",
      "UTF8",
      "--auth-local=trust",
      "--auth-host=scram-sha-256",
      "-N",
    ]),
  );
  const port = freePort();
  const svc = startServer(dir, data, port, []);
  try {
    await ready(dir, port, svc.logFile);
    await psqlAt(dir, port, `CREATE ROLE ${PG_USER} LOGIN PASSWORD '${PG_PASSWORD}'`);
    await psqlAt(dir, port, `CREATE DATABASE app OWNER ${PG_USER}`);
  } finally {
    killGroup(svc.pid, "SIGINT");
    await svc.stop();
  }
});

function startServer(dir: string, data: string, port: number, extra: string[]): Service {
  return spawnService(
    "setpriv",
    asPostgres(`${PG_BIN}/postgres`, [
      "-D",
      data,
      "-p",
      String(port),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      `unix_socket_directories=${dir}`,
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "shared_buffers=16MB",
      "-c",
      "max_connections=40",
      ...extra,
    ]),
    { logFile: `${dir}/postgres.log` },
  );
}

async function ready(dir: string, port: number, logFile: string): Promise<void> {
  await waitUntil(
    `postgres on 127.0.0.1:${port}`,
    async () => {
      const out = await new Deno.Command(`${PG_BIN}/pg_isready`, {
        args: ["-h", dir, "-p", String(port), "-q"],
        stdout: "null",
        stderr: "null",
      }).output();
      return out.success;
    },
    { timeoutMs: 30_000, everyMs: 50, logFile },
  );
}

function psqlAt(dir: string, port: number, sql: string, db = "postgres"): Promise<string> {
  return sh(`${PG_BIN}/psql`, [
    "-h",
    dir,
    "-p",
    String(port),
    "-U",
    "postgres",
    "-d",
    db,
    "-v",
    "ON_ERROR_STOP=1",
    "-qAtc",
    sql,
  ]);
}

/** Options of {@link makePostgres}. */
export interface PostgresOptions {
  /** Start it now (default true); otherwise `start()` later. */
  start?: boolean;
  /** Make it a standby (in recovery, read-only) until `promote()`. */
  standby?: boolean;
  /** Serve TLS with this certificate and key (PEM files). */
  tls?: { certFile: string; keyFile: string };
}

/** A throwaway PostgreSQL server. */
export interface Postgres {
  readonly host: "127.0.0.1";
  readonly port: number;
  /** Its temporary directory (data, socket, log). */
  readonly dir: string;
  readonly logFile: string;
  /** `postgres://user:password@127.0.0.1:PORT/db` (user and password percent-encoded). */
  url(user?: string, password?: string, db?: string): string;
  /** Runs SQL as the superuser over the Unix socket; returns psql's unaligned output. */
  psql(sql: string, db?: string): Promise<string>;
  /** Starts it (again, on the same port); resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it fast (SIGINT): connections are closed, the port refuses. */
  stop(): Promise<void>;
  /** Promotes a standby to a primary. */
  promote(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/** Makes a PostgreSQL server from the template, started unless `start: false`. */
export async function makePostgres(opts: PostgresOptions = {}): Promise<Postgres> {
  const tls = opts.tls;
  const { dir, data } = await fromTemplate(
    "waitcmd-pg-",
    tls ? [[tls.certFile, "server.crt"], [tls.keyFile, "server.key"]] : [],
  );
  if (opts.standby) {
    await sh("setpriv", asPostgres("touch", [`${data}/standby.signal`]));
  }
  const extra = tls
    ? [
      "-c",
      "ssl=on",
      "-c",
      `ssl_cert_file=${dir}/server.crt`,
      "-c",
      `ssl_key_file=${dir}/server.key`,
    ]
    : [];
  const port = freePort();
  const server = restartable(
    dir,
    () => startServer(dir, data, port, extra),
    (svc) => ready(dir, port, svc.logFile),
    // SIGINT: a fast shutdown (connections closed at once).
    (svc) => killGroup(svc.pid, "SIGINT"),
  );
  const pg: Postgres = {
    ...server,
    host: "127.0.0.1",
    port,
    dir,
    logFile: `${dir}/postgres.log`,
    url: (user = PG_USER, password = PG_PASSWORD, db = "app") =>
      `postgres://${userinfo(user, password)}@127.0.0.1:${port}/${db}`,
    psql: (sql, db) => psqlAt(dir, port, sql, db),
    async promote() {
      await sh("setpriv", asPostgres(`${PG_BIN}/pg_ctl`, ["promote", "-w", "-D", data]));
    },
  };
  return await started(pg, opts.start);
}
