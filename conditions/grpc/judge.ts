/**
 * What grpc's answers mean: a Check's status against `--status`, a failed
 * Check or call (NOT_FOUND, UNIMPLEMENTED, the rest), and grpc-js's
 * UNAVAILABLE details as a short reason, thrown as `Unreachable` so that
 * the next address is tried (docs/contract.md §5 grpc). Pure: no I/O.
 *
 * @module
 */

import * as grpcJs from "@grpc/grpc-js";
import { describeError } from "../../engine/errors.ts";
import type { ProbeResult } from "../../engine/types.ts";
import { SOCKET_ERROR_TEXTS, tlsReason } from "../_common/nodeerr.ts";
import type { decodeResponse } from "./health.ts";
import type { GrpcOptions } from "./mod.ts";

/** A status as the health service names it, or a number it does not. */
export type Seen = ReturnType<typeof decodeResponse>;

/** A failure to reach the server (the next address is tried). */
export class Unreachable extends Error {
  override name = "Unreachable";
}

/** Whether `e` is a grpc-js call's failure (it carries a numeric status code). */
export function isServiceError(e: unknown): e is grpcJs.ServiceError {
  return e instanceof Error && typeof (e as Partial<grpcJs.ServiceError>).code === "number";
}

/**
 * A failed reflection stream (`method` undefined) or call judged: a failure to
 * reach the server is thrown as `Unreachable`; the rest is pending with its
 * status and details.
 */
export function judgeCallError(
  err: grpcJs.ServiceError,
  o: GrpcOptions,
  method: string | undefined,
): ProbeResult {
  const details = (err.details ?? "").trim();
  if (err.code === grpcJs.status.UNAVAILABLE) {
    throw new Unreachable(connectionReason(details, o.servername ?? o.hp.hostname));
  }
  const name = grpcJs.status[err.code] ?? String(err.code);
  const status = details === "" ? name : `${name}: ${details}`;
  if (method !== undefined) return { status: "pending", error: `${method}: ${status}` };
  if (err.code === grpcJs.status.UNIMPLEMENTED) {
    return {
      status: "pending",
      error:
        `the server has no reflection service (UNIMPLEMENTED: grpc.reflection.v1.ServerReflection)`,
    };
  }
  return { status: "pending", error: `server reflection: ${status}` };
}

/** The service as named in texts. */
function serviceText(o: GrpcOptions): string {
  return o.service === "" ? "server" : `service ${JSON.stringify(o.service)}`;
}

/** A Check answer judged against --status. */
export function judgeStatus(seen: Seen, o: GrpcOptions): ProbeResult {
  if (seen === o.status) return { status: "satisfied", detail: `${serviceText(o)} ${seen}` };
  return { status: "pending", error: `${serviceText(o)} ${seen}, expected ${o.status}` };
}

/**
 * A failed Check judged: NOT_FOUND is the unknown service (what --status
 * SERVICE_UNKNOWN waits for), UNIMPLEMENTED a server without the health
 * service; a failure to reach the server is thrown as `Unreachable`.
 */
export function judgeError(
  err: grpcJs.ServiceError,
  o: GrpcOptions,
): { result: ProbeResult; seen: Seen | undefined } {
  const details = (err.details ?? "").trim();
  switch (err.code) {
    case grpcJs.status.NOT_FOUND: {
      const why = details === "" ? "NOT_FOUND" : `NOT_FOUND: ${details}`;
      const result: ProbeResult = o.status === "SERVICE_UNKNOWN"
        ? { status: "satisfied", detail: `${serviceText(o)} SERVICE_UNKNOWN (${why})` }
        : {
          status: "pending",
          error: `${serviceText(o)} unknown to the server (${why}), expected ${o.status}`,
        };
      return { result, seen: "SERVICE_UNKNOWN" };
    }
    case grpcJs.status.UNIMPLEMENTED:
      return {
        result: {
          status: "pending",
          error: o.checkPath === undefined
            ? "the server has no health service (UNIMPLEMENTED: grpc.health.v1.Health)"
            : `the server does not implement ${o.checkPath.slice(1)} (UNIMPLEMENTED)`,
        },
        seen: undefined,
      };
    case grpcJs.status.UNAVAILABLE:
      throw new Unreachable(connectionReason(details, o.servername ?? o.hp.hostname));
  }
  const name = grpcJs.status[err.code] ?? String(err.code);
  return {
    result: { status: "pending", error: details === "" ? name : `${name}: ${details}` },
    seen: undefined,
  };
}

/**
 * grpc-js's UNAVAILABLE details (`No connection established. Last error:
 * Error: connect ECONNREFUSED 127.0.0.1:1 (time). Resolution note: ...`) as
 * the short reason: `connection refused`, `certificate not trusted (...)`.
 * `name` is the name the certificate was checked against.
 */
export function connectionReason(details: string, name = ""): string {
  let last = details.replace(/\.?\s*Resolution note:.*$/s, "");
  last = (/Last error: (.*)$/s.exec(last)?.[1] ?? last)
    .replace(/\s*\(\d{4}-\d\d-\d\dT[^)]*\)\s*$/, "").trim();
  const bracket = /^\w*Error \[(\w+)\]: /.exec(last)?.[1];
  last = last.replace(/^\w*Error(?: \[\w+\])?: /, "").replace(/\.$/, "");
  const tls = (bracket === undefined ? undefined : tlsReason(bracket, name)) ??
    tlsReason(last, name);
  if (tls !== undefined) return tls;
  const code = /\b(E[A-Z]{3,})\b/.exec(last)?.[1];
  if (code !== undefined && Object.hasOwn(SOCKET_ERROR_TEXTS, code)) {
    return SOCKET_ERROR_TEXTS[code]!;
  }
  if (last === "" || /^No connection established$/i.test(last)) return "no connection established";
  return describeError(last.replace(/^connect /, ""));
}
