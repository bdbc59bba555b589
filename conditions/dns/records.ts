/**
 * dns records as the kind sees them: the record types it knows, one record's
 * presentation text and comparison keys (from either resolver's data), how
 * an --equals value is compared, and the name a query asks for. Pure.
 *
 * @module
 */

import { canonicalIp } from "../_common/net.ts";
import { svcbText } from "./svcb.ts";

/** Record types the kind understands. */
export const RECORD_TYPES = [
  "A",
  "AAAA",
  "CNAME",
  "MX",
  "NS",
  "TXT",
  "SRV",
  "CAA",
  "PTR",
  "SOA",
  "HTTPS",
  "SVCB",
  "ANY",
] as const;
/** A record type. */
export type RecordType = typeof RECORD_TYPES[number];
/** A type of a record in an answer (ANY's answers hold every type). */
type AnswerType = Exclude<RecordType, "ANY">;

/**
 * Types the OS resolver cannot ask for (`Deno.resolveDns` has no HTTPS, SVCB or ANY): they
 * need the wire resolver.
 */
export const WIRE_ONLY_TYPES: ReadonlySet<RecordType> = new Set(["HTTPS", "SVCB", "ANY"]);

/**
 * The type numbers of the types `npm:dns-packet` has no name for (RFC 9460): it encodes and
 * decodes them as `UNKNOWN_<number>`, the record data left as bytes.
 */
const TYPE_NUMBERS: Readonly<Record<string, number>> = { SVCB: 64, HTTPS: 65 };

/** The type as dns-packet writes it in a question (`UNKNOWN_65` for HTTPS). */
export function packetType(type: RecordType): string {
  const n = TYPE_NUMBERS[type];
  return n === undefined ? type : `UNKNOWN_${n}`;
}

/** A type as dns-packet decoded it, under the kind's name (`UNKNOWN_65` is HTTPS). */
export function answerType(packetTypeName: string): string {
  for (const [name, n] of Object.entries(TYPE_NUMBERS)) {
    if (packetTypeName === `UNKNOWN_${n}`) return name;
  }
  return packetTypeName;
}
/** Response codes accepted by --rcode. */
export const RCODES = ["NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "FORMERR", "NOTIMP"] as const;

/** One record, as shown and as compared. */
export interface Rec {
  /** An ANY answer's record: its own type, by which a bare --equals value is compared. */
  readonly type?: string;
  /** Presentation text: `10.0.0.5`, `10 mail.example.com`, `"v=spf1 -all"`. */
  readonly text: string;
  /** Whether --equals compares with it ignoring case (an ANY answer's record of a type with no form). */
  readonly caseless?: boolean;
  /** Normalised forms an --equals value may take (lower-case names without trailing dot). */
  readonly keys: readonly string[];
}

/** A DNS name without its trailing dot, lower-case. */
export function normName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/** How an --equals value is compared for a type. */
export function normValue(type: RecordType, value: string): string {
  const v = value.trim();
  switch (type) {
    case "A":
    case "AAAA":
      return canonicalIp(v) ?? v.toLowerCase();
    case "TXT":
      return v.replace(/^"(.*)"$/s, "$1");
    case "CAA":
      return v.replace(/"/g, "").replace(/\s+/g, " ").toLowerCase();
    case "HTTPS":
    case "SVCB": {
      // The whole record, a parameter (`alpn=h3`), or the target name.
      const flat = v.replace(/\s+/g, " ").toLowerCase();
      return flat.includes(" ") || flat.includes("=") ? flat : normName(flat) || ".";
    }
    case "ANY": {
      // "A 10.0.0.5": the rest compares as the named type's value; else as a bare value.
      const space = v.search(/\s/);
      const head = (space < 0 ? v : v.slice(0, space)).toUpperCase();
      if (space > 0 && head !== "ANY" && (RECORD_TYPES as readonly string[]).includes(head)) {
        return `${head} ${normValue(head as RecordType, v.slice(space + 1))}`;
      }
      return v.replace(/\s+/g, " ");
    }
    default:
      return v.split(/\s+/).map((w) => normName(w)).join(" ");
  }
}

/**
 * Builds a record from the data of either resolver (dns-packet or Deno.resolveDns shapes).
 * With ANY, `answer` is the record's own type (as `answerType` names it).
 */
export function makeRecord(type: RecordType, data: unknown, answer?: string): Rec {
  if (type === "ANY") return anyRecord(answer ?? "ANY", data);
  return typedRecord(type, data);
}

/**
 * One record of an ANY answer: `TYPE presentation`. Its keys are the record's own, alone and
 * after its type, so `--equals 10.0.0.5` and `--equals "A 10.0.0.5"` both find an A record.
 */
function anyRecord(type: string, data: unknown): Rec {
  const known = (RECORD_TYPES as readonly string[]).includes(type) && type !== "ANY";
  const text = (inner: Rec) => `${type} ${inner.text}`;
  if (!known) {
    // A type the kind has no form for compares ignoring case, its type word included.
    const inner = genericRecord(data);
    const keys = [...inner.keys, ...inner.keys.map((k) => `${type} ${k}`.toLowerCase())];
    return { type, text: text(inner), keys, caseless: true };
  }
  const inner = typedRecord(type as AnswerType, data);
  return {
    type,
    text: text(inner),
    keys: [...inner.keys, ...inner.keys.map((k) => `${type} ${k}`)],
  };
}

/**
 * A record of a type the kind has no form for (an ANY answer's HINFO, RRSIG, NSEC...): its
 * fields in order, bytes in RFC 3597's generic form (`\# 4 0a000005`).
 */
function genericRecord(data: unknown): Rec {
  const text = genericText(data, 0);
  return { text, keys: [text.toLowerCase()] };
}

/** Nested record data as text; bytes as RFC 3597's `\# N hex`. Depth-bounded. */
function genericText(data: unknown, depth: number): string {
  if (data instanceof Uint8Array) return `\\# ${data.length} ${hex(data)}`.trim();
  if (data === null || data === undefined) return "";
  if (typeof data !== "object") return String(data);
  if (depth > 2) return "…";
  const parts = Array.isArray(data) ? data : Object.values(data as Record<string, unknown>);
  return parts.map((p) => genericText(p, depth + 1)).filter((p) => p !== "").join(" ");
}

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

function typedRecord(type: AnswerType, data: unknown): Rec {
  const name = (x: unknown) => normName(String(x));
  switch (type) {
    case "A":
    case "AAAA": {
      const ip = canonicalIp(String(data)) ?? String(data);
      return { text: ip, keys: [ip] };
    }
    case "CNAME":
    case "NS":
    case "PTR": {
      const n = name(data);
      return { text: n, keys: [n] };
    }
    case "MX": {
      const d = data as { preference: number; exchange: string };
      const ex = name(d.exchange);
      return { text: `${d.preference} ${ex}`, keys: [`${d.preference} ${ex}`, ex] };
    }
    case "TXT": {
      const parts = Array.isArray(data) ? data : [data];
      const text = parts.map((p) =>
        typeof p === "string" ? p : new TextDecoder().decode(p as Uint8Array)
      ).join("");
      return { text: JSON.stringify(text), keys: [text] };
    }
    case "SRV": {
      const d = data as { priority: number; weight: number; port: number; target: string };
      const t = name(d.target);
      const full = `${d.priority} ${d.weight} ${d.port} ${t}`;
      return { text: full, keys: [full, t, `${t}:${d.port}`] };
    }
    case "CAA": {
      const d = data as { flags?: number; critical?: boolean; tag: string; value: string };
      const flags = d.flags ?? (d.critical ? 128 : 0);
      const text = `${flags} ${d.tag} ${JSON.stringify(d.value)}`;
      return { text, keys: [`${flags} ${d.tag} ${d.value}`.toLowerCase(), d.value.toLowerCase()] };
    }
    case "SOA": {
      const d = data as {
        mname: string;
        rname: string;
        serial: number;
        refresh: number;
        retry: number;
        expire: number;
        minimum: number;
      };
      const text = `${name(d.mname)} ${
        name(d.rname)
      } ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
      return { text, keys: [text, name(d.mname)] };
    }
    case "HTTPS":
    case "SVCB": {
      const svc = data instanceof Uint8Array ? svcbText(data) : undefined;
      if (svc === undefined) return genericRecord(data);
      return { text: svc.text, keys: [svc.text.toLowerCase(), svc.target, ...svc.params] };
    }
  }
}

/** The name to query: a PTR target given as an IP address becomes its reverse name. */
export function queryName(target: string, type: RecordType): string {
  const ip = type === "PTR" ? canonicalIp(target) : undefined;
  if (ip === undefined) return target.replace(/\.$/, "") || ".";
  if (!ip.includes(":")) return ip.split(".").reverse().join(".") + ".in-addr.arpa";
  // Expand the IPv6 address to 32 nibbles.
  const [head, tail = ""] = ip.split("::");
  const h = head ? head.split(":") : [];
  const tl = tail ? tail.split(":") : [];
  const groups = ip.includes("::")
    ? [...h, ...Array(8 - h.length - tl.length).fill("0"), ...tl]
    : h;
  const nibbles = groups.map((g) => g.padStart(4, "0")).join("");
  return nibbles.split("").reverse().join(".") + ".ip6.arpa";
}

/** Whether `name` is a DNS name a query may ask for (labels of letters, digits, `-`, `_`, `*`). */
export function validName(name: string): boolean {
  if (name === ".") return true;
  const n = name.replace(/\.$/, "");
  if (n === "" || n.length > 253) return false;
  return n.split(".").every((l) => /^[A-Za-z0-9_*]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/.test(l));
}
