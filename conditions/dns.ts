/**
 * dns: a name resolves to records of a type (enough of them, the expected
 * values), does not resolve, or answers with an expected rcode.
 *
 * Two resolvers (DECISIONS §8.2): `system` asks the OS (getaddrinfo for
 * A/AAAA, so /etc/hosts is honoured; `Deno.resolveDns` with the system's
 * resolv.conf for the other types); `wire` sends queries itself with
 * `npm:dns-packet` over UDP to `--server` (or the first nameserver of
 * /etc/resolv.conf), retries over TCP when the reply is truncated, and tells
 * NXDOMAIN from NODATA.
 *
 * @module
 */

import type { ConditionKind, KindInput, ProbeResult } from "../engine/types.ts";
import { describeError } from "./_net.ts";
import { readFlagFile } from "./_nodenet.ts";

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

/** UDP retransmission delays of one wire query (the answer may come until the last ends). */
const UDP_WAITS_MS = [1000, 2000, 2000];
/** How long a TCP query may take. */
const TCP_TIMEOUT_MS = 5000;
/** Records shown in a detail before "…". */
const SHOWN = 5;

/** One record, as shown and as compared. */
export interface Rec {
  /** Presentation text: `10.0.0.5`, `10 mail.example.com`, `"v=spf1 -all"`. */
  readonly text: string;
  /** Normalised forms an --equals value may take (lower-case names without trailing dot). */
  readonly keys: readonly string[];
}

/** What one lookup found. */
export type Lookup =
  | {
    readonly kind: "answer";
    readonly rcode: string;
    readonly records: readonly Rec[];
    /** Who answered (wire: the server), for messages. */
    readonly from?: string;
  }
  | { readonly kind: "error"; readonly error: string };

/** A DNS name without its trailing dot, lower-case. */
export function normName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/** Canonical text of an IP address, or undefined. */
export function canonicalIp(text: string): string | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(text)) {
    const parts = text.split(".").map(Number);
    return parts.every((p) => p <= 255) ? parts.join(".") : undefined;
  }
  if (!text.includes(":") || !/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  try {
    return new URL(`http://[${text}]/`).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return undefined;
  }
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

/** What to require of the answer. */
export interface DnsWant {
  readonly type: RecordType;
  readonly minCount: number;
  readonly equals: readonly string[];
  readonly contains: string | undefined;
  readonly absent: boolean;
  readonly rcode: string | undefined;
  /** Whether rcodes are known (wire): NXDOMAIN vs NODATA can be told apart. */
  readonly wire: boolean;
}

/** Records in a stable order (servers rotate them): numbers compare as numbers. */
function sorted(records: readonly Rec[]): Rec[] {
  return [...records].sort((a, b) => a.text.localeCompare(b.text, "en", { numeric: true }));
}

function listRecords(type: string, records: readonly Rec[]): string {
  const shown = sorted(records).slice(0, SHOWN).map((r) =>
    r.text.length > 80 ? r.text.slice(0, 79) + "…" : r.text
  )
    .join(", ");
  return `${type} ${shown}${records.length > SHOWN ? `, … (${records.length} records)` : ""}`;
}

/** Judges a lookup against the requirements. Pure: tested without servers. */
export function judgeLookup(found: Lookup, want: DnsWant): ProbeResult {
  if (found.kind === "error") return { status: "pending", error: found.error };
  const { rcode, records } = found;
  const from = found.from ?? "the resolver";
  const t = want.type;
  const none = want.wire
    ? `no ${t} records (${rcode === "NOERROR" ? "NODATA" : rcode})`
    : `no ${t} records`;
  if (want.rcode !== undefined && rcode !== want.rcode) {
    return { status: "pending", error: `rcode ${rcode}, expected ${want.rcode}` };
  }
  if (want.absent) {
    if (rcode !== "NOERROR" && rcode !== "NXDOMAIN") {
      return { status: "pending", error: `${rcode} from ${from}` };
    }
    return records.length === 0
      ? { status: "satisfied", detail: none }
      : { status: "pending", error: `still resolves: ${listRecords(t, records)}` };
  }
  if (want.rcode === undefined && rcode !== "NOERROR") {
    return { status: "pending", error: rcode === "NXDOMAIN" ? none : `${rcode} from ${from}` };
  }
  if (records.length < want.minCount) {
    if (records.length === 0) return { status: "pending", error: none };
    return {
      status: "pending",
      error: `${records.length} ${t} record${
        records.length === 1 ? "" : "s"
      }, expected at least ${want.minCount}: ${listRecords(t, records)}`,
    };
  }
  const missing = want.equals.filter((v) => {
    const key = normValue(t, v);
    return !records.some((r) => r.keys.includes(key));
  });
  if (missing.length > 0) {
    const got = records.length === 0 ? "none" : listRecords(t, records);
    return {
      status: "pending",
      error: `${t} records do not include ${missing.join(", ")} (got ${got})`,
    };
  }
  if (want.contains !== undefined) {
    const needle = want.contains.toLowerCase();
    if (!records.some((r) => r.text.toLowerCase().includes(needle))) {
      const got = records.length === 0 ? "none" : listRecords(t, records);
      return {
        status: "pending",
        error: `no ${t} record contains ${JSON.stringify(want.contains)} (got ${got})`,
      };
    }
  }
  if (records.length === 0) return { status: "satisfied", detail: want.rcode ?? rcode };
  const list = listRecords(t, records);
  return { status: "satisfied", detail: want.rcode ? `${want.rcode}, ${list}` : list };
}

/** A parsed --server. */
export interface DnsServer {
  readonly host: string;
  readonly port: number;
}

/** Parses `IP`, `IP:PORT`, `[v6]`, `[v6]:PORT` or a bare IPv6 address; or returns an error text. */
export function parseServer(text: string): DnsServer | string {
  const bad = `expected IP[:PORT] or [IPv6]:PORT, got ${JSON.stringify(text)}`;
  let host = text;
  let port = 53;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const v4 = /^([\d.]+)(?::(\d+))?$/.exec(text);
  if (bracket) {
    host = bracket[1]!;
    if (bracket[2] !== undefined) port = Number(bracket[2]);
  } else if (v4) {
    host = v4[1]!;
    if (v4[2] !== undefined) port = Number(v4[2]);
  }
  const ip = canonicalIp(host);
  if (ip === undefined || (bracket && !ip.includes(":"))) return bad;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return `port must be from 1 to 65535, got ${JSON.stringify(text)}`;
  }
  return { host: ip, port };
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

function validName(name: string): boolean {
  if (name === ".") return true;
  const n = name.replace(/\.$/, "");
  if (n === "" || n.length > 253) return false;
  return n.split(".").every((l) => /^[A-Za-z0-9_*]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/.test(l));
}

interface DnsSpec extends DnsWant {
  readonly name: string;
  readonly server: DnsServer | undefined;
}

/** The dns kind. */
export const dns: ConditionKind = {
  name: "dns",
  aliases: [],
  summary: "a DNS name resolves (to the expected records), or stops resolving",
  description:
    "Satisfied when the name has at least --min-count (default 1) records of --type (default A) and, when given, every --equals value among them and a record containing --contains. CNAME, NS, PTR, MX and SRV names compare case-insensitively, with or without the trailing dot. --resolver system (the default) asks the OS: A/AAAA through getaddrinfo, so /etc/hosts counts. --resolver wire queries --server (or the first nameserver of /etc/resolv.conf) directly over UDP, retrying over TCP when the reply is truncated; it tells NXDOMAIN from NODATA and allows --rcode. --server and --rcode imply wire. --absent waits until the name has no such records.",
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
      description: "a record includes TEXT (case-insensitive)",
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
      placeholder: "IP[:PORT]",
      description: "DNS server for the wire resolver ([v6]:port; port 53 by default)",
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
  ],
  parse(input) {
    const spec = parseSpec(input);
    return {
      target: input.target ?? "",
      check: ({ signal }) => check(spec, signal),
    };
  },
};

function parseSpec(input: KindInput): DnsSpec {
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
  let server: DnsServer | undefined;
  if (serverText !== undefined) {
    const s = parseServer(serverText);
    if (typeof s === "string") input.fail("server", s);
    server = s as DnsServer;
  }
  const resolver = input.string("resolver");
  const rcode = input.string("rcode");
  if (resolver === "system") {
    if (server) {
      input.fail("server", "needs --resolver wire (the system resolver uses the OS configuration)");
    }
    if (rcode) {
      input.fail("rcode", "needs --resolver wire (the system resolver does not report rcodes)");
    }
  }
  const wire = resolver === "wire" || server !== undefined || rcode !== undefined;
  const absent = input.bool("absent");
  const equals = input.strings("equals");
  for (const v of equals) {
    if (v.trim() === "") input.fail("equals", "expected a value, got an empty string");
  }
  const contains = input.string("contains");
  if (contains === "") input.fail("contains", "expected a text, got an empty string");
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
    (rcode !== undefined && equals.length === 0 && contains === undefined ? 0 : 1);
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
  };
}

async function check(spec: DnsSpec, signal: AbortSignal): Promise<ProbeResult> {
  const found = spec.wire ? await lookupWire(spec, signal) : await lookupSystem(spec, signal);
  if (signal.aborted) return { status: "pending", error: "aborted" };
  return judgeLookup(found, spec);
}

// ---------------------------------------------------------------- system resolver

async function lookupSystem(spec: DnsSpec, signal: AbortSignal): Promise<Lookup> {
  if (spec.type === "A" || spec.type === "AAAA") {
    const { promises } = await import("node:dns");
    try {
      const list = await promises.lookup(spec.name, {
        all: true,
        family: spec.type === "A" ? 4 : 6,
      });
      const seen = new Set<string>();
      const records: Rec[] = [];
      for (const a of list) {
        const r = makeRecord(spec.type, a.address);
        if (!seen.has(r.text)) records.push(r);
        seen.add(r.text);
      }
      return { kind: "answer", rcode: "NOERROR", records };
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "ENOTFOUND" || code === "ENODATA" || code === "EAI_NODATA") {
        return { kind: "answer", rcode: "NXDOMAIN", records: [] };
      }
      if (code === "EAI_AGAIN" || code === "ESERVFAIL") {
        return { kind: "error", error: `temporary resolver failure (${code})` };
      }
      return { kind: "error", error: describeError(e) };
    }
  }
  try {
    const answers = await Deno.resolveDns(spec.name, spec.type as Deno.RecordType, { signal });
    return {
      kind: "answer",
      rcode: "NOERROR",
      records: answers.map((a) => makeRecord(spec.type, a)),
    };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return { kind: "answer", rcode: "NXDOMAIN", records: [] };
    }
    return { kind: "error", error: describeError(e).replace(/^proto error: /, "") };
  }
}

// ---------------------------------------------------------------- wire resolver

interface Packet {
  id: number;
  rcode: string;
  flags: number;
  questions?: { name: string; type: string }[];
  answers?: { name: string; type: string; class?: string; data: unknown }[];
}

interface DnsPacketLib {
  encode(p: unknown): Uint8Array;
  decode(b: Uint8Array): Packet;
  RECURSION_DESIRED: number;
  TRUNCATED_RESPONSE: number;
}

/** The first nameserver of /etc/resolv.conf. */
async function defaultServer(): Promise<DnsServer | string> {
  const text = await readFlagFile("resolver", "/etc/resolv.conf");
  if (typeof text !== "string") return "cannot read /etc/resolv.conf; give --server";
  for (const line of text.split("\n")) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const s = parseServer(m[1]!.replace(/%.*$/, ""));
    if (typeof s !== "string") return s;
  }
  return "no nameserver in /etc/resolv.conf; give --server";
}

function formatServer(s: DnsServer): string {
  return s.host.includes(":") ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;
}

async function lookupWire(spec: DnsSpec, signal: AbortSignal): Promise<Lookup> {
  const server = spec.server ?? await defaultServer();
  if (typeof server === "string") return { kind: "error", error: server };
  const lib = (await import("dns-packet")).default as unknown as DnsPacketLib;
  const { Buffer } = await import("node:buffer");
  const id = Math.floor(Math.random() * 65536);
  const query = lib.encode({
    type: "query",
    id,
    flags: lib.RECURSION_DESIRED,
    questions: [{ type: spec.type, name: spec.name === "." ? "." : spec.name, class: "IN" }],
  });
  const accept = (b: Uint8Array): Packet | undefined => {
    try {
      const p = lib.decode(Buffer.from(b.buffer, b.byteOffset, b.length));
      if (p.id !== id) return undefined;
      const q = p.questions?.[0];
      if (q && (normName(q.name) !== normName(spec.name) || q.type !== spec.type)) return undefined;
      return p;
    } catch {
      return undefined;
    }
  };
  let packet: Packet;
  try {
    packet = await queryUdp(server, query, accept, signal);
    if ((packet.flags & lib.TRUNCATED_RESPONSE) !== 0) {
      packet = await queryTcp(server, query, accept, signal);
    }
  } catch (e) {
    if (signal.aborted) return { kind: "error", error: "aborted" };
    return { kind: "error", error: e instanceof Error ? e.message : String(e) };
  }
  const records = (packet.answers ?? [])
    .filter((a) => a.type === spec.type && (a.class ?? "IN") === "IN")
    .map((a) => makeRecord(spec.type, a.data));
  return { kind: "answer", rcode: packet.rcode, records, from: formatServer(server) };
}

function queryUdp(
  server: DnsServer,
  query: Uint8Array,
  accept: (b: Uint8Array) => Packet | undefined,
  signal: AbortSignal,
): Promise<Packet> {
  return import("node:dgram").then((dgram) =>
    new Promise<Packet>((resolve, reject) => {
      const sock = dgram.createSocket(server.host.includes(":") ? "udp6" : "udp4");
      let timer: ReturnType<typeof setTimeout> | undefined;
      let done = false;
      const finish = (err: Error | undefined, p?: Packet) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        try {
          sock.close();
        } catch {
          // already closed
        }
        if (err) reject(err);
        else resolve(p!);
      };
      const onAbort = () => finish(new Error("aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      sock.on("error", (e: Error) =>
        finish(new Error(`${formatServer(server)}: ${describeError(e)}`)));
      sock.on("message", (msg: Uint8Array) => {
        const p = accept(msg);
        if (p) {
          finish(undefined, p);
        }
      });
      let sent = 0;
      const send = () => {
        if (sent === UDP_WAITS_MS.length) {
          const total = UDP_WAITS_MS.reduce((a, b) =>
            a + b, 0) / 1000;
          return finish(new Error(`no answer from ${formatServer(server)} within ${total}s (udp)`));
        }
        sock.send(query, server.port, server.host, (e: Error | null) => {
          if (e) finish(new Error(`${formatServer(server)}: ${describeError(e)}`));
        });
        timer = setTimeout(send, UDP_WAITS_MS[sent++]);
      };
      send();
    })
  );
}

function queryTcp(
  server: DnsServer,
  query: Uint8Array,
  accept: (b: Uint8Array) => Packet | undefined,
  signal: AbortSignal,
): Promise<Packet> {
  return import("node:net").then((net) =>
    new Promise<Packet>((resolve, reject) => {
      const sock = net.connect({ host: server.host, port: server.port });
      let buf = new Uint8Array(0);
      let done = false;
      const finish = (err: Error | undefined, p?: Packet) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        sock.destroy();
        if (err) reject(err);
        else resolve(p!);
      };
      const timer = setTimeout(
        () =>
          finish(
            new Error(
              `no answer from ${formatServer(server)} within ${TCP_TIMEOUT_MS / 1000}s (tcp)`,
            ),
          ),
        TCP_TIMEOUT_MS,
      );
      const onAbort = () => finish(new Error("aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      sock.on("error", (e: Error) => {
        const code = (e as { code?: string }).code;
        finish(
          new Error(
            `${formatServer(server)} (tcp): ${
              code === "ECONNREFUSED" ? "connection refused" : describeError(e)
            }`,
          ),
        );
      });
      sock.on("connect", () => {
        const framed = new Uint8Array(query.length + 2);
        framed[0] = query.length >> 8;
        framed[1] = query.length & 0xff;
        framed.set(query, 2);
        sock.write(framed);
      });
      sock.on("data", (chunk: Uint8Array) => {
        const next = new Uint8Array(buf.length + chunk.length);
        next.set(buf);
        next.set(chunk, buf.length);
        buf = next;
        if (buf.length < 2) return;
        const len = (buf[0]! << 8) | buf[1]!;
        if (buf.length < len + 2) return;
        const p = accept(buf.subarray(2, len + 2));
        if (p) finish(undefined, p);
        else finish(new Error(`${formatServer(server)} (tcp): an unreadable answer`));
      });
      sock.on("close", () =>
        finish(new Error(`${formatServer(server)} (tcp): connection closed before an answer`)));
    })
  );
}
