/**
 * ntp's probe: one SNTP request per attempt, the answer judged
 * (docs/contract.md §5 ntp).
 *
 * @module
 */

import { formatDuration } from "../../engine/duration.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { NoReply, udpExchange } from "../_common/udp.ts";
import type { NtpOptions } from "./mod.ts";
import {
  formatOffset,
  offsetAndDelay,
  parseAnswer,
  request,
  type SntpAnswer,
  transmitHex,
  unsynchronised,
} from "./sntp.ts";

/** Longest wait for an answer per attempt (docs/contract.md §5 ntp). */
export const ANSWER_WINDOW_MS = 2000;

/**
 * The wall clock, in ms since 1970, below the millisecond (Date.now's whole
 * milliseconds would bias the offset by up to 1 ms). The offset compares
 * this machine's wall clock with the server's, so it must read the wall
 * clock itself: this is data the kind measures, not the engine's time
 * (waiting and timeouts still go through `env.clock`).
 */
const wallClock = (): number => performance.timeOrigin + performance.now();

/** Makes the probe of one ntp condition. */
export function create(o: NtpOptions, env: ProbeEnv): Probe {
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      // One request per address, each stamped when it is sent (T1).
      const sent = new Map<string, number>();
      let answer: { a: SntpAnswer; t1: number; t4: number } | undefined;
      await exchange(o.hp, {
        clock: env.clock,
        signal,
        windowMs: ANSWER_WINDOW_MS,
        windowText: "2s",
        payloadFor: () => {
          const t1 = wallClock();
          const packet = request(t1);
          sent.set(transmitHex(packet), t1);
          return packet;
        },
        accept: (data) => {
          const t4 = wallClock();
          let a: SntpAnswer;
          try {
            a = parseAnswer(data);
          } catch (e) {
            return (e as Error).message;
          }
          const t1 = sent.get(a.originateHex);
          if (t1 === undefined) return "does not answer our request (originate timestamp)";
          answer = { a, t1, t4 };
          return undefined;
        },
      });
      if (answer === undefined) throw new Error("no answer"); // unreachable: exchange resolved
      const { a, t1, t4 } = answer;
      const why = unsynchronised(a);
      if (why !== undefined) return { status: "pending", error: why };
      const { offsetMs } = offsetAndDelay(t1, a, t4);
      const shown = `offset ${formatOffset(offsetMs)}, stratum ${a.stratum}`;
      if (o.maxStratum !== undefined && a.stratum > o.maxStratum) {
        return {
          status: "pending",
          error: `stratum ${a.stratum} is above --max-stratum ${o.maxStratum} (offset ${
            formatOffset(offsetMs)
          })`,
        };
      }
      if (Math.abs(offsetMs) > o.maxOffsetMs) {
        return {
          status: "pending",
          error: `offset ${formatOffset(offsetMs)} is beyond --max-offset ${
            formatDuration(o.maxOffsetMs)
          } (stratum ${a.stratum})`,
        };
      }
      return { status: "satisfied", detail: shown };
    },
  };
}

/** `udpExchange` whose "nothing matched" error says why the last reply was skipped. */
async function exchange(
  hp: NtpOptions["hp"],
  o: Parameters<typeof udpExchange>[2],
): Promise<void> {
  try {
    await udpExchange(hp, new Uint8Array(0), o);
  } catch (e) {
    if (e instanceof NoReply && e.why !== undefined) {
      throw new Error(`${e.message}; last: ${e.why}`);
    }
    throw e;
  }
}
