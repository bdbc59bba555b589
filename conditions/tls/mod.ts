/**
 * tls: a TLS server presents a certificate that is trusted, matches the name,
 * is currently valid and stays valid long enough.
 *
 * The probe (probe.ts) uses `node:tls` with verification turned off in the
 * handshake, then checks everything itself (judge.ts) so that last_error
 * names the check that failed.
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";
import { formatHostPort, type HostPort, hostPortTarget } from "../_common/net.ts";
import { EXTRA_CA_FLAG } from "../_common/roots.ts";

/** What a tls condition needs. */
export interface TlsOptions {
  /** The target; a host name is tried on every address it resolves to. */
  readonly hp: HostPort;
  /** --servername: the name sent (SNI) and verified instead of the target's host. */
  readonly servername: string | undefined;
  /** --ca-file, read at each attempt. */
  readonly caFile: string | undefined;
  /** --extra-ca-file, read at each attempt: trusted besides the default roots. */
  readonly extraCaFile: string | undefined;
  /** --valid-for, in milliseconds. */
  readonly validForMs: number | undefined;
}

/** The tls kind. */
export const tls = defineKind<TlsOptions>({
  name: "tls",
  aliases: [],
  summary: "a TLS certificate is trusted, matches the name and stays valid long enough",
  description:
    "Connects, completes a TLS handshake and checks the server certificate, in this order: it is within its validity period, its chain verifies against the default roots (and --extra-ca-file's CAs; or only --ca-file's), it matches the name (--servername, else the target's host: a DNS name against the DNS SANs, an IP address against the IP SANs), and it stays valid for at least --valid-for. last_error names the check that failed; every failure is retried (a certificate may be renewed). A host name is tried on every address it resolves to, IPv4 and IPv6; the first that accepts the connection decides.",
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
    EXTRA_CA_FLAG,
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
    {
      args: "tls proxy.internal:443 --extra-ca-file corp-ca.pem",
      description: "trust a company CA besides the default roots",
    },
  ],
  parse(input) {
    const hp = hostPortTarget(input, 443);
    const servername = input.string("servername");
    if (
      servername !== undefined && !/^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9.])?$/.test(servername)
    ) {
      input.fail("servername", `expected a DNS name, got ${JSON.stringify(servername)}`);
    }
    const caFile = input.string("ca-file");
    if (caFile === "") input.fail("ca-file", "expected a path, got an empty string");
    const extraCaFile = input.string("extra-ca-file");
    if (extraCaFile === "") input.fail("extra-ca-file", "expected a path, got an empty string");
    if (extraCaFile !== undefined && caFile !== undefined) {
      input.fail(
        "extra-ca-file",
        "cannot be combined with --ca-file, which trusts only its own CAs",
      );
    }
    return {
      target: formatHostPort(hp),
      options: { hp, servername, caFile, extraCaFile, validForMs: input.duration("valid-for") },
    };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});
