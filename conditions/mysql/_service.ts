/**
 * Throwaway MariaDB 10.11 servers (Debian's `mariadb-server` package) for the
 * mysql kind's tests. A template data directory is made once per test
 * process (mariadb-install-db with small InnoDB logs, a user `app` with a
 * password and a database `app`) and copied for each server. Each server
 * listens on 127.0.0.1 on a free port with its socket, PID file and log in
 * its own temporary directory, runs as the `mysql` user, and can be stopped,
 * started again on the same port, or given TLS.
 */

import {
  binariesMissing,
  dataTemplate,
  freePort,
  restartable,
  type Service,
  sh,
  spawnService,
  started,
  userinfo,
  waitUntil,
} from "../../tests/services/_util.ts";

/** The server binary. */
export const MARIADBD = "/usr/sbin/mariadbd";
/** The login user of the template and its password. */
export const MY_USER = "app";
export const MY_PASSWORD = "app-pw-4Rt";

/** Why MariaDB cannot run here, or undefined. */
export function mariadbMissing(): Promise<string | undefined> {
  return binariesMissing(MARIADBD, "/usr/bin/mariadb-install-db", "/usr/bin/mariadb");
}

/** Server options shared by the template's bootstrap and every server. */
const SMALL = ["--innodb-log-file-size=4M", "--innodb-buffer-pool-size=16M"];

function startServer(dir: string, data: string, port: number, extra: string[]): Service {
  return spawnService(MARIADBD, [
    "--no-defaults",
    `--datadir=${data}`,
    `--socket=${dir}/mysqld.sock`,
    `--pid-file=${dir}/mysqld.pid`,
    "--user=mysql",
    `--tmpdir=${dir}`,
    "--skip-log-bin",
    "--skip-name-resolve",
    ...SMALL,
    "--innodb-flush-log-at-trx-commit=0",
    "--skip-networking=0",
    `--port=${port}`,
    "--bind-address=127.0.0.1",
    `--log-error=${dir}/error.log`,
    ...extra,
  ], { logFile: `${dir}/mariadbd.out` });
}

function sqlAt(dir: string, sql: string): Promise<string> {
  return sh("mariadb", [
    "--no-defaults",
    "-S",
    `${dir}/mysqld.sock`,
    "-u",
    "root",
    "--batch",
    "--skip-column-names",
    "-e",
    sql,
  ]);
}

async function ready(dir: string, port: number): Promise<void> {
  await waitUntil(`mariadbd on 127.0.0.1:${port}`, async () => {
    await sqlAt(dir, "SELECT 1");
    // The TCP port too: the socket can answer a moment before.
    const c = await Deno.connect({ hostname: "127.0.0.1", port });
    c.close();
    return true;
  }, { timeoutMs: 30_000, everyMs: 50, logFile: `${dir}/error.log` });
}

const fromTemplate = dataTemplate("mysql", "waitcmd-mytemplate-", async (dir, data) => {
  await sh("mariadb-install-db", [
    "--no-defaults",
    `--datadir=${data}`,
    "--user=mysql",
    "--auth-root-authentication-method=socket",
    "--skip-test-db",
    ...SMALL,
  ]);
  const svc = startServer(dir, data, freePort(), []);
  try {
    await waitUntil("template mariadbd", async () => (await sqlAt(dir, "SELECT 1")) === "1", {
      timeoutMs: 30_000,
      everyMs: 50,
      logFile: `${dir}/error.log`,
    });
    await sqlAt(
      dir,
      `CREATE USER '${MY_USER}'@'%' IDENTIFIED BY '${MY_PASSWORD}'; CREATE DATABASE app; GRANT ALL ON app.* TO '${MY_USER}'@'%';`,
    );
  } finally {
    await svc.stop();
  }
});

/** Options of {@link makeMariadb}. */
export interface MariadbOptions {
  /** Start it now (default true); otherwise `start()` later. */
  start?: boolean;
  /** Serve TLS with this CA, certificate and key (PEM files). */
  tls?: { caFile: string; certFile: string; keyFile: string };
}

/** A throwaway MariaDB server. */
export interface Mariadb {
  readonly host: "127.0.0.1";
  readonly port: number;
  readonly dir: string;
  /** `mysql://user:password@127.0.0.1:PORT/db` (user and password percent-encoded). */
  url(user?: string, password?: string, db?: string): string;
  /** Runs SQL as root over the Unix socket; returns the batch output. */
  sql(sql: string): Promise<string>;
  /** Starts it (again, on the same port); resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (SIGTERM: a clean shutdown); the port refuses. */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/** Makes a MariaDB server from the template, started unless `start: false`. */
export async function makeMariadb(opts: MariadbOptions = {}): Promise<Mariadb> {
  const tls = opts.tls;
  const { dir, data } = await fromTemplate(
    "waitcmd-my-",
    tls ? [[tls.caFile, "ca.pem"], [tls.certFile, "server.crt"], [tls.keyFile, "server.key"]] : [],
  );
  const extra = tls
    ? [`--ssl-ca=${dir}/ca.pem`, `--ssl-cert=${dir}/server.crt`, `--ssl-key=${dir}/server.key`]
    : [];
  const port = freePort();
  const db: Mariadb = {
    ...restartable(dir, () => startServer(dir, data, port, extra), () => ready(dir, port)),
    host: "127.0.0.1",
    port,
    dir,
    url: (user = MY_USER, password = MY_PASSWORD, name = "app") =>
      `mysql://${userinfo(user, password)}@127.0.0.1:${port}/${name}`,
    sql: (text) => sqlAt(dir, text),
  };
  return await started(db, opts.start);
}
