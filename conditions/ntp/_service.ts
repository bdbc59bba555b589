/**
 * A small NTP responder (node:dgram, in the test process) for the answers a
 * real server will not give on demand: a clock off by a chosen offset, an
 * unsynchronised clock (leap indicator 3, stratum 0 with a kiss code, stratum
 * 16) or a high stratum. chronyd (chrony.ts) covers the ordinary case.
 *
 * @module
 */

import { createSocket } from "node:dgram";
import { PACKET_BYTES, writeTimestamp } from "./sntp.ts";

/** How the responder answers. */
export interface NtpAnswerSpec {
  /** Leap indicator (default 0). */
  leap?: number;
  /** Stratum (default 2). */
  stratum?: number;
  /** The reference id as 4 ASCII characters (`DENY` with stratum 0); default `GPS`. */
  refId?: string;
  /** How far the served clock is from ours, in ms (default 0). */
  offsetMs?: number;
  /** Answer nothing. */
  silent?: boolean;
}

/** A running responder. */
export interface NtpResponder {
  readonly port: number;
  /** Requests received so far. */
  readonly requests: number;
  /** Changes how later requests are answered. */
  set(spec: NtpAnswerSpec): void;
  stop(): Promise<void>;
}

/** Starts the responder on 127.0.0.1 (a free port, or `port`). */
export function startNtpResponder(spec: NtpAnswerSpec = {}, port = 0): Promise<NtpResponder> {
  let current = { ...spec };
  let requests = 0;
  const s = createSocket("udp4");
  s.on("message", (m: Uint8Array, r: { address: string; port: number }) => {
    requests++;
    if (current.silent || m.length < PACKET_BYTES) return;
    const now = Date.now() + (current.offsetMs ?? 0);
    const out = new Uint8Array(PACKET_BYTES);
    const view = new DataView(out.buffer);
    out[0] = ((current.leap ?? 0) << 6) | (4 << 3) | 4;
    out[1] = current.stratum ?? 2;
    out[2] = 6;
    out[3] = 0xec;
    const ref = (current.refId ?? "GPS").padEnd(4, "\0").slice(0, 4);
    for (let i = 0; i < 4; i++) out[12 + i] = ref.charCodeAt(i);
    writeTimestamp(view, 16, now - 1000);
    out.set(m.subarray(40, 48), 24); // originate: the request's transmit timestamp
    writeTimestamp(view, 32, now);
    writeTimestamp(view, 40, now);
    s.send(out, r.port, r.address);
  });
  return new Promise((resolve) => {
    s.bind(port, "127.0.0.1", () => {
      resolve({
        port: s.address().port,
        get requests() {
          return requests;
        },
        set(next) {
          current = { ...next };
        },
        stop: () => new Promise<void>((r) => s.close(() => r())),
      });
    });
  });
}
