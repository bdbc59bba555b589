/**
 * Helpers shared by the network kinds: `host:port` targets and readable
 * connection errors.
 *
 * @module
 */

import type { KindInput } from "../engine/types.ts";

/** A parsed `host:port` or `[v6]:port`. */
export interface HostPort {
  readonly hostname: string;
  readonly port: number;
}

/** Parses `host:port` / `[v6]:port`, or returns an error text. */
export function parseHostPort(text: string): HostPort | string {
  const m = /^\[([0-9A-Fa-f:.%\w]+)\]:(\d+)$/.exec(text) ?? /^([^:\s/\[\]]+):(\d+)$/.exec(text);
  if (!m) return `expected HOST:PORT or [IPv6]:PORT, got ${JSON.stringify(text)}`;
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return `port must be from 1 to 65535, got ${JSON.stringify(m[2])}`;
  }
  return { hostname: m[1]!, port };
}

/** The target of `input` as host:port, failing with a usage error otherwise. */
export function hostPortTarget(input: KindInput): HostPort {
  const r = parseHostPort(input.target ?? "");
  if (typeof r === "string") input.fail(undefined, r);
  return r as HostPort;
}

/** `host:port`, bracketing IPv6 literals. */
export function formatHostPort(hp: HostPort): string {
  return hp.hostname.includes(":") ? `[${hp.hostname}]:${hp.port}` : `${hp.hostname}:${hp.port}`;
}

/**
 * A connection error as a short lower-case text: `connection refused`,
 * `no such file or directory`; the OS error number is dropped.
 */
export function describeError(e: unknown): string {
  let text = e instanceof Error ? e.message : String(e);
  text = text.replace(/\s*\(os error \d+\)/g, "").trim();
  if (/^failed to lookup address information/i.test(text)) {
    text = "cannot resolve host: " + text.replace(/^failed to lookup address information:\s*/i, "");
  }
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** Opens a TCP connection and closes it at once; resolves to an error text, or undefined on success. */
export async function tryConnect(hp: HostPort, signal: AbortSignal): Promise<string | undefined> {
  try {
    const conn = await Deno.connect({ hostname: hp.hostname, port: hp.port, signal });
    conn.close();
    return undefined;
  } catch (e) {
    if (signal.aborted) return "aborted";
    return describeError(e);
  }
}
