/**
 * grpc: a gRPC server's health service (`grpc.health.v1.Health/Check`)
 * answers with the expected status.
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";
import { type HeaderSpec, parseHeaderFlags } from "../_common/headers.ts";
import { formatHostPort, type HostPort, hostPortTarget } from "../_common/net.ts";

/** The statuses of grpc.health.v1, by name. */
export const SERVING_STATUSES = ["SERVING", "NOT_SERVING", "UNKNOWN", "SERVICE_UNKNOWN"] as const;

/** One of `SERVING_STATUSES`. */
export type ServingStatus = typeof SERVING_STATUSES[number];

/** What a grpc condition needs. */
export interface GrpcOptions {
  readonly hp: HostPort;
  /** The service asked about; "" is the server as a whole. */
  readonly service: string;
  /** The status that satisfies the condition. */
  readonly status: ServingStatus;
  readonly tls: boolean;
  readonly caFile: string | undefined;
  /** The name the certificate must hold (and SNI), when not the target's host. */
  readonly servername: string | undefined;
  readonly insecure: boolean;
  /** Call metadata (names in lower case). */
  readonly headers: readonly HeaderSpec[];
}

/** The grpc kind. */
export const grpc = defineKind<GrpcOptions>({
  name: "grpc",
  aliases: [],
  summary: "a gRPC server's health check answers SERVING (or another status)",
  description:
    'Calls grpc.health.v1.Health/Check for --service (default "", the whole server) and is satisfied when the answer is --status (default SERVING). A service the server does not know (NOT_FOUND) is pending, and satisfies --status SERVICE_UNKNOWN; a server without the health service (UNIMPLEMENTED), another status, a refused connection or a TLS failure is retried until the timeout. Plaintext (h2c) unless --tls. Where the server offers Health/Watch, a status change starts an attempt at once. A name is tried on every address it resolves to.',
  target: {
    shape: "required",
    placeholder: "HOST:PORT",
    description: "host name or IP address and port; IPv6 as [::1]:50051",
  },
  flags: [
    {
      name: "service",
      type: "string",
      placeholder: "NAME",
      description: 'service to ask about, e.g. my.pkg.Orders (default "": the whole server)',
    },
    {
      name: "status",
      type: "enum",
      values: SERVING_STATUSES,
      placeholder: "STATUS",
      description: "status that satisfies the condition (default SERVING)",
    },
    { name: "tls", type: "boolean", description: "connect with TLS (default: plaintext h2c)" },
    {
      name: "ca-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "trust the CA certificates of this PEM file (with --tls)",
    },
    {
      name: "servername",
      type: "string",
      placeholder: "NAME",
      description: "name to send (SNI) and to verify, when it differs from the host (with --tls)",
    },
    {
      name: "insecure",
      type: "boolean",
      description: "do not verify the server certificate (with --tls)",
    },
    {
      name: "header",
      type: "string",
      placeholder: "'NAME: VALUE'",
      repeatable: true,
      description: "call metadata; Authorization values and the like are secrets",
    },
  ],
  examples: [
    { args: "grpc localhost:50051", description: "wait until the server reports SERVING" },
    {
      args: "grpc api.internal:443 --tls --service orders.v1.Orders --ca-file ca.pem",
      description: "wait for one service, over TLS with a private CA",
    },
    {
      args: "grpc localhost:7233 --service temporal.api.workflowservice.v1.WorkflowService",
      description: "wait for a Temporal server (its frontend's health, as Temporal's SDKs ask it)",
    },
    {
      args: "not grpc localhost:50051 --status SERVING",
      description: "wait until the server stops serving (drained)",
    },
  ],
  parse(input) {
    const hp = hostPortTarget(input);
    const service = input.string("service") ?? "";
    if (/[\s]/.test(service)) {
      input.fail(
        "service",
        `expected a service name like pkg.Service, got ${JSON.stringify(service)}`,
      );
    }
    const status = (input.string("status") ?? "SERVING").toUpperCase() as ServingStatus;
    const tls = input.bool("tls");
    const caFile = input.string("ca-file");
    if (caFile === "") input.fail("ca-file", "expected a path, got an empty string");
    const servername = input.string("servername");
    if (
      servername !== undefined && !/^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9.])?$/.test(servername)
    ) {
      input.fail("servername", `expected a DNS name, got ${JSON.stringify(servername)}`);
    }
    const insecure = input.bool("insecure");
    for (const flag of ["ca-file", "servername", "insecure"]) {
      if (input.has(flag) && !tls) {
        input.fail(flag, "needs --tls (without it the connection is plaintext h2c)");
      }
    }
    if (insecure && caFile !== undefined) {
      input.fail("insecure", "cannot be combined with --ca-file");
    }
    const headers = parseHeaderFlags(input).map((h) => ({ ...h, name: h.name.toLowerCase() }));
    for (const h of headers) {
      if (!/^[0-9a-z_.-]+$/.test(h.name) || h.name.startsWith("grpc-")) {
        input.fail("header", `${JSON.stringify(h.name)} cannot be sent as gRPC metadata`);
      }
      if (h.name.endsWith("-bin")) {
        input.fail("header", `binary metadata (${h.name}) is not supported`);
      }
    }
    return {
      // As typed (docs/contract.md §1: display names).
      target: input.target ?? formatHostPort(hp),
      options: { hp, service, status, tls, caFile, servername, insecure, headers },
    };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});
