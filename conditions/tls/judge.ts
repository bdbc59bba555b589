/**
 * Judging a tls server's certificate: validity period, chain, name and
 * remaining validity, in that order. Pure (the time is passed in), so it is
 * tested without servers.
 *
 * @module
 */

import { formatDuration } from "../../engine/duration.ts";
import type { ProbeResult } from "../../engine/types.ts";
import { certificateNameHint } from "../_common/hints.ts";
import { trustReason } from "../_common/nodeerr.ts";
import { canonicalIp } from "../_common/net.ts";

const DAY = 86_400_000;

/** What the peer certificate says, in the form the checks need. */
export interface CertFacts {
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** subjectAltName as node prints it: `DNS:a.example, IP Address:10.0.0.1`. */
  readonly subjectAltName: string;
  /** Whether the chain verified against the trusted roots (or --ca-file). */
  readonly trusted: boolean;
  /** Why it did not (an OpenSSL-style code), when not trusted. */
  readonly trustError: string | undefined;
}

/** What to require of the certificate. */
export interface CertRequirements {
  /** The name to match: --servername or the target's host. */
  readonly name: string;
  readonly validForMs: number | undefined;
}

/**
 * Applies the checks in order: validity period, chain, name, remaining
 * validity. Pure (the time is passed in), so it is tested without servers.
 */
export function judgeCertificate(cert: CertFacts, want: CertRequirements, now: Date): ProbeResult {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  if (Number.isNaN(cert.notAfter.getTime()) || Number.isNaN(cert.notBefore.getTime())) {
    return { status: "pending", error: "certificate has unreadable validity dates" };
  }
  if (now < cert.notBefore) {
    return {
      status: "pending",
      error: `certificate is not yet valid (valid from ${cert.notBefore.toISOString()})`,
    };
  }
  if (now > cert.notAfter) {
    return { status: "pending", error: `certificate expired on ${cert.notAfter.toISOString()}` };
  }
  if (!cert.trusted) {
    return {
      status: "pending",
      error: `certificate chain not trusted: ${trustReason(cert.trustError)}`,
    };
  }
  if (!nameMatches(want.name, cert.subjectAltName)) {
    const names = cert.subjectAltName.trim() === ""
      ? "it has no subject alternative names"
      : `it is for ${cert.subjectAltName}`;
    return {
      status: "pending",
      error: `certificate name does not match ${want.name}: ${names}`,
      hint: certificateNameHint(want.name, { cert: { subjectaltname: cert.subjectAltName } }),
    };
  }
  const left = cert.notAfter.getTime() - now.getTime();
  if (want.validForMs !== undefined && left < want.validForMs) {
    return {
      status: "pending",
      error: `certificate expires in ${formatLeft(left)} (${
        day(cert.notAfter)
      }), less than --valid-for ${formatDuration(want.validForMs)}`,
    };
  }
  return {
    status: "satisfied",
    detail: `certificate for ${want.name} valid until ${day(cert.notAfter)} (${
      formatLeft(left)
    } left)`,
  };
}

/** Remaining time, coarse: `41d`, `12h`, `45m`, `30s`. */
export function formatLeft(ms: number): string {
  if (ms >= DAY) return `${Math.floor(ms / DAY)}d`;
  if (ms >= 3_600_000) return `${Math.floor(ms / 3_600_000)}h`;
  if (ms >= 60_000) return `${Math.floor(ms / 60_000)}m`;
  return `${Math.max(0, Math.floor(ms / 1000))}s`;
}

/**
 * A DNS name is matched against the DNS SANs (a `*.` wildcard stands for one
 * left-most label), an IP address against the IP SANs (docs/contract.md §5 tls).
 */
export function nameMatches(name: string, subjectAltName: string): boolean {
  const entries = subjectAltName.split(/,\s*/).map((e) => e.trim()).filter(Boolean);
  const ip = canonicalIp(name);
  if (ip !== undefined) {
    return entries.some((e) =>
      e.startsWith("IP Address:") && canonicalIp(e.slice("IP Address:".length)) === ip
    );
  }
  const host = name.toLowerCase().replace(/\.$/, "");
  return entries.some((e) => {
    if (!e.startsWith("DNS:")) return false;
    const pattern = e.slice(4).toLowerCase().replace(/\.$/, "");
    if (pattern === host) return true;
    if (pattern.startsWith("*.")) {
      const dot = host.indexOf(".");
      return dot > 0 && host.slice(dot + 1) === pattern.slice(2);
    }
    return false;
  });
}
