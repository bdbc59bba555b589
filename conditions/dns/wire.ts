/**
 * The dns kind's wire resolver: one query encoded with `npm:dns-packet`
 * (imported by the probe's `create`, docs/contract.md §2), sent over UDP
 * with retransmissions to --server or the first nameserver of
 * /etc/resolv.conf, and again over TCP when the answer is truncated. Waits
 * run on the engine's clock.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { describeError } from "../../engine/errors.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import { canonicalIp, formatHostPort, type HostPort, resolveAll } from "../_common/net.ts";
import type { Lookup } from "./judge.ts";
import { parseServer, type Transport } from "./mod.ts";
import { answerType, makeRecord, normName, packetType, type RecordType } from "./records.ts";

/** UDP retransmission delays of one wire query (the answer may come until the last ends). */
const UDP_WAITS_MS = [1000, 2000, 2000];
/** How long a TCP query may take. */
const TCP_TIMEOUT_MS = 5000;

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

/** Picks the packet that answers our query out of what arrives, or undefined. */
type Accept = (b: Uint8Array) => Packet | undefined;

/** One exchange with the server, over either transport. */
interface Exchange {
  /** The address queried (a --server name already resolved). */
  readonly server: HostPort;
  /** The server as messages name it: `ns.test:53 (10.0.0.2)` for a name. */
  readonly where: string;
  /** The encoded query. */
  readonly query: Uint8Array;
  readonly accept: Accept;
  readonly signal: AbortSignal;
  readonly clock: Clock;
}

/** dns-packet and node:buffer's Buffer, imported once. */
export const dnsPacketLibrary: Memo<
  { lib: DnsPacketLib; Buffer: typeof import("node:buffer").Buffer }
> = memoize(async () => {
  const [mod, buffer] = await Promise.all([import("dns-packet"), import("node:buffer")]);
  return { lib: mod.default as unknown as DnsPacketLib, Buffer: buffer.Buffer };
});

/** The first nameserver of /etc/resolv.conf; throws when there is none. */
async function defaultServer(): Promise<HostPort> {
  let text: string;
  try {
    text = await readFlagFile("resolver", "/etc/resolv.conf");
  } catch {
    throw new Error("cannot read /etc/resolv.conf; give --server");
  }
  for (const line of text.split("\n")) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    try {
      return parseServer(m[1]!.replace(/%.*$/, ""));
    } catch {
      // not an address this resolver can use; try the next line
    }
  }
  throw new Error("no nameserver in /etc/resolv.conf; give --server");
}

/**
 * The address to query: --server's (its first address through the system resolver when
 * it is a name, asked again on every attempt), or resolv.conf's first nameserver. Throws
 * `cannot resolve host NAME: …` when a name does not resolve (the attempt is pending).
 */
async function serverAddress(
  given: HostPort | undefined,
  signal: AbortSignal,
): Promise<{ server: HostPort; where: string }> {
  const server = given ?? await defaultServer();
  const named = formatHostPort(server);
  if (canonicalIp(server.hostname) !== undefined) return { server, where: named };
  const [address] = await resolveAll(server.hostname, signal);
  return {
    server: { hostname: address!, port: server.port },
    where: `${named} (${address})`,
  };
}

/** What one wire lookup asks, of whom, and how. */
export interface WireQuery {
  readonly name: string;
  readonly type: RecordType;
  readonly server: HostPort | undefined;
  readonly transport: Transport;
}

/**
 * Queries `name` for `type` at `server` (or resolv.conf's). Throws when no
 * usable answer came (silence, refused, unreadable, a server name that does
 * not resolve).
 */
export async function lookupWire(
  q: WireQuery,
  signal: AbortSignal,
  clock: Clock,
): Promise<Lookup> {
  const { server, where } = await serverAddress(q.server, signal);
  signal.throwIfAborted();
  const { lib, Buffer } = await dnsPacketLibrary.get();
  const id = Math.floor(Math.random() * 65536);
  const qtype = packetType(q.type);
  const query = lib.encode({
    type: "query",
    id,
    flags: lib.RECURSION_DESIRED,
    questions: [{ type: qtype, name: q.name, class: "IN" }],
  });
  const accept: Accept = (b) => {
    try {
      const p = lib.decode(Buffer.from(b.buffer, b.byteOffset, b.length));
      if (p.id !== id) return undefined;
      const question = p.questions?.[0];
      if (question && (normName(question.name) !== normName(q.name) || question.type !== qtype)) {
        return undefined;
      }
      return p;
    } catch {
      return undefined;
    }
  };
  const exchange: Exchange = { server, where, query, accept, signal, clock };
  if (q.transport === "tcp") {
    const packet = await queryTcp(exchange);
    return { rcode: packet.rcode, records: recordsOf(packet, q.type), from: where };
  }
  let packet = await queryUdp(exchange);
  if ((packet.flags & lib.TRUNCATED_RESPONSE) !== 0) {
    try {
      packet = await queryTcp(exchange);
    } catch (e) {
      // Say why TCP was tried: the UDP answer alone is not the answer.
      if (signal.aborted || !(e instanceof Error)) throw e;
      throw new Error(`truncated answer over UDP, retried over TCP: ${e.message}`);
    }
  }
  return { rcode: packet.rcode, records: recordsOf(packet, q.type), from: where };
}

/**
 * The answer's records of the asked type (in class IN); with ANY, every record of the
 * answer section, whatever its type (a CNAME's target records included).
 */
function recordsOf(packet: Packet, type: RecordType) {
  return (packet.answers ?? [])
    .filter((a) => (a.class ?? "IN") === "IN")
    .map((a) => ({ own: answerType(a.type), data: a.data }))
    .filter((a) => type === "ANY" ? a.own !== "OPT" : a.own === type)
    .map((a) => makeRecord(type, a.data, a.own));
}

/**
 * Settles a promise once: `finish` is idempotent, aborts `ended` (which stops
 * the clock's waits) and runs `cleanup`. Aborting `signal` rejects with "aborted".
 */
function settleOnce<T>(
  signal: AbortSignal,
  cleanup: () => void,
  resolve: (v: T) => void,
  reject: (e: Error) => void,
): { finish(err: Error | undefined, v?: T): void; ended: AbortSignal } {
  const ended = new AbortController();
  const onAbort = () => finish(new Error("aborted"));
  const finish = (err: Error | undefined, v?: T) => {
    if (ended.signal.aborted) return;
    ended.abort();
    signal.removeEventListener("abort", onAbort);
    cleanup();
    if (err) reject(err);
    else resolve(v!);
  };
  signal.addEventListener("abort", onAbort, { once: true });
  if (signal.aborted) onAbort();
  return { finish, ended: ended.signal };
}

async function queryUdp(
  { server, where, query, accept, signal, clock }: Exchange,
): Promise<Packet> {
  const dgram = await import("node:dgram");
  return await new Promise<Packet>((resolve, reject) => {
    const sock = dgram.createSocket(server.hostname.includes(":") ? "udp6" : "udp4");
    const { finish, ended } = settleOnce<Packet>(
      signal,
      () => {
        try {
          sock.close();
        } catch {
          // already closed
        }
      },
      resolve,
      reject,
    );
    sock.on("error", (e: Error) => finish(new Error(`${where}: ${describeError(e)}`)));
    sock.on("message", (msg: Uint8Array) => {
      const p = accept(msg);
      if (p) finish(undefined, p);
    });
    (async () => {
      for (const wait of UDP_WAITS_MS) {
        if (ended.aborted) return;
        sock.send(query, server.port, server.hostname, (e: Error | null) => {
          if (e) finish(new Error(`${where}: ${describeError(e)}`));
        });
        await clock.sleep(wait, ended);
      }
      const total = UDP_WAITS_MS.reduce((a, b) => a + b, 0) / 1000;
      finish(new Error(`no answer from ${where} within ${total}s (udp)`));
    })().catch((e) => finish(e instanceof Error ? e : new Error(String(e))));
  });
}

async function queryTcp(
  { server, where, query, accept, signal, clock }: Exchange,
): Promise<Packet> {
  const net = await import("node:net");
  return await new Promise<Packet>((resolve, reject) => {
    const sock = net.connect({ host: server.hostname, port: server.port });
    let buf = new Uint8Array(0);
    const { finish, ended } = settleOnce<Packet>(signal, () => sock.destroy(), resolve, reject);
    clock.sleep(TCP_TIMEOUT_MS, ended).then(() =>
      finish(new Error(`no answer from ${where} within ${TCP_TIMEOUT_MS / 1000}s (tcp)`))
    );
    sock.on("error", (e: Error) => {
      const code = (e as { code?: string }).code;
      const why = code === "ECONNREFUSED" ? "connection refused" : describeError(e);
      finish(new Error(`${where} (tcp): ${why}`));
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
      else finish(new Error(`${where} (tcp): an unreadable answer`));
    });
    sock.on("close", () => finish(new Error(`${where} (tcp): connection closed before an answer`)));
  });
}
