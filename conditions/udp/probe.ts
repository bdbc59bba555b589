/**
 * udp's probe: one datagram per attempt, then up to 1 s for a reply that
 * matches (docs/contract.md §5 udp).
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { formatHostPort } from "../_common/net.ts";
import type { Captures } from "../_common/captures.ts";
import { asksText, describeTextMatch, preview, textMatcher } from "../_common/textmatch.ts";
import { NoReply, udpExchange } from "../_common/udp.ts";
import type { UdpOptions } from "./mod.ts";

/** Longest wait for a reply per attempt (docs/contract.md §5 udp). */
export const REPLY_WINDOW_MS = 1000;

/** Makes the probe of one udp condition. */
export function create(o: UdpOptions, env: ProbeEnv): Probe {
  const payload = hexBytes(o.payloadHex);
  const judge = textMatcher(o.match);
  // The matcher's regex engine loads once; a failure shows in the attempt.
  judge.catch(() => {});
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const test = await judge;
      const decoder = new TextDecoder();
      let captures: Captures | undefined;
      try {
        const r = await udpExchange(o.hp, payload, {
          clock: env.clock,
          signal,
          windowMs: REPLY_WINDOW_MS,
          windowText: "1s",
          accept: async (data) => {
            const v = await test(decoder.decode(data), signal);
            if ("why" in v) return v.why;
            captures = v.captures;
            return undefined;
          },
        });
        const checks = asksText(o.match) ? `, ${describeTextMatch(o.match)}` : "";
        return {
          status: "satisfied",
          detail: `reply from ${formatHostPort(r.from)}: ${preview(r.data, env.secrets)}${checks}`,
          captures,
        };
      } catch (e) {
        if (e instanceof NoReply && e.last !== undefined) {
          return {
            status: "pending",
            error: `${e.message}; last reply ${preview(e.last, env.secrets)} ${e.why}`,
          };
        }
        throw e;
      }
    },
  };
}

/** Bytes of an even-length hex text (checked by parse). */
function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
