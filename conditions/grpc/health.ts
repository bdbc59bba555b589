/**
 * The two messages of grpc.health.v1 in protobuf's wire format, small
 * enough to write by hand: `HealthCheckRequest { string service = 1; }` and
 * `HealthCheckResponse { ServingStatus status = 1; }`.
 *
 * @module
 */

import type { ServingStatus } from "./mod.ts";

/** ServingStatus numbers (grpc/health/v1/health.proto). */
const BY_NUMBER: Readonly<Record<number, ServingStatus>> = {
  0: "UNKNOWN",
  1: "SERVING",
  2: "NOT_SERVING",
  3: "SERVICE_UNKNOWN",
};

/** A HealthCheckRequest for `service` (empty: no field, as proto3 writes it). */
export function encodeRequest(service: string): Uint8Array {
  if (service === "") return new Uint8Array(0);
  const name = new TextEncoder().encode(service);
  const len = varint(name.length);
  const out = new Uint8Array(1 + len.length + name.length);
  out[0] = 0x0a; // field 1, length-delimited
  out.set(len, 1);
  out.set(name, 1 + len.length);
  return out;
}

/**
 * The status of a HealthCheckResponse (`UNKNOWN` when the field is absent,
 * `STATUS_<n>` for a number the protocol does not name). Unknown fields are
 * skipped; throws on a malformed message.
 */
export function decodeResponse(bytes: Uint8Array): ServingStatus | `STATUS_${number}` {
  let at = 0;
  let status = 0;
  const readVarint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (at >= bytes.length) throw new Error("malformed health response (truncated varint)");
      const b = bytes[at++]!;
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
      shift += 7;
      if (shift > 63) throw new Error("malformed health response (varint too long)");
    }
  };
  while (at < bytes.length) {
    const key = readVarint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) {
      const v = readVarint();
      if (field === 1) status = v;
    } else if (wire === 1) at += 8;
    else if (wire === 2) {
      const length = readVarint(); // read first: `at += readVarint()` would add to the old `at`
      at += length;
    } else if (wire === 5) at += 4;
    else throw new Error(`malformed health response (wire type ${wire})`);
    if (at > bytes.length) throw new Error("malformed health response (truncated field)");
  }
  return BY_NUMBER[status] ?? `STATUS_${status}`;
}

function varint(n: number): Uint8Array {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return new Uint8Array(out);
}
