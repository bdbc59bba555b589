/**
 * The SNTP packet (RFC 4330): the 48-byte client request and the server's
 * answer, read into the numbers the ntp kind judges. Pure functions; the
 * times are wall-clock milliseconds since 1970 (docs/contract.md §5 ntp).
 *
 * @module
 */

/** Size of an NTP header without extensions. */
export const PACKET_BYTES = 48;
/** Seconds from the NTP epoch (1900) to the Unix epoch (1970). */
const NTP_UNIX_SECONDS = 2_208_988_800;
const TWO_32 = 2 ** 32;

/** What a server's answer says. */
export interface SntpAnswer {
  /** Leap indicator: 0-2 synchronised, 3 the clock is not synchronised. */
  readonly leap: number;
  readonly version: number;
  /** 4 for a server's answer. */
  readonly mode: number;
  /** 0 kiss-o'-death / unspecified, 1 primary, 2-15 secondary, 16 unsynchronised. */
  readonly stratum: number;
  /** The reference id; for stratum 0 and 1 an ASCII code (`DENY`, `GPS`, `LOCL`). */
  readonly refId: string;
  /** When the request arrived at the server (T2), ms since 1970. */
  readonly receiveMs: number;
  /** When the answer left the server (T3), ms since 1970. */
  readonly transmitMs: number;
  /** The originate timestamp: our request's transmit timestamp, echoed (8 bytes as hex). */
  readonly originateHex: string;
}

/** Writes `ms` (since 1970) as a 64-bit NTP timestamp at `offset`. */
export function writeTimestamp(view: DataView, offset: number, ms: number): void {
  const totalSeconds = ms / 1000 + NTP_UNIX_SECONDS;
  const seconds = Math.floor(totalSeconds);
  const fraction = Math.floor((totalSeconds - seconds) * TWO_32);
  // After 2036-02-07 the seconds wrap into NTP era 1 (RFC 4330 §3).
  view.setUint32(offset, seconds % TWO_32);
  view.setUint32(offset + 4, fraction);
}

/** Reads the 64-bit NTP timestamp at `offset` as ms since 1970 (era 1 for small seconds). */
export function readTimestamp(view: DataView, offset: number): number {
  let seconds = view.getUint32(offset);
  const fraction = view.getUint32(offset + 4);
  // RFC 4330 §3: a most significant bit of 0 means era 1 (from 2036).
  if ((seconds & 0x8000_0000) === 0) seconds += TWO_32;
  return (seconds - NTP_UNIX_SECONDS) * 1000 + (fraction / TWO_32) * 1000;
}

/** A client request (version 4, mode 3) stamped with our transmit time `nowMs`. */
export function request(nowMs: number): Uint8Array {
  const bytes = new Uint8Array(PACKET_BYTES);
  bytes[0] = (0 << 6) | (4 << 3) | 3;
  writeTimestamp(new DataView(bytes.buffer), 40, nowMs);
  return bytes;
}

/** The 8 bytes of the transmit timestamp of a request, as hex (to match the answer's originate). */
export function transmitHex(packet: Uint8Array): string {
  return hex(packet.subarray(40, 48));
}

/** Reads a server's answer; throws an Error saying why it is not one. */
export function parseAnswer(bytes: Uint8Array): SntpAnswer {
  if (bytes.length < PACKET_BYTES) {
    throw new Error(`not an NTP answer (${bytes.length} B, expected at least ${PACKET_BYTES})`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const b0 = bytes[0]!;
  const mode = b0 & 7;
  if (mode !== 4) throw new Error(`not an NTP server answer (mode ${mode})`);
  const refBytes = bytes.subarray(12, 16);
  const stratum = bytes[1]!;
  const refId = stratum <= 1
    ? String.fromCharCode(...refBytes).replace(/\0+$/, "").replace(/[^\x20-\x7e]/g, "?")
    : Array.from(refBytes).join(".");
  return {
    leap: b0 >> 6,
    version: (b0 >> 3) & 7,
    mode,
    stratum,
    refId,
    receiveMs: readTimestamp(view, 32),
    transmitMs: readTimestamp(view, 40),
    originateHex: hex(bytes.subarray(24, 32)),
  };
}

/**
 * The clock offset (server minus ours) and the round-trip delay, from our
 * send time T1, the server's T2 and T3, and our receive time T4 (RFC 4330 §5).
 */
export function offsetAndDelay(
  t1: number,
  answer: Pick<SntpAnswer, "receiveMs" | "transmitMs">,
  t4: number,
): { offsetMs: number; delayMs: number } {
  const t2 = answer.receiveMs;
  const t3 = answer.transmitMs;
  return { offsetMs: ((t2 - t1) + (t3 - t4)) / 2, delayMs: (t4 - t1) - (t3 - t2) };
}

/** Why the answer's clock is not synchronised, or undefined when it is. */
export function unsynchronised(a: SntpAnswer): string | undefined {
  if (a.leap === 3) return "server clock not synchronised (leap indicator 3)";
  if (a.stratum === 0) {
    const code = a.refId === "" ? "" : `, kiss code ${a.refId}`;
    return `server clock not synchronised (stratum 0${code})`;
  }
  if (a.stratum >= 16) return `server clock not synchronised (stratum ${a.stratum})`;
  return undefined;
}

/** An offset as `+0.412ms` or `-2.500s`. */
export function formatOffset(ms: number): string {
  const sign = ms < 0 ? "-" : "+";
  const abs = Math.abs(ms);
  return abs < 1000 ? `${sign}${abs.toFixed(3)}ms` : `${sign}${(abs / 1000).toFixed(3)}s`;
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
