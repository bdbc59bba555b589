/**
 * Starts tests/services/dnsfake_server.ts (an authoritative DNS server written
 * with `npm:dns-packet`) as its own process on a free 127.0.0.1 port, UDP and
 * TCP. It shows what dnsmasq cannot: truncation (TC) with the full answer only
 * over TCP, SERVFAIL, REFUSED, slow answers, answers that start working after
 * a few failures, and no answer at all. See dnsfake_server.ts for the names.
 */

import { dnsQuery } from "./dnsmasq.ts";
import { freePort, repoRoot, spawnService, waitUntil } from "./_util.ts";

/** Options of {@link startDnsFake}. */
export interface DnsFakeOptions {
  /** Zone it is authoritative for. Default "fake.test". */
  zone?: string;
  /** Delay before slow.ZONE is answered, in ms. Default 1500. */
  slowMs?: number;
  /** How many queries of flaky.ZONE get SERVFAIL before it answers. Default 3. */
  flakyFailures?: number;
  /** Whether it listens on TCP too. Default true; false: TCP connections are refused. */
  tcp?: boolean;
}

/** A running fake DNS server. */
export interface DnsFake {
  /** "127.0.0.1:PORT" (UDP and TCP). */
  server: string;
  host: string;
  port: number;
  /** The zone, e.g. "fake.test". */
  zone: string;
  /** Names it serves, fully qualified (no trailing dot). */
  names: {
    /** A 127.0.0.1, TXT "ok". */
    ok: string;
    /** UDP: TC set, no answers. TCP: 40 A records (127.0.1.1-40), for TXT a >512-byte record. */
    truncated: string;
    /** UDP: TC set with 5 of the 40 A records (a partial set). TCP: all 40. */
    partial: string;
    /** UDP: TC set, no answers. TCP: the query is read and never answered. */
    tcpSilent: string;
    /** UDP: TC set, no answers. TCP: a length-framed reply that is not a DNS message. */
    tcpGarbage: string;
    /** SERVFAIL. */
    servfail: string;
    /** REFUSED. */
    refused: string;
    /** A 127.0.0.2 after `slowMs`. */
    slow: string;
    /** SERVFAIL `flakyFailures` times, then A 127.0.0.3. */
    flaky: string;
    /** Never answered. */
    silent: string;
    /** A 127.0.0.4; ANY gets RFC 8482's minimal answer (one HINFO "RFC8482" record). */
    minimal: string;
    /** NXDOMAIN (any other name under the zone also is). */
    nxdomain: string;
  };
  /** The server's log: one `query <udp|tcp> <name> <type> -> <result>` line per query. */
  logFile: string;
  /** The query lines logged so far. */
  queries(): Promise<string[]>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Starts the fake DNS server; resolves once it answers ok.ZONE over UDP and TCP (if it has TCP). */
export async function startDnsFake(opts: DnsFakeOptions = {}): Promise<DnsFake> {
  const zone = (opts.zone ?? "fake.test").toLowerCase().replace(/^\.|\.$/g, "");
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-dnsfake-" });
  const logFile = `${dir}/dnsfake.log`;
  let lastErr: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = freePort();
    const server = `127.0.0.1:${port}`;
    const svc = spawnService(`${repoRoot}/scripts/deno`, [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      `--config=${repoRoot}/deno.json`,
      `${repoRoot}/tests/services/dnsfake_server.ts`,
      "--port",
      String(port),
      "--zone",
      zone,
      "--slow-ms",
      String(opts.slowMs ?? 1500),
      "--flaky-failures",
      String(opts.flakyFailures ?? 3),
      ...(opts.tcp === false ? ["--no-tcp"] : []),
    ], { logFile });
    try {
      await waitUntil(
        `dnsfake on ${server}`,
        async () =>
          (await dnsQuery(server, `ok.${zone}`, "A", { timeoutMs: 300 })).rcode === "NOERROR" &&
          (opts.tcp === false ||
            (await dnsQuery(server, `ok.${zone}`, "A", { tcp: true, timeoutMs: 300 })).rcode ===
              "NOERROR"),
        { timeoutMs: 30_000, everyMs: 100, logFile },
      );
    } catch (e) {
      lastErr = e;
      await svc.stop();
      continue;
    }
    const n = (l: string) => `${l}.${zone}`;
    return {
      server,
      host: "127.0.0.1",
      port,
      zone,
      names: {
        ok: n("ok"),
        truncated: n("truncated"),
        partial: n("partial"),
        tcpSilent: n("tcpsilent"),
        tcpGarbage: n("tcpgarbage"),
        servfail: n("servfail"),
        refused: n("refused"),
        slow: n("slow"),
        minimal: n("minimal"),
        flaky: n("flaky"),
        silent: n("silent"),
        nxdomain: n("nonexistent"),
      },
      logFile,
      async queries() {
        const text = await Deno.readTextFile(logFile).catch(() => "");
        return text.split("\n").filter((l) => l.startsWith("query "));
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
