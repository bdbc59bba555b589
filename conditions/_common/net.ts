/**
 * Network addresses, shared by every kind that takes a host: one `host:port`
 * parser, one canonical IP form, and connecting to every address a name
 * resolves to (docs/contract.md §5: a name is tried on all its addresses,
 * IPv4 and IPv6; the first that answers decides).
 *
 * @module
 */

import { describeError, withHint } from "../../engine/errors.ts";
import type { KindInput } from "../../engine/types.ts";
import { noSuchHostHint, otherFamilyHint } from "./hints.ts";

/** A parsed `host:port` or `[v6]:port`. */
export interface HostPort {
  /** A DNS name or an IP literal, without brackets. */
  readonly hostname: string;
  readonly port: number;
}

/**
 * Parses `host:port` and `[v6]:port`; with `defaultPort`, also a bare host
 * or `[v6]`. Throws an `Error` whose message is the usage problem.
 */
export function parseHostPort(text: string, defaultPort?: number): HostPort {
  if (defaultPort !== undefined) {
    const bracket = /^\[([0-9A-Fa-f:.%\w]+)\]$/.exec(text);
    if (bracket) return { hostname: bracket[1]!, port: defaultPort };
    if (/^[^:\s/\[\]]+$/.test(text)) return { hostname: text, port: defaultPort };
  }
  const m = /^\[([0-9A-Fa-f:.%\w]+)\]:(\d+)$/.exec(text) ?? /^([^:\s/\[\]]+):(\d+)$/.exec(text);
  if (!m) throw new Error(`expected HOST:PORT or [IPv6]:PORT, got ${JSON.stringify(text)}`);
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`port must be from 1 to 65535, got ${JSON.stringify(m[2])}`);
  }
  return { hostname: m[1]!, port };
}

/** The target of `input` as host:port (bare host with `defaultPort`), failing with a usage error. */
export function hostPortTarget(input: KindInput, defaultPort?: number): HostPort {
  try {
    return parseHostPort(input.target ?? "", defaultPort);
  } catch (e) {
    return input.fail(undefined, (e as Error).message);
  }
}

/** `host:port`, bracketing IPv6 literals. */
export function formatHostPort(hp: HostPort): string {
  return hp.hostname.includes(":") ? `[${hp.hostname}]:${hp.port}` : `${hp.hostname}:${hp.port}`;
}

/**
 * Canonical text of an IP address (IPv4 dotted, IPv6 compressed lower case,
 * brackets removed), or undefined for anything that is not an IP literal.
 */
export function canonicalIp(text: string): string | undefined {
  // Asked again on every attempt for the same few targets: remembered (a target is its key).
  if (ipMemo.has(text)) return ipMemo.get(text);
  const ip = canonicalIpOf(text);
  if (ipMemo.size >= IP_MEMO_MAX) ipMemo.clear();
  ipMemo.set(text, ip);
  return ip;
}

const ipMemo = new Map<string, string | undefined>();
const IP_MEMO_MAX = 4096;

function canonicalIpOf(text: string): string | undefined {
  const t = text.replace(/^\[|\]$/g, "");
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(t)) {
    const parts = t.split(".").map(Number);
    return parts.every((p) => p <= 255) ? parts.join(".") : undefined;
  }
  if (!t.includes(":") || !/^[0-9A-Fa-f:.]+$/.test(t)) return undefined;
  try {
    // URL parsing normalises IPv6 (zeros compressed, lower case).
    return new URL(`http://[${t}]/`).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return undefined;
  }
}

/**
 * Every address `hostname` resolves to through the system resolver
 * (`/etc/hosts` included), IPv6 and IPv4 in the resolver's order; an IP
 * literal is itself, and `localhost` is 127.0.0.1 and ::1 whatever
 * `/etc/hosts` says. Throws `cannot resolve host NAME: ...` when the name
 * does not resolve.
 */
export async function resolveAll(hostname: string, signal?: AbortSignal): Promise<string[]> {
  const ip = canonicalIp(hostname);
  if (ip !== undefined) return [ip];
  const lower = hostname.toLowerCase().replace(/\.$/, "");
  if (lower === "localhost" || lower.endsWith(".localhost")) return ["127.0.0.1", "::1"];
  const { lookup } = await import("node:dns/promises");
  signal?.throwIfAborted();
  let found: { address: string }[];
  try {
    found = await lookup(hostname, { all: true, verbatim: true });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === "ENOTFOUND" ? "no such host" : code ?? (e as Error).message;
    const error = new Error(`cannot resolve host ${hostname}: ${why}`);
    throw code === "ENOTFOUND" ? withHint(error, noSuchHostHint(hostname)) : error;
  }
  if (found.length === 0) throw new Error(`cannot resolve host ${hostname}`);
  return [...new Set(found.map((a) => a.address))];
}

/**
 * The error codes of a connection after which a client tries the next address of the name
 * (refused, unreachable, no such address family, timed out): for `onEveryAddress`'s `tryNext`.
 */
export const NEXT_ADDRESS_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EAFNOSUPPORT",
  "ETIMEDOUT",
]);

/**
 * Runs `attempt` on each address of `hp` in turn until one succeeds and
 * returns its result. An error for which `tryNext` is false ends the loop at
 * once (a TLS failure says nothing about the next address). When every
 * address failed, the error is their common text (`connection refused`), or
 * one `address: text` per address when they differ.
 *
 * An IP literal is attempted at once, without an async frame of its own:
 * with a thousand attempts in flight, each suspended frame is held a
 * thousand times (docs/performance.md, "Cost per condition").
 */
export function onEveryAddress<T>(
  hp: HostPort,
  signal: AbortSignal,
  attempt: (address: HostPort) => Promise<T>,
  tryNext: (e: unknown) => boolean = () => true,
): Promise<T> {
  const ip = canonicalIp(hp.hostname);
  if (ip === undefined) return onResolvedAddresses(hp, signal, attempt, tryNext);
  try {
    signal.throwIfAborted();
    return attempt({ hostname: ip, port: hp.port });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The loopback address of the other IP family. */
const OTHER_LOOPBACK: Readonly<Record<string, string>> = { "127.0.0.1": "::1", "::1": "127.0.0.1" };

/** Per loopback address and port: refusals seen, the look under way, and what it found. */
const familyLooks = new Map<
  string,
  { refusals: number; looking: Promise<void> | undefined; hint: string | undefined }
>();

/** Whether `e` is a refused connection, from Deno or node:net. */
function refused(e: unknown): boolean {
  return e instanceof Deno.errors.ConnectionRefused ||
    (e as { code?: unknown } | null)?.code === "ECONNREFUSED";
}

/**
 * Rejects with `e`, with a hint when `e` refused a connection to a loopback address and the
 * other IP family's loopback accepts on that port (docs/contract.md §6, hints): a server that
 * listens on `::1` only is refused at `127.0.0.1`. Kinds call it on a failed attempt at
 * `address`. The other family is looked at on the first refusal and every tenth after (the
 * server may still be starting), so a condition refused for minutes costs one more connect in
 * ten, and a connection that succeeds costs nothing.
 */
export function loopbackRefusal(e: unknown, address: HostPort): Promise<never> {
  const ip = canonicalIp(address.hostname);
  const other = ip === undefined ? undefined : OTHER_LOOPBACK[ip];
  if (other === undefined || !refused(e) || !(e instanceof Error)) return Promise.reject(e);
  const key = `${ip} ${address.port}`;
  let look = familyLooks.get(key);
  if (look === undefined) {
    if (familyLooks.size >= 1024) familyLooks.clear();
    familyLooks.set(key, look = { refusals: 0, looking: undefined, hint: undefined });
  }
  if (look.refusals++ % 10 === 0) {
    const l = look;
    l.looking = Deno.connect({ hostname: other, port: address.port }).then((c) => {
      c.close();
      l.hint = otherFamilyHint(ip!, other, address.port);
    }, () => {
      l.hint = undefined;
    });
  }
  // Most refusals find the last look done: they reject at once, without a frame of their own.
  const looking = look.looking;
  if (looking === undefined) return Promise.reject(withHint(e, look.hint));
  const l = look;
  return looking.then(() => {
    if (l.looking === looking) l.looking = undefined;
    throw withHint(e, l.hint);
  });
}

/** `onEveryAddress` for a name, resolved first. */
async function onResolvedAddresses<T>(
  hp: HostPort,
  signal: AbortSignal,
  attempt: (address: HostPort) => Promise<T>,
  tryNext: (e: unknown) => boolean,
): Promise<T> {
  const addresses = await resolveAll(hp.hostname, signal);
  if (addresses.length === 1) {
    signal.throwIfAborted();
    return await attempt({ hostname: addresses[0]!, port: hp.port });
  }
  const failures: { address: string; text: string }[] = [];
  for (const [i, address] of addresses.entries()) {
    signal.throwIfAborted();
    try {
      return await attempt({ hostname: address, port: hp.port });
    } catch (e) {
      if (signal.aborted) throw e;
      failures.push({ address, text: describeError(e) });
      if (!tryNext(e)) {
        if (failures.length === 1) throw e;
        break;
      }
      if (i === addresses.length - 1) break;
    }
  }
  // The same failure everywhere reads as it would for one address.
  const texts = new Set(failures.map((f) => f.text));
  if (texts.size === 1) throw new Error(failures[0]!.text);
  throw new Error(failures.map((f) => `${f.address}: ${f.text}`).join("; "));
}

/** Closes a connection that was only opened to see that it could be. */
function closeConn(conn: { close(): void }): void {
  conn.close();
}

/** Opens a TCP connection to any address of `hp` and closes it at once; throws on failure. */
export function tryConnect(hp: HostPort, signal: AbortSignal): Promise<void> {
  return onEveryAddress(
    hp,
    signal,
    (address) =>
      Deno.connect({ hostname: address.hostname, port: address.port, signal }).then(closeConn),
  );
}

/**
 * `tryConnect` for the successive attempts of one probe, paying for
 * cancellation only once it is needed. Deno's connect with a signal makes a
 * cancel handle per call (an op to make it, one to close it): about 1.5 MB
 * and 15 ms of CPU in a run of 1,000 `tcp` conditions (docs/performance.md,
 * "Cost per condition"). Without it, an aborted attempt still ends at once
 * (the runner ends it, or `settle`), and the connect goes on until the peer
 * answers or the system gives up (about two minutes for a silent host); the
 * connection is then closed. An attempt's signal aborts during a connect when
 * the run ends, after which the process exits, or when the attempt times out.
 * So the signal is passed once a connect outlived its attempt (found still
 * under way when the next attempt connects: a silent host under
 * `--attempt-timeout`); from then on each connect is cancelled with its
 * attempt, and at most one per probe is left to the system's timeout.
 */
export class Connector {
  #underWay = 0;
  #cancel = false;
  readonly #dial: Dial;
  // Made once per probe: a thousand conditions connect without a closure per attempt here.
  readonly #connected = (conn: { close(): void }) => {
    this.#underWay--;
    closeConn(conn);
  };
  readonly #failed = (e: unknown): Promise<never> => {
    this.#underWay--;
    return loopbackRefusal(e, this.#target!);
  };
  /** The address being connected to (one probe connects to one target). */
  #target: HostPort | undefined;

  /** `dial` is Deno's connect; a test passes its own to see what is asked of it. */
  constructor(dial: Dial = Deno.connect) {
    this.#dial = dial;
  }

  /** Connects to any address of `hp` and closes the connection at once; throws on failure. */
  connect(hp: HostPort, signal: AbortSignal): Promise<void> {
    return onEveryAddress(hp, signal, (address) => {
      if (this.#underWay > 0) this.#cancel = true;
      const { hostname, port } = address;
      if (this.#cancel) {
        return this.#dial({ hostname, port, signal }).then(
          closeConn,
          (e) => loopbackRefusal(e, address),
        );
      }
      this.#target = address;
      this.#underWay++;
      return this.#dial({ hostname, port }).then(this.#connected, this.#failed);
    });
  }
}

/** What `Connector` connects with: `Deno.connect`, or a test's stand-in. */
export type Dial = (
  options: { hostname: string; port: number; signal?: AbortSignal },
) => Promise<{ close(): void }>;
