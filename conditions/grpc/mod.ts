/**
 * grpc: a gRPC server's health service (`grpc.health.v1.Health/Check`)
 * answers with the expected status.
 *
 * @module
 */

import { isCredentialName } from "../../engine/typed_secrets.ts";
import { defineKind, type KindInput } from "../../engine/types.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "../_common/jsonpath.ts";
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
  /** `--method`: a unary method called instead of the health check. */
  readonly call: GrpcCall | undefined;
  /** `--reflect` without `--method`: the server's reflection must describe `service` too. */
  readonly reflectService: boolean;
  /**
   * `--method` without `--reflect`: the path (`/pkg.S/M`) of a method that takes and answers
   * grpc.health.v1's messages, called instead of Health/Check.
   */
  readonly checkPath: string | undefined;
}

/** A unary method called with a request, its types found through server reflection. */
export interface GrpcCall {
  /** The full service name, `pkg.v1.Orders`. */
  readonly service: string;
  readonly method: string;
  /** The request in ProtoJSON (`--request`, default `{}`). */
  readonly request: Readonly<Record<string, unknown>>;
  /** `--jsonpath`: the response, in ProtoJSON, satisfies each (http's syntax). */
  readonly jsonpaths: readonly JsonPathExpr[];
}

/** A protobuf full name (`pkg.v1.Orders`) and a method name. */
const FULL_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const METHOD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The grpc kind. */
export const grpc = defineKind<GrpcOptions>({
  name: "grpc",
  aliases: [],
  summary: "a gRPC server's health check answers SERVING (or a unary method answers as expected)",
  description:
    'Calls grpc.health.v1.Health/Check for --service (default "", the whole server) and is satisfied when the answer is --status (default SERVING). A service the server does not know (NOT_FOUND) is pending, and satisfies --status SERVICE_UNKNOWN; a server without the health service (UNIMPLEMENTED), another status, a refused connection or a TLS failure is retried until the timeout. Plaintext (h2c) unless --tls. Where the server offers Health/Watch, a status change starts an attempt at once. A name is tried on every address it resolves to. With --method and --reflect a unary method is called instead: its message types are asked of the server reflection service (no .proto file needed), the request is --request (ProtoJSON, default {}), and the condition holds when the call succeeds and the response, in ProtoJSON, satisfies every --jsonpath; a method the server does not describe yet, a request that does not fit it, or an error status is pending. --reflect with --service and no --method also asks reflection to describe the service before the health check. --method without --reflect names a method that takes and answers the health check messages, judged as the health check is.',
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
    {
      name: "method",
      type: "string",
      placeholder: "SERVICE/METHOD",
      description:
        "call this unary method instead of the health check, e.g. pkg.v1.Orders/GetOrder; without --reflect it takes and answers the health check's messages",
    },
    {
      name: "reflect",
      type: "boolean",
      description:
        "find --method's message types through server reflection; without --method, reflection must also describe --service",
    },
    {
      name: "request",
      type: "string",
      placeholder: "JSON",
      description: "--method's request as a JSON object in ProtoJSON form (default {})",
    },
    {
      name: "jsonpath",
      type: "string",
      placeholder: "EXPR",
      repeatable: true,
      description:
        "--method's response, as ProtoJSON, satisfies an expression like '$.state == \"READY\"' (http's syntax); all given must hold",
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
      args:
        'grpc localhost:50051 --reflect --method deploy.v1.Deploy/GetStatus --request \'{"name":"web"}\' --jsonpath \'$.state == "READY"\'',
      description: "wait until a unary method answers READY (its types found by reflection)",
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
    const { call, checkPath } = parseCall(input);
    return {
      // As typed (docs/contract.md §1: display names).
      target: input.target ?? formatHostPort(hp),
      options: {
        ...{ hp, service, status, tls, caFile, servername, insecure, headers, call },
        reflectService: call === undefined && input.bool("reflect"),
        checkPath,
      },
    };
  },
  async validate(options, fail) {
    if (!options.call || options.call.jsonpaths.length === 0) return;
    const { validateJsonPaths } = await import("../_common/jsonpath_lib.ts");
    await validateJsonPaths(options.call.jsonpaths, fail);
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});

/**
 * `--method`, `--reflect`, `--request` and `--jsonpath`: the call (with `--reflect`), the path of
 * a health-shaped method (without), or neither for the health check.
 */
function parseCall(input: KindInput): { call?: GrpcCall; checkPath?: string } {
  const raw = input.string("method");
  if (raw === undefined) {
    for (const flag of ["request", "jsonpath"]) {
      if (input.has(flag)) input.fail(flag, "needs --method SERVICE/METHOD");
    }
    if (input.bool("reflect") && (input.string("service") ?? "") === "") {
      input.fail(
        "reflect",
        "needs --method SERVICE/METHOD, or --service NAME for reflection to describe",
      );
    }
    return {};
  }
  const at = raw.lastIndexOf("/");
  // `/pkg.Service/Method` (the path as gRPC writes it) is taken too.
  const service = raw.slice(raw.startsWith("/") ? 1 : 0, Math.max(at, 0));
  const method = raw.slice(at + 1);
  if (at < 0 || !FULL_NAME.test(service) || !METHOD_NAME.test(method)) {
    input.fail(
      "method",
      `expected SERVICE/METHOD like pkg.v1.Orders/GetOrder, got ${JSON.stringify(raw)}`,
    );
  }
  if (!input.bool("reflect")) {
    // Without reflection the types are grpc.health.v1's: a health check served under another name.
    for (const flag of ["request", "jsonpath"]) {
      if (input.has(flag)) {
        input.fail(
          flag,
          "needs --reflect (the method's message types come from server reflection)",
        );
      }
    }
    return { checkPath: `/${service}/${method}` };
  }
  for (const flag of ["service", "status"]) {
    if (input.has(flag)) {
      input.fail(
        flag,
        "cannot be combined with --method and --reflect (it asks the health service)",
      );
    }
  }
  const text = input.string("request") ?? "{}";
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch (e) {
    // Only where it broke: V8's message may quote the text, which may hold a token.
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    input.fail(
      "request",
      `expected a JSON object like '{"name":"web"}', got text that is not JSON${
        at === undefined ? "" : ` (at character ${Number(at) + 1})`
      }`,
    );
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    const what = request === null
      ? "null"
      : Array.isArray(request)
      ? "an array"
      : `a ${typeof request}`;
    input.fail("request", `expected a JSON object like '{"name":"web"}', got ${what}`);
  }
  registerCredentials(input, request);
  const jsonpaths = input.strings("jsonpath").map((expr) => {
    try {
      return parseJsonPathExpr(expr);
    } catch (e) {
      return input.fail("jsonpath", (e as Error).message);
    }
  });
  return { call: { service, method, request: request as Record<string, unknown>, jsonpaths } };
}

/**
 * The values of the request's credential-named members (`token`, `password`,
 * `api_key`, ...) are secrets, at any depth (docs/contract.md §9).
 */
function registerCredentials(input: KindInput, value: unknown, depth = 0): void {
  if (typeof value !== "object" || value === null || depth > 32) return;
  for (const [key, v] of Object.entries(value)) {
    if (isCredentialName(key) && (typeof v === "string" || typeof v === "number")) {
      input.secret(String(v));
    }
    registerCredentials(input, v, depth + 1);
  }
}
