/**
 * A MongoDB protocol stand-in for the mongodb kind's tests: no real MongoDB
 * server can be installed on the test machines, so this is mongo-java-server
 * with its in-memory backend (Maven Central), reporting MongoDB 7.0.0 /
 * wire version 21 (tests/services/mongo/MongoStandIn.java, built by
 * scripts/services/build-mongo.sh). It speaks the wire protocol to the
 * official driver (hello via the legacy isMaster, ping, buildInfo, CRUD) but
 * has no authentication and no replica sets: tests of those states are unit
 * tests of the decision over replies shaped like a real server's.
 *
 * ```ts
 * const m = await prepareMongo(); // a port, not listening yet
 * await m.start();
 * m.uri;                          // mongodb://127.0.0.1:PORT/
 * await m.halt(); await m.start();
 * await m.stop();
 * ```
 */

import {
  freePort,
  javaBuildMissing,
  reapOnExit,
  runBuildScript,
  type Service,
  spawnService,
  waitUntil,
} from "./_util.ts";

/** The stand-in's build directory (lib/ and classes/), building it once, or throws. */
export async function mongoStandIn(): Promise<string> {
  return await runBuildScript("build-mongo.sh", "mongo-java-server stand-in");
}

/** Why the stand-in cannot be had here (no java, no mvn, no build), or undefined. */
export function mongoMissing(): Promise<string | undefined> {
  return javaBuildMissing(mongoStandIn);
}

/** The stand-in, started or not. */
export interface MongoStandIn {
  readonly port: number;
  /** `mongodb://127.0.0.1:PORT/`. */
  readonly uri: string;
  readonly dir: string;
  /** Starts it; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the process (its in-memory data is lost). */
  halt(): Promise<void>;
  /** Stops it and removes `dir`. */
  stop(): Promise<void>;
}

/** Picks a port and a directory; `start()` runs the stand-in. */
export async function prepareMongo(): Promise<MongoStandIn> {
  const build = await mongoStandIn();
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-mongo-" });
  const reaper = reapOnExit(dir);
  const port = freePort();
  let service: Service | undefined;
  const m: MongoStandIn = {
    port,
    uri: `mongodb://127.0.0.1:${port}/`,
    dir,
    async start() {
      if (service) return;
      const logFile = `${dir}/mongo.log`;
      service = spawnService("java", [
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-cp",
        `${build}/lib/*:${build}/classes`,
        "MongoStandIn",
        "127.0.0.1",
        String(port),
      ], { logFile });
      reaper.setPids([service.pid]);
      await waitUntil(`mongo stand-in on 127.0.0.1:${port}`, async () => {
        const c = await Deno.connect({ hostname: "127.0.0.1", port });
        c.close();
        return true;
      }, { timeoutMs: 60_000, everyMs: 100, logFile });
    },
    async halt() {
      const s = service;
      service = undefined;
      reaper.setPids([]);
      await s?.stop();
    },
    async stop() {
      await m.halt();
      reaper.release();
      if (!Deno.env.get("WAITCMD_KEEP_SERVICE_DIRS")) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
  return m;
}
