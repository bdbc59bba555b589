/**
 * Errors of `node:net`, `node:tls` and `node:http(s)` (http, tls, ssh, orch)
 * as the short lower-case reasons of docs/contract.md §8.
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";

/**
 * Why a chain is not trusted, by OpenSSL's verification code: the words
 * inside "certificate not trusted (...)", and tls's "chain not trusted: ...".
 */
const TRUST_WHY: Readonly<Record<string, string>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "unable to verify the first certificate",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "unknown issuer",
  UNABLE_TO_GET_ISSUER_CERT: "unknown issuer",
  SELF_SIGNED_CERT_IN_CHAIN: "self-signed certificate in the chain",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed certificate",
  CERT_SIGNATURE_FAILURE: "bad signature",
  CERT_REVOKED: "certificate revoked",
};

/** The reasons that are no matter of trust, by code. */
const VALIDITY: Readonly<Record<string, string>> = {
  CERT_HAS_EXPIRED: "certificate has expired",
  CERT_NOT_YET_VALID: "certificate is not yet valid",
};

/**
 * OpenSSL's verification messages as node:tls words them, by code: the
 * errors of clients that keep only the message are read back through them.
 */
const MESSAGE_CODES: Readonly<Record<string, string>> = {
  "self-signed certificate in certificate chain": "SELF_SIGNED_CERT_IN_CHAIN",
  "self signed certificate in certificate chain": "SELF_SIGNED_CERT_IN_CHAIN",
  "self-signed certificate": "DEPTH_ZERO_SELF_SIGNED_CERT",
  "self signed certificate": "DEPTH_ZERO_SELF_SIGNED_CERT",
  "unable to verify the first certificate": "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "unable to get local issuer certificate": "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "unable to get issuer certificate": "UNABLE_TO_GET_ISSUER_CERT",
  "certificate signature failure": "CERT_SIGNATURE_FAILURE",
  "certificate revoked": "CERT_REVOKED",
  "certificate has expired": "CERT_HAS_EXPIRED",
  "certificate is not yet valid": "CERT_NOT_YET_VALID",
};

/** Why a chain is not trusted, from OpenSSL's code (tls's `chain not trusted: ...`). */
export function trustReason(code: string | undefined): string {
  if (code === undefined) return "unknown reason";
  return TRUST_WHY[code] ?? code.toLowerCase().replaceAll("_", " ");
}

/**
 * A failed certificate verification as the one reason every kind gives
 * (docs/contract.md §8): from an error code (`CERT_HAS_EXPIRED`,
 * `ERR_TLS_CERT_ALTNAME_INVALID`) or from node:tls's message for it, which
 * is all some clients keep. `hostname` is the name the certificate was
 * checked against. Undefined when it is no verification failure.
 */
export function tlsReason(codeOrMessage: string, hostname = ""): string | undefined {
  const key = codeOrMessage.trim().replace(/\.$/, "");
  const lower = key.toLowerCase();
  if (
    key === "ERR_TLS_CERT_ALTNAME_INVALID" ||
    lower.startsWith("hostname/ip does not match certificate's altnames")
  ) {
    return `certificate is not valid for ${hostname}`;
  }
  const code = Object.hasOwn(MESSAGE_CODES, lower) ? MESSAGE_CODES[lower]! : key;
  if (Object.hasOwn(VALIDITY, code)) return VALIDITY[code];
  if (Object.hasOwn(TRUST_WHY, code)) return `certificate not trusted (${TRUST_WHY[code]})`;
  return undefined;
}

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
    case "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED":
      return "the server requires a client certificate (--client-cert)";
  }
  const tls = tlsReason(code, hostname);
  if (tls !== undefined) return tls;
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
