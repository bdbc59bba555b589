/**
 * SVCB and HTTPS records (RFC 9460) in their presentation form. `npm:dns-packet` knows
 * neither type and hands over the record data as bytes; this reads them: the priority, the
 * target name (never compressed, RFC 9460 §2.2) and the parameters, written as RFC 9460 §2.1
 * writes them: `1 . alpn=h2,h3 port=8443`, `0 pool.example.net`. Pure and linear in the
 * record's size (at most 65535 bytes).
 *
 * @module
 */

import { canonicalIp } from "../_common/net.ts";

/** An SVCB or HTTPS record as text, and its target name as compared. */
export interface SvcbText {
  /** `PRIORITY TARGET key=value ...`, the target lower-case without its trailing dot (`.` for the root). */
  readonly text: string;
  /** The target name as --equals compares names: lower-case, no trailing dot (`.` for the root). */
  readonly target: string;
  /**
   * Each parameter as `key=value` (lower-case), and each item of a list on its own
   * (`alpn=h2,h3` also gives `alpn=h2` and `alpn=h3`): what --equals may name.
   */
  readonly params: readonly string[];
}

/** The parameter keys of RFC 9460 §14.3.2 (and RFC 9461's dohpath, RFC 9540's ohttp). */
const KEY_NAMES: readonly string[] = [
  "mandatory",
  "alpn",
  "no-default-alpn",
  "port",
  "ipv4hint",
  "ech",
  "ipv6hint",
  "dohpath",
  "ohttp",
];

/** A cursor over the record's bytes; every read past the end throws. */
class Reader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}
  get done(): boolean {
    return this.offset >= this.bytes.length;
  }
  u8(): number {
    if (this.offset >= this.bytes.length) throw new RangeError("short record");
    return this.bytes[this.offset++]!;
  }
  u16(): number {
    return (this.u8() << 8) | this.u8();
  }
  take(n: number): Uint8Array {
    if (this.offset + n > this.bytes.length) throw new RangeError("short record");
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
}

/** Reads SVCB/HTTPS record data; undefined when the bytes are not a well-formed record. */
export function svcbText(bytes: Uint8Array): SvcbText | undefined {
  try {
    const r = new Reader(bytes);
    const priority = r.u16();
    const target = readName(r);
    const shown: string[] = [];
    const params: string[] = [];
    while (!r.done) {
      const key = r.u16();
      const param = paramText(key, r.take(r.u16()));
      shown.push(param);
      params.push(...paramKeys(key, param.toLowerCase()));
    }
    return { text: [String(priority), target, ...shown].join(" "), target, params };
  } catch {
    return undefined;
  }
}

/** An uncompressed domain name: labels until the empty one; `.` for the root. */
function readName(r: Reader): string {
  const labels: string[] = [];
  for (;;) {
    const len = r.u8();
    if (len === 0) break;
    // A compression pointer (top bits set) is not allowed here (RFC 9460 §2.2).
    if (len > 63) throw new RangeError("bad label");
    labels.push(escapeText(r.take(len), ".").toLowerCase());
  }
  return labels.length === 0 ? "." : labels.join(".");
}

/** The keys of the list-valued parameters (mandatory, alpn, ipv4hint, ipv6hint). */
const LIST_KEYS: ReadonlySet<number> = new Set([0, 1, 4, 6]);

/** `key=a,b` and, for a list, `key=a` and `key=b` (an escaped comma stays inside its item). */
function paramKeys(key: number, param: string): string[] {
  const eq = param.indexOf("=");
  if (eq < 0 || !LIST_KEYS.has(key)) return [param];
  const name = param.slice(0, eq + 1);
  const items = param.slice(eq + 1).split(/(?<!\\),/);
  return items.length < 2 ? [param] : [param, ...items.map((i) => name + i)];
}

/** One parameter as `key=value` (`key` alone when it has no value). */
function paramText(key: number, value: Uint8Array): string {
  const name = KEY_NAMES[key] ?? `key${key}`;
  const shown = paramValue(key, value);
  return shown === undefined ? name : `${name}=${shown}`;
}

/**
 * A parameter's value as RFC 9460 writes it; undefined for a key that takes none. Throws
 * when a known key's value is malformed (the record is then shown in the generic form).
 */
function paramValue(key: number, value: Uint8Array): string | undefined {
  const r = new Reader(value);
  const list = (read: () => string): string => {
    const items: string[] = [];
    while (!r.done) items.push(read());
    return items.join(",");
  };
  switch (key) {
    case 0:
      return list(() => {
        const k = r.u16();
        return KEY_NAMES[k] ?? `key${k}`;
      });
    case 1:
      return list(() => escapeText(r.take(r.u8()), ","));
    case 2:
    case 8:
      if (value.length > 0) throw new RangeError("a value for a key that takes none");
      return undefined;
    case 3:
      if (value.length !== 2) throw new RangeError("a port of other than 2 bytes");
      return String(r.u16());
    case 4:
      return list(() => Array.from(r.take(4)).join("."));
    case 5:
      return base64(value);
    case 6:
      return list(() => ipv6(r.take(16)));
    case 7:
      return escapeText(value, "");
  }
  return escapeText(value, "");
}

/** Bytes in base64 (ech's form). */
function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Sixteen bytes as a compressed IPv6 address. */
function ipv6(b: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  const full = groups.join(":");
  return canonicalIp(full) ?? full;
}

/**
 * Bytes as presentation text: printable ASCII as is, a backslash before `\`, `"` and each
 * character of `special`, anything else as `\DDD` (RFC 1035 §5.1).
 */
function escapeText(bytes: Uint8Array, special: string): string {
  let out = "";
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (b < 0x21 || b > 0x7e) out += `\\${String(b).padStart(3, "0")}`;
    else if (c === "\\" || c === '"' || special.includes(c)) out += `\\${c}`;
    else out += c;
  }
  return out;
}
