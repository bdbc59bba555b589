/**
 * A real DNS server (Debian's dnsmasq, package dnsmasq-base) for the dns
 * kind's tests, plus a small DNS client (`dnsQuery`) built on `npm:dns-packet`.
 *
 * dnsmasq listens on 127.0.0.1 on a free port (UDP and TCP) and is
 * authoritative-ish for a local domain (default `test`): the records given
 * are answered with AA set, unknown names under the domain get NXDOMAIN,
 * names outside it get REFUSED (there is no upstream). Hosts added with
 * `addHost` go into dnsmasq's `--hostsdir` and resolve about a second later,
 * without a restart ("wait until it resolves").
 */

import dnsPacketLib from "dns-packet";
import { Buffer } from "node:buffer";
import dgram from "node:dgram";
import net from "node:net";
import { freePort, spawnService, waitUntil } from "./_util.ts";

/** One resource record as `npm:dns-packet` decodes it (only the fields tests use). */
export interface DnsRecord {
  name: string;
  type: string;
  ttl?: number;
  class?: string;
  /** A/AAAA/CNAME: a string; TXT: Buffer[]; MX: {preference, exchange}; SRV: {priority, weight, port, target}. */
  data: unknown;
}

/** A decoded DNS response. */
export interface DnsResponse {
  id: number;
  /** "NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", ... */
  rcode: string;
  /** Truncated (TC bit). */
  truncated: boolean;
  /** Authoritative answer (AA bit). */
  authoritative: boolean;
  answers: DnsRecord[];
  authorities: DnsRecord[];
  additionals: DnsRecord[];
  /** How many bytes the response had on the wire (without the TCP length prefix). */
  size: number;
}

interface DnsPacketLib {
  encode(p: unknown): Uint8Array;
  decode(b: Uint8Array): {
    id: number;
    rcode: string;
    flags: number;
    answers?: DnsRecord[];
    authorities?: DnsRecord[];
    additionals?: DnsRecord[];
  };
  RECURSION_DESIRED: number;
  TRUNCATED_RESPONSE: number;
  AUTHORITATIVE_ANSWER: number;
}
const dnsPacket = dnsPacketLib as unknown as DnsPacketLib;

/** Splits "host:port" (or "[v6]:port") into its parts. */
export function splitServer(server: string): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(server);
  if (!m) throw new Error(`bad DNS server address ${server}`);
  return { host: m[1]!, port: Number(m[2]) };
}

/**
 * Sends one query to `server` ("127.0.0.1:PORT") over UDP (default) or TCP and
 * decodes the answer. Rejects on timeout. Does not retry over TCP on TC: the
 * caller sees `truncated` and decides.
 */
export function dnsQuery(
  server: string,
  name: string,
  type = "A",
  { tcp = false, timeoutMs = 2000, recursionDesired = true }: {
    tcp?: boolean;
    timeoutMs?: number;
    recursionDesired?: boolean;
  } = {},
): Promise<DnsResponse> {
  const { host, port } = splitServer(server);
  const id = Math.floor(Math.random() * 65535);
  const query = Buffer.from(dnsPacket.encode({
    type: "query",
    id,
    flags: recursionDesired ? dnsPacket.RECURSION_DESIRED : 0,
    questions: [{ type, name, class: "IN" }],
  }));
  const decode = (b: Uint8Array): DnsResponse => {
    const p = dnsPacket.decode(b);
    return {
      id: p.id,
      rcode: p.rcode,
      truncated: (p.flags & dnsPacket.TRUNCATED_RESPONSE) !== 0,
      authoritative: (p.flags & dnsPacket.AUTHORITATIVE_ANSWER) !== 0,
      answers: p.answers ?? [],
      authorities: p.authorities ?? [],
      additionals: p.additionals ?? [],
      size: b.length,
    };
  };
  return new Promise<DnsResponse>((resolve, reject) => {
    let done = false;
    let cleanup = () => {};
    const timer = setTimeout(() => {
      finish(new Error(`DNS ${type} ${name} @${server} (${tcp ? "tcp" : "udp"}): timed out`));
    }, timeoutMs);
    const finish = (err: Error | null, res?: DnsResponse) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      cleanup();
      if (err) reject(err);
      else resolve(res!);
    };
    if (!tcp) {
      const sock = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
      cleanup = () => sock.close();
      sock.on("error", (e: Error) => finish(e));
      sock.on("message", (msg: Buffer) => {
        try {
          const r = decode(msg);
          if (r.id === id) finish(null, r);
        } catch (e) {
          finish(e as Error);
        }
      });
      sock.send(query, port, host, (e: Error | null) => e && finish(e));
    } else {
      const sock = net.connect({ host, port });
      cleanup = () => sock.destroy();
      let buf = Buffer.alloc(0);
      sock.on("error", (e: Error) => finish(e));
      sock.on("connect", () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(query.length);
        sock.write(Buffer.concat([len, query]));
      });
      sock.on("data", (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (buf.length >= 2) {
          const len = buf.readUInt16BE(0);
          if (buf.length >= 2 + len) {
            try {
              finish(null, decode(buf.subarray(2, 2 + len)));
            } catch (e) {
              finish(e as Error);
            }
          }
        }
      });
      sock.on("close", () => finish(new Error(`DNS ${name} @${server} (tcp): closed early`)));
    }
  });
}

/** An SRV record for {@link DnsmasqRecords.srv}. */
export interface SrvSpec {
  /** e.g. "_http._tcp.app.test". */
  name: string;
  target: string;
  port: number;
  priority?: number;
  weight?: number;
}

/** An MX record for {@link DnsmasqRecords.mx}. */
export interface MxSpec {
  exchange: string;
  preference?: number;
}

/**
 * A record of any type for {@link DnsmasqRecords.rr}, as dnsmasq's `--dns-rr` takes it: the
 * type's number (HTTPS 65, SVCB 64) and the record data in hex.
 */
export interface RawRecord {
  name: string;
  type: number;
  hex: string;
}

/** Records dnsmasq serves from the start. Names are fully qualified without the trailing dot. */
export interface DnsmasqRecords {
  /** Local domain: unknown names under it get NXDOMAIN. Default "test". */
  domain?: string;
  /** Address records: one IP or several (IPv6 addresses give AAAA). */
  a?: Record<string, string | string[]>;
  /**
   * alias -> target. dnsmasq only answers a CNAME whose target it knows itself
   * (an `a` record, or a host added with `addHost`).
   */
  cname?: Record<string, string>;
  /** TXT records: each string is its own TXT record. */
  txt?: Record<string, string | string[]>;
  /** MX records of a name. */
  mx?: Record<string, MxSpec[]>;
  /** SRV records. */
  srv?: SrvSpec[];
  /** Records of any type, their data in hex (dnsmasq's `--dns-rr`). */
  rr?: RawRecord[];
  /** Listen on this port (UDP and TCP) rather than a free one: a server started late, or again. */
  port?: number;
  /** TTL of local answers (dnsmasq's --local-ttl). Default 0. */
  ttl?: number;
}

/** A running dnsmasq. */
export interface Dnsmasq {
  /** "127.0.0.1:PORT" (UDP and TCP). */
  server: string;
  host: string;
  port: number;
  /** The local domain (e.g. "test"). */
  domain: string;
  /** The hostsdir dnsmasq watches. */
  hostsDir: string;
  /** dnsmasq's log (it logs every query). */
  logFile: string;
  /** Adds an address for `name` via the hostsdir; it resolves about 1 s later. Several calls add several addresses. */
  addHost(name: string, ip: string): Promise<void>;
  /** Removes every address added with addHost for `name` (dnsmasq drops them about 1 s later). */
  removeHost(name: string): Promise<void>;
  /** Stops dnsmasq and removes its directory. */
  stop(): Promise<void>;
}

/** Path of the dnsmasq binary (package dnsmasq-base). */
export const DNSMASQ_BIN = "/usr/sbin/dnsmasq";

/** Starts dnsmasq on 127.0.0.1 on a free port with `records`; resolves once it answers. */
export async function startDnsmasq(records: DnsmasqRecords = {}): Promise<Dnsmasq> {
  const domain = (records.domain ?? "test").replace(/^\.|\.$/g, "");
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-dnsmasq-" });
  const hostsDir = `${dir}/hosts`;
  await Deno.mkdir(hostsDir);
  const logFile = `${dir}/dnsmasq.log`;

  // Records go into a config file: there dnsmasq honours quotes (commas and
  // spaces inside TXT strings survive) and backslash escapes.
  const q = (t: string) => `"${t.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  const lines: string[] = [];
  for (const [name, ips] of Object.entries(records.a ?? {})) {
    for (const ip of [ips].flat()) lines.push(`host-record=${name},${ip}`);
  }
  for (const [alias, target] of Object.entries(records.cname ?? {})) {
    lines.push(`cname=${alias},${target}`);
  }
  for (const [name, texts] of Object.entries(records.txt ?? {})) {
    for (const t of [texts].flat()) lines.push(`txt-record=${name},${q(t)}`);
  }
  for (const [name, mxs] of Object.entries(records.mx ?? {})) {
    for (const mx of mxs) lines.push(`mx-host=${name},${mx.exchange},${mx.preference ?? 10}`);
  }
  for (const s of records.srv ?? []) {
    lines.push(`srv-host=${s.name},${s.target},${s.port},${s.priority ?? 0},${s.weight ?? 0}`);
  }
  for (const r of records.rr ?? []) lines.push(`dns-rr=${r.name},${r.type},${r.hex}`);
  const confFile = `${dir}/records.conf`;
  await Deno.writeTextFile(confFile, lines.join("\n") + "\n");

  let lastErr: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = records.port ?? freePort();
    const server = `127.0.0.1:${port}`;
    const svc = spawnService(DNSMASQ_BIN, [
      "--keep-in-foreground",
      `--conf-file=${confFile}`,
      `--port=${port}`,
      "--listen-address=127.0.0.1",
      "--bind-interfaces",
      "--no-resolv",
      "--no-hosts",
      "--no-poll",
      "--user=root",
      "--group=root",
      `--pid-file=${dir}/dnsmasq.pid`,
      `--local=/${domain}/`,
      `--local-ttl=${records.ttl ?? 0}`,
      `--hostsdir=${hostsDir}`,
      "--log-queries",
      "--log-facility=-",
    ], { logFile });
    try {
      // An unknown name under the domain answers NXDOMAIN once dnsmasq is up.
      await waitUntil(
        `dnsmasq on ${server}`,
        async () =>
          (await dnsQuery(server, `ready-probe.${domain}`, "A", { timeoutMs: 300 })).rcode ===
            "NXDOMAIN",
        { timeoutMs: 10_000, everyMs: 50, logFile },
      );
    } catch (e) {
      lastErr = e;
      await svc.stop();
      continue;
    }
    const added = new Map<string, string[]>();
    const fileOf = (name: string) => `${hostsDir}/${name.replace(/[^A-Za-z0-9._-]/g, "_")}.hosts`;
    let seq = 0;
    return {
      server,
      host: "127.0.0.1",
      port,
      domain,
      hostsDir,
      logFile,
      async addHost(name: string, ip: string) {
        const ips = [...(added.get(name) ?? []), ip];
        added.set(name, ips);
        // Write beside the directory, then rename in: dnsmasq sees one complete file.
        const tmp = `${dir}/.pending-${seq++}`;
        await Deno.writeTextFile(tmp, ips.map((i) => `${i} ${name}\n`).join(""));
        await Deno.rename(tmp, fileOf(name));
      },
      async removeHost(name: string) {
        added.delete(name);
        await Deno.remove(fileOf(name)).catch(() => {});
      },
      async stop() {
        await svc.stop();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  throw lastErr;
}
