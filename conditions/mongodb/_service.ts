/**
 * Throwaway FerretDB servers (a MongoDB-wire-compatible server, built from
 * the Go module proxy by scripts/services/build-ferretdb.sh) for the mongodb
 * kind's tests of what the protocol stand-in (mongo.ts) cannot serve: SCRAM
 * logins, wrong passwords, authSource and TLS. Each server keeps its data
 * (sqlite handler) and state in its own temporary directory and listens on a
 * free loopback port, plain or TLS only; its one user `app` (password
 * {@link FERRET_PASSWORD}) is made at start in the database `app` by
 * FerretDB's setup flags. It reports MongoDB 7.0.x and answers as a
 * standalone, or, with `replSetName`, as the writable primary of that replica
 * set (FerretDB has no secondaries, elections or replica-set status).
 *
 * ```ts
 * const f = await makeFerret();            // started; makeFerret({ start: false }) is not
 * f.url();                                 // mongodb://app:PASSWORD@127.0.0.1:PORT/app
 * await f.command("app", { createUser: "late1", pwd: "pw", roles: [] });
 * await f.stop(); await f.start();         // same port, same data
 * await f.remove();
 * ```
 */

import {
  buildMissing,
  freePort,
  type Restartable,
  restartable,
  runBuildScript,
  spawnService,
  started,
  waitUntil,
} from "../../tests/services/_util.ts";

/** The user the setup flags create, its database and its password. */
export const FERRET_USER = "app";
export const FERRET_DB = "app";
export const FERRET_PASSWORD = "ferret-Pw-7Rt";

/** The FerretDB binary, building it once (about 1 min cold), or throws ServiceUnavailableError. */
export async function buildFerret(): Promise<string> {
  return await runBuildScript("build-ferretdb.sh", "FerretDB v1.24.2");
}

/** Why FerretDB cannot be had here (no Go toolchain, no module proxy, ...), or undefined. */
export function ferretMissing(): Promise<string | undefined> {
  return buildMissing(buildFerret);
}

/** Options of {@link makeFerret}. */
export interface FerretOptions {
  /** Start it now (default true); otherwise `start()` later. */
  start?: boolean;
  /**
   * Serve TLS only, with this certificate and key; with `clientCaFile`, FerretDB also asks every
   * client for a certificate that CA signed (and refuses one without).
   */
  tls?: { certFile: string; keyFile: string; clientCaFile?: string };
  /** Answer hello as the writable primary of this replica set (`setName`, `hosts`). */
  replSetName?: string;
}

/** A throwaway FerretDB server. */
export interface Ferret extends Restartable {
  readonly host: "127.0.0.1";
  readonly port: number;
  readonly dir: string;
  /** `mongodb://USER:PASSWORD@127.0.0.1:PORT/DB` (by default the setup user in `app`; TLS is the caller's to ask for). */
  url(user?: string, password?: string, db?: string): string;
  /** Runs a command in `db` as the setup user (over TLS when the server has it); its reply. */
  command(db: string, cmd: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** Makes a FerretDB server, started unless `start: false`. */
export async function makeFerret(opts: FerretOptions = {}): Promise<Ferret> {
  const bin = await buildFerret();
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-ferretdb-" });
  await Deno.mkdir(`${dir}/data`);
  const port = freePort();
  const addr = `127.0.0.1:${port}`;
  const args = [
    "--handler=sqlite",
    `--sqlite-url=file:${dir}/data/`,
    `--state-dir=${dir}`,
    // Its own debug listener would take 127.0.0.1:8088, which parallel servers share.
    "--debug-addr=-",
    "--telemetry=disable",
    "--log-level=warn",
    "--test-enable-new-auth",
    `--setup-database=${FERRET_DB}`,
    `--setup-username=${FERRET_USER}`,
    `--setup-password=${FERRET_PASSWORD}`,
    ...(opts.replSetName ? [`--repl-set-name=${opts.replSetName}`] : []),
    ...(opts.tls
      ? [
        "--listen-addr=",
        `--listen-tls=${addr}`,
        `--listen-tls-cert-file=${opts.tls.certFile}`,
        `--listen-tls-key-file=${opts.tls.keyFile}`,
        ...(opts.tls.clientCaFile ? [`--listen-tls-ca-file=${opts.tls.clientCaFile}`] : []),
      ]
      : [`--listen-addr=${addr}`]),
  ];
  const logFile = `${dir}/ferretdb.log`;
  const server = restartable(
    dir,
    () => spawnService(bin, args, { logFile, cwd: dir }),
    // The setup user is made before FerretDB listens: a connection accepted means it exists.
    () =>
      waitUntil(`ferretdb on ${addr}`, async () => {
        const c = await Deno.connect({ hostname: "127.0.0.1", port });
        c.close();
        return true;
      }, { timeoutMs: 30_000, everyMs: 50, logFile }),
  );
  const url = (user = FERRET_USER, password = FERRET_PASSWORD, db = FERRET_DB) =>
    `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${addr}/${db}`;
  const f: Ferret = {
    ...server,
    host: "127.0.0.1",
    port,
    dir,
    url,
    async command(db, cmd) {
      const { MongoClient } = await import("mongodb");
      const client = new MongoClient(url(), {
        serverSelectionTimeoutMS: 10_000,
        ...(opts.tls ? { tls: true, tlsAllowInvalidCertificates: true } : {}),
      });
      try {
        return await client.db(db).command(cmd);
      } finally {
        await client.close();
      }
    },
  };
  return await started(f, opts.start);
}
