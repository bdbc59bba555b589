/**
 * Errors of `node:net`, `node:tls` and `node:http(s)` (http, tls, ssh, orch)
 * as the short lower-case reasons of docs/contract.md §8.
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";

/** Certificate verification codes as reasons. */
export const TLS_REASONS: Readonly<Record<string, string>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "certificate not trusted (unable to verify the first certificate)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "certificate not trusted (unknown issuer)",
  SELF_SIGNED_CERT_IN_CHAIN: "certificate not trusted (self-signed certificate in the chain)",
  DEPTH_ZERO_SELF_SIGNED_CERT: "certificate not trusted (self-signed certificate)",
  CERT_HAS_EXPIRED: "certificate has expired",
  CERT_NOT_YET_VALID: "certificate is not yet valid",
};

/** The short lower-case texts of the socket errors every client meets, by error code. */
export const SOCKET_ERROR_TEXTS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by peer",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
};

/** A node:http(s) request error as a short lower-case text. */
export function describeNodeError(e: unknown, hostname: string): string {
  const code = (e as { code?: string }).code ?? "";
  const socket = Object.hasOwn(SOCKET_ERROR_TEXTS, code) ? SOCKET_ERROR_TEXTS[code] : undefined;
  if (socket !== undefined) return socket;
  switch (code) {
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
  // llhttp's `Parse Error: Expected HTTP/, RTSP/ or ICE/`: the bytes are no HTTP answer.
  if (code.startsWith("HPE_")) {
    const why = msg.replace(/^parse error:\s*/i, "");
    return `not an HTTP answer (${why.charAt(0).toLowerCase()}${why.slice(1)})`;
  }
  // `connect EMFILE 127.0.0.1:80`: describeError says what the code means.
  return describeError(e);
}
