/**
 * A real NTP server for the ntp kind's tests: Debian's chronyd serving its
 * own clock as a local reference (stratum 8) on a loopback port, run with
 * `-x` so that it never touches the system clock.
 *
 * ```ts
 * const c = await startChrony();          // answers synchronised once ready
 * // ... waitcmd ntp 127.0.0.1:${c.port}
 * await c.stop();
 * ```
 *
 * @module
 */

import { createSocket } from "node:dgram";
import { parseAnswer, request } from "../../conditions/ntp/sntp.ts";
import { startLogged } from "./_util.ts";

/** Debian's chronyd (package chrony). */
export const CHRONYD_BIN = "/usr/sbin/chronyd";

/** The stratum chronyd serves as a local reference. */
export const CHRONY_STRATUM = 8;

/** A running chronyd. */
export interface Chrony {
  readonly port: number;
  readonly logFile: string;
  stop(): Promise<void>;
}

/** A free UDP port on 127.0.0.1 (a TCP probe says nothing about UDP). */
export function freeUdpPort(): Promise<number> {
  const s = createSocket("udp4");
  return new Promise((resolve) => {
    s.bind(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** One SNTP exchange with 127.0.0.1:`port`: the answer's leap indicator and stratum, or undefined. */
export function sntpQuery(
  port: number,
  timeoutMs = 500,
): Promise<{ leap: number; stratum: number } | undefined> {
  const s = createSocket("udp4");
  return new Promise((resolve) => {
    const done = (v: { leap: number; stratum: number } | undefined) => {
      clearTimeout(timer);
      try {
        s.close();
      } catch {
        // closed
      }
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    s.on("error", () => done(undefined));
    s.on("message", (m: Uint8Array) => {
      try {
        const a = parseAnswer(new Uint8Array(m));
        done({ leap: a.leap, stratum: a.stratum });
      } catch {
        done(undefined);
      }
    });
    s.send(request(Date.now()), port, "127.0.0.1");
  });
}

/**
 * Starts chronyd on `port` (default: a free one); resolves once it answers
 * synchronised (leap indicator not 3), unless `wait` is false.
 */
export async function startChrony(
  opts: { port?: number; wait?: boolean } = {},
): Promise<Chrony> {
  const port = opts.port ?? await freeUdpPort();
  const svc = await startLogged({
    prefix: "waitcmd-chrony-",
    log: "chronyd.log",
    what: "chronyd answering synchronised",
    cmd: CHRONYD_BIN,
    async args(dir) {
      await Deno.writeTextFile(
        `${dir}/chrony.conf`,
        [
          `port ${port}`,
          "bindaddress 127.0.0.1",
          "allow 127.0.0.1",
          "local stratum " + CHRONY_STRATUM,
          "cmdport 0",
          "user root",
          `pidfile ${dir}/chronyd.pid`,
          `driftfile ${dir}/drift`,
          "",
        ].join("\n"),
      );
      // -d: foreground, -x: never adjust the system clock.
      return ["-d", "-x", "-f", `${dir}/chrony.conf`];
    },
    async ready() {
      if (opts.wait === false) return true;
      const a = await sntpQuery(port);
      return a !== undefined && a.leap !== 3;
    },
    timeoutMs: 20_000,
    everyMs: 200,
  });
  return { port, logFile: svc.logFile, stop: svc.stop };
}

/** Whether chronyd is installed (install-test-deps.sh installs it). */
export async function chronyMissing(): Promise<string | undefined> {
  return await Deno.stat(CHRONYD_BIN).then(
    () => undefined,
    () => `${CHRONYD_BIN} is not installed (scripts/install-test-deps.sh)`,
  );
}
