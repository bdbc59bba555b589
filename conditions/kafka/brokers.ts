/**
 * The kafka target: a comma list of bootstrap servers, each read as the
 * client reads one bootstrap broker string (docs/contract.md §5 kafka,
 * "Connection strings"). `@platformatic/kafka` takes an array of
 * `host[:port]` strings and parses each with its `parseBroker`: a
 * bracketed host with an optional port (`[::1]`, `[::1]:9093`), a bare
 * IPv6 address (more than one colon: the whole is the host), else `host`
 * or `host:port`; an empty or absent port is 9092. What that parser
 * returns but no connection can use is refused here at once, as a usage
 * error: a scheme (`kafka://h:9092` becomes the host `kafka://h`), a port
 * that is not 1-65535 in decimal digits (the client's `Number()` gives
 * NaN, 0 or a port node's `net` refuses; it would read a hex `0x2384` as
 * 9092, which no broker list writes), an empty host (node would connect to
 * localhost: a typo far more often than a wish), a host with blanks or
 * slashes, and several colons that are not an IPv6 address.
 * `conditions/kafka/brokers_test.ts` checks both readings side by side.
 *
 * Pure, and loads no library (the declaration uses it).
 *
 * @module
 */

import type { HostPort } from "../_common/net.ts";

/** The port of a broker string without one (the client's default). */
export const KAFKA_PORT = 9092;

/** The form usage errors name. */
export const KAFKA_FORM = "HOST:PORT[,HOST:PORT...]";

/**
 * The bootstrap servers of `text`, in order. Blanks around each entry are
 * dropped (the list is waitcmd's: the client takes an array). Throws an
 * `Error` naming the first problem.
 */
export function parseBrokers(text: string): HostPort[] {
  // A URL scheme or a listener name (`SASL_SSL://`, copied from advertised.listeners).
  if (/^[a-z][a-z0-9+._-]*:\/\//i.test(text)) {
    throw new Error(`expected ${KAFKA_FORM} (no scheme), got ${JSON.stringify(text)}`);
  }
  const parts = text.split(",").map((p) => p.trim());
  if (parts.some((p) => p === "")) {
    throw new Error(`expected ${KAFKA_FORM}, got ${JSON.stringify(text)}`);
  }
  return parts.map(parseBroker);
}

/** One broker string, as the client's `parseBroker` reads it, refusing what cannot connect. */
export function parseBroker(part: string): HostPort {
  const bad = () => new Error(`expected HOST[:PORT] or [IPv6]:PORT, got ${JSON.stringify(part)}`);
  let host: string;
  let port: string | undefined;
  const close = part.indexOf("]");
  if (part.startsWith("[") && close > 1) {
    host = part.slice(1, close);
    const rest = part.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) throw bad();
    port = rest.slice(1);
  } else {
    const first = part.indexOf(":");
    const last = part.lastIndexOf(":");
    if (first !== last) {
      // A bare IPv6 address: the whole is the host, the port the default.
      if (!isIPv6(part)) throw bad();
      host = part;
    } else if (first < 0) {
      host = part;
    } else {
      host = part.slice(0, first);
      port = part.slice(first + 1);
    }
  }
  if (host === "" || /[\s/\[\]]/.test(host) || (host.includes(":") && !isIPv6(host))) throw bad();
  return { hostname: host, port: readPort(port) };
}

/** An absent or empty port is 9092; else decimal digits, 1-65535. */
function readPort(text: string | undefined): number {
  if (text === undefined || text === "") return KAFKA_PORT;
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= 65535)) {
    throw new Error(`port must be from 1 to 65535, got ${JSON.stringify(text)}`);
  }
  return n;
}

/**
 * Whether `text` is an IPv6 address, a zone after `%` allowed, as node's `net.isIPv6` says
 * (brokers_test.ts checks both side by side), read with the URL parser's IPv6 grammar: importing
 * `node:net` here would start Deno's Node compatibility layer on the main thread for the
 * declaration alone (docs/performance.md, "Where the time to a verdict goes").
 */
export function isIPv6(text: string): boolean {
  const zone = text.indexOf("%");
  const address = zone < 0 ? text : text.slice(0, zone);
  if (zone >= 0 && !/^[0-9A-Za-z.:-]+$/.test(text.slice(zone + 1))) return false;
  if (!/^[0-9A-Fa-f:.]+$/.test(address) || !address.includes(":")) return false;
  try {
    new URL(`http://[${address}]/`);
    return true;
  } catch {
    return false;
  }
}
