/**
 * dns: a name resolves to records of a type (enough of them, the expected
 * values), does not resolve, or answers with an expected rcode.
 *
 * Two resolvers (docs/contract.md §5 dns): `system` asks the OS (getaddrinfo
 * for A/AAAA, so /etc/hosts is honoured; `Deno.resolveDns` with the system's
 * resolv.conf for the other types); `wire` sends queries itself with
 * `npm:dns-packet` over UDP to `--server` (or the first nameserver of
 * /etc/resolv.conf), retries over TCP when the reply is truncated, and tells
 * NXDOMAIN from NODATA. The resolvers live in system.ts and wire.ts, loaded
 * with the probe.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import { canonicalIp, type HostPort, parseHostPort } from "../_common/net.ts";
import type { DnsWant } from "./judge.ts";
import {
  normName,
  queryName,
  RCODES,
  RECORD_TYPES,
  type RecordType,
  validName,
  WIRE_ONLY_TYPES,
} from "./records.ts";

/** How the wire resolver sends its queries (--transport). */
export const TRANSPORTS = ["udp", "tcp"] as const;
/** A transport. */
export type Transport = typeof TRANSPORTS[number];

/** What a dns condition needs. */
export interface DnsOptions extends DnsWant {
  /** The name to query (a PTR target's reverse name). */
  readonly name: string;
  /**
   * --server: an IP address, or a host name the probe resolves on each attempt;
   * undefined for resolv.conf's first nameserver.
   */
  readonly server: HostPort | undefined;
  /** udp (a truncated answer is asked again over TCP) or tcp only. */
  readonly transport: Transport;
}

/**
 * Parses a DNS server: `HOST`, `HOST:PORT`, `IP`, `IP:PORT`, `[v6]`, `[v6]:PORT` or a bare
 * IPv6 address, port 53 by default. HOST is a DNS name, resolved later (per attempt).
 * Throws an `Error` whose message is the usage problem.
 */
export function parseServer(text: string): HostPort {
  const bad = `expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got ${JSON.stringify(text)}`;
  const bracketed = text.startsWith("[");
  // A bare IPv6 address: its colons are not a port separator.
  const bare = bracketed ? undefined : canonicalIp(text);
  if (bare?.includes(":")) return { hostname: bare, port: 53 };
  let hp: HostPort;
  try {
    hp = parseHostPort(text, 53);
  } catch (e) {
    if ((e as Error).message.startsWith("port must")) {
      throw new Error(`port must be from 1 to 65535, got ${JSON.stringify(text)}`);
    }
    throw new Error(bad);
  }
  const ip = canonicalIp(hp.hostname);
  if (ip === undefined) {
    // A host name: its syntax now, its address on each attempt.
    const numeric = /^[\d.]+$/.test(hp.hostname);
    if (bracketed || numeric || !validName(hp.hostname)) throw new Error(bad);
    return { hostname: normName(hp.hostname), port: hp.port };
  }
  if (ip.includes(":") !== bracketed) throw new Error(bad);
  return { hostname: ip, port: hp.port };
}

/** The dns kind. */
export const dns = defineKind<DnsOptions>({
  name: "dns",
  aliases: [],
  summary: "a DNS name resolves (to the expected records), or stops resolving",
  description:
    "Satisfied when the name has at least --min-count (default 1) records of --type (default A) and, when given, every --equals value among them and every --contains text in some record. CNAME, NS, PTR, MX and SRV names compare case-insensitively, with or without the trailing dot. HTTPS and SVCB records read as PRIORITY TARGET key=value... (1 . alpn=h2,h3 port=8443), and --equals also takes the target or one parameter (alpn=h3, port=8443); --type ANY holds on any answer record, each read as TYPE VALUE. --resolver system (the default) asks the OS: A/AAAA through getaddrinfo, so /etc/hosts counts. --resolver wire queries --server (an IP or a host name, resolved on each attempt; else the first nameserver of /etc/resolv.conf) directly over UDP, retrying over TCP when the reply is truncated, or over TCP only with --transport tcp; it tells NXDOMAIN from NODATA and allows --rcode. --server, --rcode, --transport and the types HTTPS, SVCB and ANY imply wire. --absent waits until the name has no such records.",
  target: {
    shape: "required",
    placeholder: "NAME",
    description: "DNS name (an IP address with --type PTR)",
  },
  flags: [
    {
      name: "type",
      type: "enum",
      values: RECORD_TYPES,
      placeholder: "TYPE",
      description: "record type (default A)",
    },
    {
      name: "min-count",
      type: "integer",
      min: 1,
      placeholder: "N",
      description: "at least N records (default 1)",
    },
    {
      name: "equals",
      type: "string",
      placeholder: "VALUE",
      repeatable: true,
      description: "a record equals VALUE; every value given must be present",
    },
    {
      name: "contains",
      type: "string",
      placeholder: "TEXT",
      repeatable: true,
      description: "a record includes TEXT (case-insensitive); every text given must be found",
    },
    {
      name: "resolver",
      type: "enum",
      values: ["system", "wire"],
      placeholder: "NAME",
      description: "system (the OS resolver, default) or wire (direct queries)",
    },
    {
      name: "server",
      type: "string",
      placeholder: "HOST[:PORT]",
      description:
        "DNS server for the wire resolver: an IP or a host name resolved on each attempt ([v6]:port; port 53 by default)",
    },
    {
      name: "transport",
      type: "enum",
      values: TRANSPORTS,
      placeholder: "PROTO",
      description:
        "udp (default; a truncated answer is asked again over TCP) or tcp (wire resolver)",
    },
    {
      name: "rcode",
      type: "enum",
      values: RCODES,
      placeholder: "RCODE",
      description: "the response code must be RCODE (wire resolver), e.g. NXDOMAIN",
    },
    { name: "absent", type: "boolean", description: "the name has no records of the type" },
  ],
  examples: [
    { args: "dns db.internal", description: "wait until the name resolves" },
    {
      args:
        "dns api.example.com --type CNAME --equals lb.example.net. --resolver wire --server 10.0.0.2",
      description: "wait for a CNAME at a specific server",
    },
    {
      args: "dns app.test --min-count 2 --resolver wire --server 127.0.0.1:5353",
      description: "wait until two A records are served",
    },
    {
      args: "dns old.example.com --resolver wire --rcode NXDOMAIN",
      description: "wait until the name is gone",
    },
    {
      args: "dns example.com --type HTTPS --equals alpn=h3 --server ns1.internal",
      description: "wait until the HTTPS record offers HTTP/3, asking a named server",
    },
    {
      args: "dns example.com --type TXT --contains v=spf1 --contains google-site-verification=",
      description: "wait until both TXT values are published",
    },
  ],
  parse(input) {
    return { target: input.target ?? "", options: parseOptions(input) };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.resolver()),
});

function parseOptions(input: KindInput): DnsOptions {
  const type = (input.string("type") ?? "A") as RecordType;
  const target = input.target ?? "";
  const isIp = canonicalIp(target) !== undefined;
  if (isIp && type !== "PTR") {
    input.fail(
      undefined,
      `expected a DNS name, got the IP address ${
        JSON.stringify(target)
      } (use --type PTR for reverse lookups)`,
    );
  }
  if (!isIp && !validName(target)) {
    input.fail(undefined, `expected a DNS name, got ${JSON.stringify(target)}`);
  }
  const serverText = input.string("server");
  let server: HostPort | undefined;
  if (serverText !== undefined) {
    try {
      server = parseServer(serverText);
    } catch (e) {
      input.fail("server", (e as Error).message);
    }
  }
  const resolver = input.string("resolver");
  const rcode = input.string("rcode");
  const transport = input.string("transport") as Transport | undefined;
  if (resolver === "system") {
    if (server) {
      input.fail("server", "needs --resolver wire (the system resolver uses the OS configuration)");
    }
    if (rcode) {
      input.fail("rcode", "needs --resolver wire (the system resolver does not report rcodes)");
    }
    if (transport) {
      input.fail("transport", "needs --resolver wire (the system resolver chooses its own)");
    }
    if (WIRE_ONLY_TYPES.has(type)) {
      input.fail("type", `${type} needs --resolver wire (the system resolver cannot ask for it)`);
    }
  }
  const wire = resolver === "wire" || server !== undefined || rcode !== undefined ||
    transport !== undefined || WIRE_ONLY_TYPES.has(type);
  const absent = input.bool("absent");
  const equals = input.strings("equals");
  for (const v of equals) {
    if (v.trim() === "") input.fail("equals", "expected a value, got an empty string");
  }
  const contains = input.strings("contains");
  if (contains.includes("")) input.fail("contains", "expected a text, got an empty string");
  if (absent) {
    for (const other of ["min-count", "equals", "contains", "rcode"]) {
      if (input.has(other)) input.fail("absent", `cannot be combined with --${other}`);
    }
  }
  if (rcode !== undefined && rcode !== "NOERROR") {
    for (const other of ["min-count", "equals", "contains"]) {
      if (input.has(other)) {
        input.fail("rcode", `${rcode} has no records to check; cannot be combined with --${other}`);
      }
    }
  }
  for (const v of equals) {
    if (type !== "A" && type !== "AAAA") continue;
    const ip = canonicalIp(v.trim());
    if (ip === undefined || ip.includes(":") !== (type === "AAAA")) {
      const family = type === "A" ? "IPv4" : "IPv6";
      input.fail(
        "equals",
        `expected an ${family} address for --type ${type}, got ${JSON.stringify(v)}`,
      );
    }
  }
  const explicitMin = input.integer("min-count");
  const minCount = explicitMin ??
    (rcode !== undefined && equals.length === 0 && contains.length === 0 ? 0 : 1);
  return {
    name: queryName(target, type),
    type,
    minCount,
    equals,
    contains,
    absent,
    rcode,
    wire,
    server,
    transport: transport ?? "udp",
  };
}
