/**
 * Throwaway InfluxDB 1.6 servers (Debian's `influxdb` package) for the
 * influxdb kind's tests. Each listens on 127.0.0.1 on a free HTTP port (and
 * a free port for its RPC service, whose default 8088 another server may
 * hold), with its config, meta, data, WAL and log in its own temporary
 * directory. A server can serve HTTPS only, and can be stopped and started
 * again on the same port.
 */

import {
  binariesMissing,
  freePort,
  restartable,
  spawnService,
  started,
  waitUntil,
} from "../../tests/services/_util.ts";

/** The server binary. */
export const INFLUXD = "/usr/bin/influxd";

/** Why influxd cannot run here, or undefined. */
export function influxdbMissing(): Promise<string | undefined> {
  return binariesMissing(INFLUXD);
}

/** Options of {@link makeInfluxdb}. */
export interface InfluxdbOptions {
  /** Start it now (default true); otherwise `start()` later. */
  start?: boolean;
  /** Serve HTTPS only, with this certificate and key (signed by the CA of `caFile`). */
  tls?: { caFile: string; certFile: string; keyFile: string };
}

/** A throwaway InfluxDB server. */
export interface Influxdb {
  readonly port: number;
  readonly dir: string;
  /** `http://127.0.0.1:PORT` (`https://` with TLS). */
  readonly url: string;
  /** Starts it (again, on the same port); resolves once `/ping` answers 204. */
  start(): Promise<void>;
  /** Stops it (SIGTERM). */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/** Makes an InfluxDB server, started unless `start: false`. */
export async function makeInfluxdb(opts: InfluxdbOptions = {}): Promise<Influxdb> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-influxdb-" });
  const port = freePort();
  const conf = `${dir}/influxdb.conf`;
  await Deno.writeTextFile(
    conf,
    [
      "reporting-enabled = false",
      `bind-address = "127.0.0.1:${freePort()}"`,
      "[meta]",
      `  dir = "${dir}/meta"`,
      "[data]",
      `  dir = "${dir}/data"`,
      `  wal-dir = "${dir}/wal"`,
      "  query-log-enabled = false",
      "[monitor]",
      "  store-enabled = false",
      "[http]",
      `  bind-address = "127.0.0.1:${port}"`,
      "  log-enabled = false",
      ...(opts.tls
        ? [
          "  https-enabled = true",
          `  https-certificate = "${opts.tls.certFile}"`,
          `  https-private-key = "${opts.tls.keyFile}"`,
        ]
        : []),
      "[logging]",
      "  suppress-logo = true",
      "",
    ].join("\n"),
  );
  const url = `${opts.tls ? "https" : "http"}://127.0.0.1:${port}`;
  const logFile = `${dir}/influxd.log`;
  const server: Influxdb = {
    ...restartable(
      dir,
      () => spawnService(INFLUXD, ["-config", conf], { logFile }),
      () =>
        waitUntil(`influxd on 127.0.0.1:${port}`, () => pings(port, opts.tls), {
          timeoutMs: 30_000,
          everyMs: 50,
          logFile,
        }),
    ),
    port,
    dir,
    url,
  };
  return await started(server, opts.start);
}

/** Whether the server on `port` answers `/ping` with 204 (over TLS trusting `tls.caFile`). */
async function pings(port: number, tls: InfluxdbOptions["tls"]): Promise<boolean> {
  if (tls === undefined) {
    const r = await fetch(`http://127.0.0.1:${port}/ping`);
    await r.body?.cancel();
    return r.status === 204;
  }
  // The test certificates name localhost.
  const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(tls.caFile)] });
  try {
    const r = await fetch(`https://localhost:${port}/ping`, { client });
    await r.body?.cancel();
    return r.status === 204;
  } finally {
    client.close();
  }
}
