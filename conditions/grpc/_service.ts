/**
 * The gRPC health server of the grpc kind's tests: the reference Go
 * implementation (google.golang.org/grpc/health) wrapped in a small program
 * kept in tests/services/grpc/ and built by scripts/services/build-grpc.sh
 * (cached). It serves h2c and, given a certificate, TLS, both with server
 * reflection and the unary method waitcmd.test.v1.Deploy/GetStatus
 * (tests/services/grpc/deploy.go); a bare listener has no service at all; an
 * HTTP control endpoint flips statuses and sets what GetStatus answers.
 *
 * ```ts
 * const s = await startGrpcServer({ tls: { certFile, keyFile } });
 * await s.setStatus("", "NOT_SERVING");
 * // ... waitcmd grpc s.h2c
 * await s.stop();
 * ```
 *
 * @module
 */

import { runBuildScript, startLogged } from "../../tests/services/_util.ts";

/** The grpc-go version the server is built with (keep in step with build-grpc.sh). */
export const GRPC_GO_VERSION = "v1.85.0";

/** Builds (or finds cached) the server; resolves to the binary's path. */
export function buildGrpcServer(): Promise<string> {
  return runBuildScript("build-grpc.sh", `gRPC health server, grpc-go ${GRPC_GO_VERSION}`);
}

/** A running health server. */
export interface GrpcServer {
  /** `127.0.0.1:PORT` of the plaintext (h2c) listener. */
  readonly h2c: string;
  /** `127.0.0.1:PORT` of the TLS listener, when started with a certificate. */
  readonly tls: string | undefined;
  /** `127.0.0.1:PORT` of a gRPC server without the health service. */
  readonly bare: string;
  readonly logFile: string;
  /** Sets a service's status (`""`: the server); SERVICE_UNKNOWN makes Check answer NOT_FOUND. */
  setStatus(service: string, status: string): Promise<void>;
  /** What Deploy/GetStatus answers for `name` (a name never set is STARTING, 0 replicas). */
  setDeploy(
    name: string,
    state: "STARTING" | "READY" | "STATE_UNKNOWN",
    replicas?: number,
    version?: string,
  ): Promise<void>;
  stop(): Promise<void>;
}

/** Options of {@link startGrpcServer}. */
export interface GrpcServerOptions {
  /** Serve TLS too, with this certificate and key. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  /** The h2c listener's address (default a free port on 127.0.0.1). */
  readonly h2c?: string;
  /** Every call must carry this `name: value` metadata, else UNAUTHENTICATED. */
  readonly requireHeader?: string;
}

/** Starts the health server; resolves once it listens. */
export async function startGrpcServer(opts: GrpcServerOptions = {}): Promise<GrpcServer> {
  const args = [
    "-h2c",
    opts.h2c ?? "127.0.0.1:0",
    "-bare",
    "127.0.0.1:0",
    "-control",
    "127.0.0.1:0",
  ];
  if (opts.tls) {
    args.push("-tls", "127.0.0.1:0", "-cert", opts.tls.certFile, "-key", opts.tls.keyFile);
  }
  if (opts.requireHeader) args.push("-require-header", opts.requireHeader);
  const addr: Record<string, string> = {};
  const svc = await startLogged({
    prefix: "waitcmd-grpc-",
    log: "grpc.log",
    what: "the gRPC health server",
    cmd: await buildGrpcServer(),
    args,
    async ready(logFile) {
      const text = await Deno.readTextFile(logFile);
      for (const m of text.matchAll(/^(h2c|tls|bare|control) (\S+)$/gm)) addr[m[1]!] = m[2]!;
      return /^ready$/m.test(text);
    },
  });
  return {
    h2c: addr.h2c!,
    tls: addr.tls,
    bare: addr.bare!,
    logFile: svc.logFile,
    async setStatus(service, status) {
      const q = new URLSearchParams({ service, status });
      const r = await fetch(`http://${addr.control}/status?${q}`, { method: "POST" });
      const text = await r.text();
      if (!r.ok) throw new Error(`setting ${service || "server"} to ${status}: ${text}`);
    },
    async setDeploy(name, state, replicas = 0, version = "0") {
      const q = new URLSearchParams({ name, state, replicas: String(replicas), version });
      const r = await fetch(`http://${addr.control}/deploy?${q}`, { method: "POST" });
      const text = await r.text();
      if (!r.ok) throw new Error(`setting deploy ${name} to ${state}: ${text}`);
    },
    stop: svc.stop,
  };
}
