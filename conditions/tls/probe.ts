/**
 * tls's probe: one TLS handshake per attempt through `node:tls` (its
 * `getPeerCertificate()` works under Deno), with verification left to
 * judge.ts. A host name is tried on each of its addresses until one accepts
 * the TCP connection; that address's handshake decides the attempt.
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { attemptRoots } from "../_common/roots.ts";
import { canonicalIp, type HostPort, onEveryAddress } from "../_common/net.ts";
import { describeNodeError } from "../_common/nodeerr.ts";
import { judgeCertificate } from "./judge.ts";
import type { TlsOptions } from "./mod.ts";

type NodeTls = typeof import("node:tls");

/** Makes the probe of one tls condition. */
export function create(options: TlsOptions, env: ProbeEnv): Probe {
  const name = options.servername ?? options.hp.hostname;
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const ca = await attemptRoots(options, env.env);
      const nodeTls = await import("node:tls");
      return await onEveryAddress(
        options.hp,
        signal,
        (address) => handshake(nodeTls, address, { name, ca, options }, signal),
      );
    },
  };
}

/**
 * One handshake with `address`. Rejects only when the TCP connection fails
 * (so the next address is tried); once connected, every outcome is a result.
 */
function handshake(
  nodeTls: NodeTls,
  address: HostPort,
  want: { name: string; ca: string | string[] | undefined; options: TlsOptions },
  signal: AbortSignal,
): Promise<ProbeResult> {
  const { name, ca, options } = want;
  return new Promise<ProbeResult>((resolve, reject) => {
    let done = false;
    let connected = false;
    const tlsOptions: import("node:tls").ConnectionOptions = {
      host: address.hostname,
      port: address.port,
      rejectUnauthorized: false,
      // The name is checked by judgeCertificate, so that `authorized` is about the chain only.
      checkServerIdentity: () => undefined,
    };
    if (canonicalIp(name) === undefined) tlsOptions.servername = name;
    if (ca !== undefined) tlsOptions.ca = ca;
    const socket = nodeTls.connect(tlsOptions);
    const finish = (r: ProbeResult | Error) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      socket.destroy();
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    const onAbort = () => finish(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    socket.once("connect", () => {
      connected = true;
    });
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
        { name, validForMs: options.validForMs },
        new Date(),
      ));
    });
    socket.once("error", (e) => {
      const text = describeNodeError(e, name);
      finish(connected ? { status: "pending", error: text } : new Error(text));
    });
    socket.once("close", () => {
      const text = "connection closed during the TLS handshake";
      finish(connected ? { status: "pending", error: text } : new Error(text));
    });
  });
}
