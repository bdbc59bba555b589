/**
 * dns records as the kind sees them: the record types it knows, one record's
 * presentation text and comparison keys (from either resolver's data), how
 * an --equals value is compared, and the name a query asks for. Pure.
 *
 * @module
 */

import { canonicalIp } from "../_common/net.ts";

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
] as const;
/** A record type. */
export type RecordType = typeof RECORD_TYPES[number];
/** Response codes accepted by --rcode. */
export const RCODES = ["NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "FORMERR", "NOTIMP"] as const;

/** One record, as shown and as compared. */
export interface Rec {
  /** Presentation text: `10.0.0.5`, `10 mail.example.com`, `"v=spf1 -all"`. */
  readonly text: string;
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
    default:
      return v.split(/\s+/).map((w) => normName(w)).join(" ");
  }
}

/** Builds a record from the data of either resolver (dns-packet or Deno.resolveDns shapes). */
export function makeRecord(type: RecordType, data: unknown): Rec {
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
