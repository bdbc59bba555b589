/**
 * A tiny authoritative DNS server for the misbehaviours dnsmasq cannot show.
 * Run by tests/services/dnsfake.ts as its own process:
 *
 *   scripts/deno run --allow-net tests/services/dnsfake_server.ts \
 *     --port 5353 [--zone fake.test] [--slow-ms 1500] [--flaky-failures 3] [--no-tcp]
 *
 * It serves UDP and TCP on 127.0.0.1:PORT (UDP only with --no-tcp: TCP
 * connections are then refused), authoritative (AA) for `zone`:
 *
 * | name                | answer                                                         |
 * | ------------------- | -------------------------------------------------------------- |
 * | ok.ZONE             | A 127.0.0.1, TXT "ok"                                          |
 * | truncated.ZONE      | UDP: TC bit, no answers. TCP: 40 A records 127.0.1.1-40 and a  |
 * |                     | long TXT (more than 512 bytes in all)                          |
 * | partial.ZONE        | UDP: TC bit with the first 5 of truncated.ZONE's 40 A records. |
 * |                     | TCP: all 40                                                    |
 * | tcpsilent.ZONE      | UDP: TC bit, no answers. TCP: the query is read and never      |
 * |                     | answered (the connection stays open)                           |
 * | tcpgarbage.ZONE     | UDP: TC bit, no answers. TCP: a length-framed reply that is    |
 * |                     | not a DNS message (the query's id, then 0xff bytes and text)   |
 * | servfail.ZONE       | SERVFAIL                                                       |
 * | refused.ZONE        | REFUSED                                                        |
 * | slow.ZONE           | A 127.0.0.2, sent after --slow-ms (UDP and TCP)                |
 * | flaky.ZONE          | SERVFAIL for the first --flaky-failures queries, then A 127.0.0.3 |
 * | silent.ZONE         | no answer at all                                               |
 * | minimal.ZONE        | A 127.0.0.4; ANY: RFC 8482's minimal answer, one HINFO record  |
 * |                     | (CPU "RFC8482", OS "")                                         |
 * | ZONE                | SOA (and NS) records                                           |
 * | other names in ZONE | NXDOMAIN with the SOA in the authority section                 |
 * | names outside ZONE  | REFUSED                                                        |
 *
 * Every query is logged on stdout as `query <udp|tcp> <name> <type> -> <result>`.
 */

import dnsPacketLib from "dns-packet";
import { Buffer } from "node:buffer";
import dgram from "node:dgram";
import net from "node:net";

interface Question {
  name: string;
  type: string;
  class?: string;
}
interface Packet {
  id: number;
  flags?: number;
  type?: string;
  questions?: Question[];
  answers?: unknown[];
  authorities?: unknown[];
}
const dnsPacket = dnsPacketLib as unknown as {
  encode(p: Packet): Uint8Array;
  decode(b: Uint8Array): Packet;
  AUTHORITATIVE_ANSWER: number;
  TRUNCATED_RESPONSE: number;
  RECURSION_DESIRED: number;
};

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

function arg(name: string, dflt: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1]! : dflt;
}

const port = Number(arg("port", "0"));
const zone = arg("zone", "fake.test").toLowerCase().replace(/\.$/, "");
const slowMs = Number(arg("slow-ms", "1500"));
const noTcp = Deno.args.includes("--no-tcp");
let flakyLeft = Number(arg("flaky-failures", "3"));

const soa = {
  name: zone,
  type: "SOA",
  ttl: 60,
  data: {
    mname: `ns.${zone}`,
    rname: `hostmaster.${zone}`,
    serial: 1,
    refresh: 60,
    retry: 60,
    expire: 600,
    minimum: 5,
  },
};

interface Reply {
  rcode: number;
  answers?: unknown[];
  authorities?: unknown[];
  truncated?: boolean;
  delayMs?: number;
  drop?: boolean;
  /** Instead of a DNS answer, send a length-framed reply that is not a DNS message (TCP). */
  garbage?: boolean;
  /** Set AA (default true; false for names outside the zone). */
  aa?: boolean;
  note: string;
}

function a(name: string, ip: string) {
  return { name, type: "A", ttl: 5, data: ip };
}

function resolve(q: Question, transport: "udp" | "tcp"): Reply {
  const name = q.name.toLowerCase().replace(/\.$/, "");
  const t = q.type;
  if (name !== zone && !name.endsWith(`.${zone}`)) {
    return { rcode: RCODE.REFUSED, aa: false, note: "REFUSED" };
  }
  const label = name === zone ? "@" : name.slice(0, -zone.length - 1);
  switch (label) {
    case "@":
      if (t === "SOA") return { rcode: 0, answers: [soa], note: "SOA" };
      if (t === "NS") {
        return {
          rcode: 0,
          answers: [{ name, type: "NS", ttl: 60, data: `ns.${zone}` }],
          note: "NS",
        };
      }
      return { rcode: 0, authorities: [soa], note: "NODATA" };
    case "ok":
      if (t === "A") return { rcode: 0, answers: [a(name, "127.0.0.1")], note: "A" };
      if (t === "TXT") {
        return { rcode: 0, answers: [{ name, type: "TXT", ttl: 5, data: "ok" }], note: "TXT" };
      }
      return { rcode: 0, authorities: [soa], note: "NODATA" };
    case "truncated": {
      if (transport === "udp") return { rcode: 0, truncated: true, note: "TC" };
      const answers: unknown[] = [];
      if (t === "A" || t === "ANY") {
        for (let i = 1; i <= 40; i++) answers.push(a(name, `127.0.1.${i}`));
      }
      if (t === "TXT" || t === "ANY") {
        answers.push({
          name,
          type: "TXT",
          ttl: 5,
          data: Array.from({ length: 4 }, (_, i) => `chunk${i}-` + "x".repeat(200)),
        });
      }
      return answers.length
        ? { rcode: 0, answers, note: `${answers.length} records` }
        : { rcode: 0, authorities: [soa], note: "NODATA" };
    }
    case "partial": {
      // A resolver that used this UDP answer would see 5 records where there are 40.
      const n = transport === "udp" ? 5 : 40;
      const answers = t === "A"
        ? Array.from({ length: n }, (_, i) => a(name, `127.0.1.${i + 1}`))
        : [];
      if (transport === "udp") {
        return { rcode: 0, answers, truncated: true, note: `TC with ${answers.length} records` };
      }
      return answers.length
        ? { rcode: 0, answers, note: `${answers.length} records` }
        : { rcode: 0, authorities: [soa], note: "NODATA" };
    }
    case "tcpsilent":
      return transport === "udp"
        ? { rcode: 0, truncated: true, note: "TC" }
        : { rcode: 0, drop: true, note: "dropped" };
    case "tcpgarbage":
      return transport === "udp"
        ? { rcode: 0, truncated: true, note: "TC" }
        : { rcode: 0, garbage: true, note: "garbage" };
    case "servfail":
      return { rcode: RCODE.SERVFAIL, note: "SERVFAIL" };
    case "refused":
      return { rcode: RCODE.REFUSED, note: "REFUSED" };
    case "slow":
      return t === "A"
        ? {
          rcode: 0,
          answers: [a(name, "127.0.0.2")],
          delayMs: slowMs,
          note: `A after ${slowMs}ms`,
        }
        : { rcode: 0, authorities: [soa], delayMs: slowMs, note: `NODATA after ${slowMs}ms` };
    case "flaky":
      if (flakyLeft > 0) {
        flakyLeft--;
        return { rcode: RCODE.SERVFAIL, note: `SERVFAIL (${flakyLeft} left)` };
      }
      return t === "A"
        ? { rcode: 0, answers: [a(name, "127.0.0.3")], note: "A" }
        : { rcode: 0, authorities: [soa], note: "NODATA" };
    case "silent":
      return { rcode: 0, drop: true, note: "dropped" };
    case "minimal":
      if (t === "ANY") {
        const hinfo = { name, type: "HINFO", ttl: 5, data: { cpu: "RFC8482", os: "" } };
        return { rcode: 0, answers: [hinfo], note: "HINFO RFC8482" };
      }
      return t === "A"
        ? { rcode: 0, answers: [a(name, "127.0.0.4")], note: "A" }
        : { rcode: 0, authorities: [soa], note: "NODATA" };
    default:
      return { rcode: RCODE.NXDOMAIN, authorities: [soa], note: "NXDOMAIN" };
  }
}

/** Builds the response to `msg` and passes it to `send` (after any delay; never for dropped names). */
function answer(msg: Uint8Array, transport: "udp" | "tcp", send: (b: Uint8Array) => void): void {
  let query: Packet;
  try {
    query = dnsPacket.decode(msg);
  } catch {
    console.log(`query ${transport} <undecodable ${msg.length} bytes>`);
    return;
  }
  const q = query.questions?.[0];
  if (!q) return;
  const r = resolve(q, transport);
  console.log(`query ${transport} ${q.name} ${q.type} -> ${r.note}`);
  if (r.drop) return;
  if (r.garbage) {
    // The query's id (so it is not dropped as an answer to another query), then a header whose
    // counts claim 65535 questions and records, then text: no DNS decoder can read it.
    const junk = new TextEncoder().encode("GARBAGE, not DNS\r\n");
    const out = new Uint8Array(2 + 10 + junk.length).fill(0xff);
    out[0] = query.id >> 8;
    out[1] = query.id & 0xff;
    out.set(junk, 12);
    send(out);
    return;
  }
  const flags = (r.aa === false ? 0 : dnsPacket.AUTHORITATIVE_ANSWER) |
    ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
    (r.truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) |
    r.rcode;
  const out = dnsPacket.encode({
    id: query.id,
    type: "response",
    flags,
    questions: [q],
    answers: r.answers ?? [],
    authorities: r.authorities ?? [],
  });
  if (r.delayMs) setTimeout(() => send(out), r.delayMs);
  else send(out);
}

const udp = dgram.createSocket("udp4");
udp.on("message", (msg: Buffer, rinfo: { address: string; port: number }) => {
  answer(msg, "udp", (b) => udp.send(Buffer.from(b), rinfo.port, rinfo.address));
});
udp.on("error", (e: Error) => {
  console.error(`udp error: ${e.message}`);
  Deno.exit(2);
});

const tcp = net.createServer((sock: net.Socket) => {
  let buf = Buffer.alloc(0);
  sock.on("error", () => {});
  sock.on("data", (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      const len = buf.readUInt16BE(0);
      const msg = buf.subarray(2, 2 + len);
      buf = buf.subarray(2 + len);
      answer(msg, "tcp", (b) => {
        if (sock.destroyed) return;
        const prefix = Buffer.alloc(2);
        prefix.writeUInt16BE(b.length);
        sock.write(Buffer.concat([prefix, Buffer.from(b)]));
      });
    }
  });
});
tcp.on("error", (e: Error) => {
  console.error(`tcp error: ${e.message}`);
  Deno.exit(2);
});

await new Promise<void>((res) => udp.bind(port, "127.0.0.1", () => res()));
const udpPort = udp.address().port;
if (!noTcp) await new Promise<void>((res) => tcp.listen(udpPort, "127.0.0.1", () => res()));
console.log(`listening 127.0.0.1:${udpPort}${noTcp ? " (udp only)" : ""} zone ${zone}`);
