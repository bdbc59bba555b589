/**
 * Throwaway Redis 7 servers (Debian's `redis-server` package) for the redis
 * kind's tests. Each listens on 127.0.0.1 on a free port with its config,
 * dump file and log in its own temporary directory. The default user is
 * off; every client logs in as the ACL user `app`. A server can be stopped
 * and started again on the same port (keeping its dataset when it was
 * saved), made a replica, served over TLS, or slowed down while it loads
 * its dataset (`key-load-delay`, to see LOADING).
 */

import {
  binariesMissing,
  freePort,
  restartable,
  sh,
  spawnService,
  started,
  waitUntil,
} from "../../tests/services/_util.ts";

/** The server binary. */
export const REDIS_SERVER = "/usr/bin/redis-server";
/** The ACL user every client logs in as, and its password. */
export const REDIS_USER = "app";
export const REDIS_PASSWORD = "app-pw-9Kd";

/** Why Redis cannot run here, or undefined. */
export function redisMissing(): Promise<string | undefined> {
  return binariesMissing(REDIS_SERVER, "/usr/bin/redis-cli");
}

/** Options of {@link makeRedis}. */
export interface RedisOptions {
  /** Start it now (default true); otherwise `start()` later. */
  start?: boolean;
  /** Serve TLS (only TLS) with this CA, certificate and key. */
  tls?: { caFile: string; certFile: string; keyFile: string };
  /** Replicate this server (a replica: ROLE says slave). */
  replicaOf?: { port: number };
}

/** A throwaway Redis server. */
export interface Redis {
  readonly host: "127.0.0.1";
  readonly port: number;
  readonly dir: string;
  /** The Unix socket it also listens on. */
  readonly socket: string;
  /** `redis://app:PASSWORD@127.0.0.1:PORT[/db]` (or rediss:// with TLS). */
  url(user?: string, password?: string, db?: number): string;
  /** Runs a command as `app` (over TLS when the server has it); returns redis-cli's output. */
  cli(...args: string[]): Promise<string>;
  /** Starts it (again, on the same port) with extra config lines; resolves once PING answers. */
  start(extraConfig?: string[]): Promise<void>;
  /** Starts it without waiting for PING to answer (it may still be loading). */
  launch(extraConfig?: string[]): Promise<void>;
  /** Stops it (SIGTERM; no save: `save ""`). */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/** Makes a Redis server, started unless `start: false`. */
export async function makeRedis(opts: RedisOptions = {}): Promise<Redis> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-redis-" });
  const port = freePort();
  const scheme = opts.tls ? "rediss" : "redis";
  const base = [
    opts.tls ? "port 0" : `port ${port}`,
    ...(opts.tls
      ? [
        `tls-port ${port}`,
        `tls-cert-file ${opts.tls.certFile}`,
        `tls-key-file ${opts.tls.keyFile}`,
        `tls-ca-cert-file ${opts.tls.caFile}`,
        "tls-auth-clients no",
        "tls-replication yes",
      ]
      : []),
    "bind 127.0.0.1",
    // The socket too, for unix:// targets (a short path: sun_path holds 107 bytes).
    `unixsocket ${dir}/redis.sock`,
    "unixsocketperm 700",
    'save ""',
    "appendonly no",
    `dir ${dir}`,
    "dbfilename dump.rdb",
    `logfile ${dir}/redis.log`,
    "enable-debug-command local",
    "user default off",
    `user ${REDIS_USER} on >${REDIS_PASSWORD} ~* &* +@all`,
    ...(opts.replicaOf
      ? [
        `replicaof 127.0.0.1 ${opts.replicaOf.port}`,
        `masteruser ${REDIS_USER}`,
        `masterauth ${REDIS_PASSWORD}`,
      ]
      : []),
  ];
  const cliArgs = (args: string[]) => [
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "--user",
    REDIS_USER,
    "--pass",
    REDIS_PASSWORD,
    "--no-auth-warning",
    ...(opts.tls ? ["--tls", "--cacert", opts.tls.caFile] : []),
    ...args,
  ];
  /** The extra config lines of the next start, and whether that start waits for PING. */
  let next = { extra: [] as string[], wait: true };
  const server = restartable(
    dir,
    async () => {
      const conf = `${dir}/redis.conf`;
      await Deno.writeTextFile(conf, [...base, ...next.extra, ""].join("\n"));
      return spawnService(REDIS_SERVER, [conf], { logFile: `${dir}/redis.out` });
    },
    () =>
      next.wait
        ? waitUntil(`redis on 127.0.0.1:${port}`, async () => (await r.cli("PING")) === "PONG", {
          timeoutMs: 30_000,
          everyMs: 50,
          logFile: `${dir}/redis.log`,
        })
        : Promise.resolve(),
  );
  const startWith = async (extra: string[], wait: boolean) => {
    next = { extra, wait };
    try {
      await server.start();
    } finally {
      next = { extra: [], wait: true };
    }
  };
  const r: Redis = {
    ...server,
    host: "127.0.0.1",
    port,
    dir,
    socket: `${dir}/redis.sock`,
    url(user = REDIS_USER, password = REDIS_PASSWORD, db?: number) {
      const info = `${encodeURIComponent(user)}:${encodeURIComponent(password)}@`;
      return `${scheme}://${info}127.0.0.1:${port}${db === undefined ? "" : `/${db}`}`;
    },
    cli: (...args) => sh("redis-cli", cliArgs(args)),
    launch: (extra = []) => startWith(extra, false),
    start: (extra = []) => startWith(extra, true),
  };
  return await started(r, opts.start);
}
