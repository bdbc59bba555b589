/**
 * One UDP request and its reply, for udp and ntp (docs/contract.md §5):
 * the datagram goes to every address the host resolves to at once, and the
 * first reply that `accept`s decides. Replies that do not are skipped
 * (counted, the last one kept for the error) until one does or the window
 * ends. Built on `node:dgram`: Deno's own datagram API needs
 * `--unstable-net`, which waitcmd does not run with.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { describeError } from "../../engine/errors.ts";
import { type HostPort, resolveAll } from "./net.ts";

/** What a window of listening gave. */
export interface UdpReply {
  /** The accepted reply. */
  readonly data: Uint8Array;
  /** The address it came from. */
  readonly from: HostPort;
  /** Replies skipped before it. */
  readonly skipped: number;
}

/** Why no reply was accepted: the message is the short reason. */
export class NoReply extends Error {
  override name = "NoReply";
  /** Replies that came but were not accepted. */
  readonly skipped: number;
  /** The last of them, if any. */
  readonly last: Uint8Array | undefined;
  /** Why the last of them was not accepted. */
  readonly why: string | undefined;

  constructor(message: string, skipped = 0, last?: Uint8Array, why?: string) {
    super(message);
    this.skipped = skipped;
    this.last = last;
    this.why = why;
  }
}

/** Options of `udpExchange`. */
export interface ExchangeOptions {
  readonly clock: Clock;
  readonly signal: AbortSignal;
  /** Longest wait for an accepted reply, in milliseconds. */
  readonly windowMs: number;
  /** The window as users read it (`1s`), for the error. */
  readonly windowText: string;
  /** Undefined to accept a reply, else why it is skipped. */
  readonly accept: (data: Uint8Array) => string | undefined | Promise<string | undefined>;
  /** Makes the payload for one address (ntp stamps it), else `payload` is sent. */
  readonly payloadFor?: (address: HostPort) => Uint8Array;
}

type Dgram = typeof import("node:dgram");

/**
 * Sends `payload` to every address of `hp` and resolves with the first reply
 * `accept` takes. Throws a `NoReply` (no reply, or none accepted, within the
 * window), `connection refused` when every address answered with an ICMP
 * port unreachable (where the runtime reports one), or the resolver's error.
 */
export async function udpExchange(
  hp: HostPort,
  payload: Uint8Array,
  o: ExchangeOptions,
): Promise<UdpReply> {
  const { signal, clock } = o;
  const deadline = clock.now() + o.windowMs;
  const addresses = await resolveAll(hp.hostname, signal);
  signal.throwIfAborted();
  const dgram: Dgram = await import("node:dgram");
  const sockets: import("node:dgram").Socket[] = [];
  const stop = new AbortController();
  let skipped = 0;
  let last: Uint8Array | undefined;
  let lastWhy: string | undefined;
  let refused = 0;
  let judging: Promise<void> = Promise.resolve();
  const failures: string[] = [];
  try {
    const reply = await new Promise<UdpReply | undefined>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      stop.signal.addEventListener("abort", () => signal.removeEventListener("abort", onAbort));
      const failed = (address: string, e: unknown) => {
        const code = (e as { code?: string }).code;
        if (code === "ECONNREFUSED") refused++;
        failures.push(code === "ECONNREFUSED" ? "connection refused" : describeError(e));
        if (failures.length === addresses.length) {
          const texts = new Set(failures);
          reject(new Error(texts.size === 1 ? failures[0]! : `${address}: ${failures.at(-1)}`));
        }
      };
      for (const address of addresses) {
        const s = dgram.createSocket(address.includes(":") ? "udp6" : "udp4");
        sockets.push(s);
        // `on`, not `once`: a later error without a listener would end the process.
        s.on("error", (e) => failed(address, e));
        s.on("message", (msg: Uint8Array, rinfo: { address: string; port: number }) => {
          if (rinfo.port !== hp.port) return; // not from the server's port: not its reply
          const data = new Uint8Array(msg);
          // Judged in arrival order; a rejection (an abort) is the run's, not a reply's.
          judging = judging.then(async () => {
            const why = await o.accept(data);
            if (why === undefined) {
              resolve({ data, from: { hostname: rinfo.address, port: rinfo.port }, skipped });
              return;
            }
            skipped++;
            last = data;
            lastWhy = why;
          }).catch(reject);
        });
        s.connect(hp.port, address, () => {
          const bytes = o.payloadFor?.({ hostname: address, port: hp.port }) ?? payload;
          s.send(bytes, (e) => {
            if (e) failed(address, e);
          });
        });
      }
      const left = deadline - clock.now();
      clock.sleep(Math.max(0, left), stop.signal).then(() => resolve(undefined));
    });
    if (reply) return reply;
    if (refused === addresses.length) throw new Error("connection refused");
    if (skipped > 0) {
      throw new NoReply(
        `no matching reply within ${o.windowText} (${skipped} skipped)`,
        skipped,
        last,
        lastWhy,
      );
    }
    throw new NoReply(`no reply within ${o.windowText}`);
  } finally {
    stop.abort();
    for (const s of sockets) {
      try {
        s.close();
      } catch {
        // already closed
      }
    }
  }
}
