/**
 * tls: a TLS server presents a certificate that is trusted, matches the name,
 * is currently valid and stays valid long enough.
 *
 * Uses `node:tls` (its `getPeerCertificate()` works under Deno) with
 * verification turned off in the handshake, then checks everything itself so
 * that last_error names the check that failed.
 *
 * @module
 */

import type { ConditionKind, ProbeResult } from "../engine/types.ts";
import { formatDuration } from "../engine/duration.ts";
import { formatHostPort, type HostPort } from "./_net.ts";
import { describeNodeError, parseHostDefaultPort, readFlagFile } from "./_nodenet.ts";

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
    return { status: "pending", error: `certificate name does not match ${want.name}: ${names}` };
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

const TRUST_REASONS: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "unable to verify the first certificate",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "unknown issuer",
  UNABLE_TO_GET_ISSUER_CERT: "unknown issuer",
  SELF_SIGNED_CERT_IN_CHAIN: "self-signed certificate in the chain",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed certificate",
  CERT_SIGNATURE_FAILURE: "bad signature",
  CERT_REVOKED: "certificate revoked",
};

function trustReason(code: string | undefined): string {
  if (code === undefined) return "unknown reason";
  return TRUST_REASONS[code] ?? code.toLowerCase().replaceAll("_", " ");
}

/** Canonical text of an IP address (IPv6 expanded), or undefined for a DNS name. */
function canonicalIp(text: string): string | undefined {
  const t = text.replace(/^\[|\]$/g, "");
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(t)) {
    return t.split(".").every((p) => Number(p) <= 255)
      ? t.split(".").map(Number).join(".")
      : undefined;
  }
  if (!t.includes(":")) return undefined;
  try {
    // URL parsing normalises IPv6 (zeros compressed, lower case).
    return new URL(`http://[${t}]/`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * DECISIONS §10: a DNS name is matched against the DNS SANs (a `*.` wildcard
 * stands for one left-most label), an IP address against the IP SANs.
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

interface TlsSpec {
  readonly hp: HostPort;
  readonly servername: string | undefined;
  readonly caFile: string | undefined;
  readonly validForMs: number | undefined;
}

/** The tls kind. */
export const tls: ConditionKind = {
  name: "tls",
  aliases: [],
  summary: "a TLS certificate is trusted, matches the name and stays valid long enough",
  description:
    "Connects, completes a TLS handshake and checks the server certificate, in this order: it is within its validity period, its chain verifies against the system roots (or only --ca-file), it matches the name (--servername, else the target's host: a DNS name against the DNS SANs, an IP address against the IP SANs), and it stays valid for at least --valid-for. last_error names the check that failed; every failure is retried (a certificate may be renewed).",
  target: {
    shape: "required",
    placeholder: "HOST[:PORT]",
    description: "host name or IP address, port 443 by default; IPv6 as [::1]:443",
  },
  flags: [
    {
      name: "valid-for",
      type: "duration",
      placeholder: "DURATION",
      description: "the certificate must stay valid at least this long (30d, 12h, 1d12h)",
    },
    {
      name: "servername",
      type: "string",
      placeholder: "NAME",
      description: "name to send (SNI) and to verify, when it differs from the host",
    },
    {
      name: "ca-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "trust only the CA certificates of this PEM file",
    },
  ],
  examples: [
    {
      args: "tls api.example.com:443 --valid-for 30d",
      description: "wait for a certificate valid another 30 days",
    },
    {
      args: "tls 10.0.0.5:8443 --servername api.internal --ca-file ca.pem",
      description: "check a private-CA certificate by IP, for another name",
    },
  ],
  parse(input) {
    const hp = parseHostDefaultPort(input.target ?? "", 443);
    if (typeof hp === "string") input.fail(undefined, hp);
    const servername = input.string("servername");
    if (
      servername !== undefined && !/^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9.])?$/.test(servername)
    ) {
      input.fail("servername", `expected a DNS name, got ${JSON.stringify(servername)}`);
    }
    const caFile = input.string("ca-file");
    if (caFile === "") input.fail("ca-file", "expected a path, got an empty string");
    const spec: TlsSpec = {
      hp: hp as HostPort,
      servername,
      caFile,
      validForMs: input.duration("valid-for"),
    };
    return {
      target: formatHostPort(spec.hp),
      check: ({ signal }) => check(spec, signal),
    };
  },
};

async function check(spec: TlsSpec, signal: AbortSignal): Promise<ProbeResult> {
  let ca: string | undefined;
  if (spec.caFile !== undefined) {
    const text = await readFlagFile("ca-file", spec.caFile);
    if (typeof text !== "string") return { status: "pending", error: text.error };
    ca = text;
  }
  const nodeTls = await import("node:tls");
  const { isIP } = await import("node:net");
  const host = spec.hp.hostname;
  const name = spec.servername ?? host;
  return await new Promise<ProbeResult>((resolve) => {
    let done = false;
    const options: import("node:tls").ConnectionOptions = {
      host,
      port: spec.hp.port,
      rejectUnauthorized: false,
      // The name is checked below, so that `authorized` is about the chain only.
      checkServerIdentity: () => undefined,
    };
    if (isIP(name) === 0) options.servername = name;
    if (ca !== undefined) options.ca = ca;
    const socket = nodeTls.connect(options);
    const finish = (r: ProbeResult) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      socket.destroy();
      resolve(r);
    };
    const onAbort = () => finish({ status: "pending", error: "aborted" });
    signal.addEventListener("abort", onAbort, { once: true });
    socket.once("secureConnect", () => {
      const cert = socket.getPeerCertificate(false);
      if (!cert || Object.keys(cert).length === 0) {
        return finish({ status: "pending", error: "the server sent no certificate" });
      }
      const err = socket.authorizationError as unknown;
      const code = err instanceof Error ? (err as { code?: string }).code ?? err.message : err;
      finish(judgeCertificate(
        {
          notBefore: new Date(cert.valid_from),
          notAfter: new Date(cert.valid_to),
          subjectAltName: cert.subjectaltname ?? "",
          trusted: socket.authorized,
          trustError: typeof code === "string" ? code : undefined,
        },
        { name, validForMs: spec.validForMs },
        new Date(),
      ));
    });
    socket.once("error", (e) => finish({ status: "pending", error: describeNodeError(e, name) }));
    socket.once(
      "close",
      () => finish({ status: "pending", error: "connection closed during the TLS handshake" }),
    );
  });
}
