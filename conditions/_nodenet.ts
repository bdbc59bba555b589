/**
 * Helpers of the kinds built on `node:net`, `node:tls` and `node:http(s)`
 * (http, tls, ssh): targets with a default port, and node errors as short
 * lower-case reasons.
 *
 * @module
 */

import { describeError, type HostPort, parseHostPort } from "./_net.ts";

/** Parses `host:port`, `[v6]:port`, or a bare host / `[v6]` on `defaultPort`; or returns an error text. */
export function parseHostDefaultPort(text: string, defaultPort: number): HostPort | string {
  if (text === "") return `expected HOST:PORT or [IPv6]:PORT, got ""`;
  const bracket = /^\[([0-9A-Fa-f:.%\w]+)\]$/.exec(text);
  if (bracket) return { hostname: bracket[1]!, port: defaultPort };
  if (/^[^:\s/\[\]]+$/.test(text)) return { hostname: text, port: defaultPort };
  return parseHostPort(text);
}

/** Text of a file read at check time, or a short error naming the flag. */
export async function readFlagFile(
  flag: string,
  path: string,
): Promise<string | { error: string }> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? "no such file or directory"
      : describeError(e).replace(/: \w+ '.*'$/, "");
    return { error: `cannot read --${flag} ${path}: ${why}` };
  }
}

const TLS_REASONS: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "certificate not trusted (unable to verify the first certificate)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "certificate not trusted (unknown issuer)",
  SELF_SIGNED_CERT_IN_CHAIN: "certificate not trusted (self-signed certificate in the chain)",
  DEPTH_ZERO_SELF_SIGNED_CERT: "certificate not trusted (self-signed certificate)",
  CERT_HAS_EXPIRED: "certificate has expired",
  CERT_NOT_YET_VALID: "certificate is not yet valid",
};

/** A node:http(s) request error as a short lower-case text. */
export function describeNodeError(e: unknown, hostname: string): string {
  const code = (e as { code?: string }).code ?? "";
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset by peer";
    case "EHOSTUNREACH":
      return "host unreachable";
    case "ENETUNREACH":
      return "network unreachable";
    case "ETIMEDOUT":
      return "connection timed out";
    case "EPIPE":
      return "connection closed by peer";
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `certificate is not valid for ${hostname}`;
    case "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED":
      return "the server requires a client certificate (--client-cert)";
  }
  if (TLS_REASONS[code]) return TLS_REASONS[code]!;
  const msg = e instanceof Error ? e.message : String(e);
  if (/^socket hang up$/i.test(msg)) return "connection closed before a response";
  return describeError(msg.replace(/^connect \w+ \S+$/, code.toLowerCase()));
}
