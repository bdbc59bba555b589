/**
 * orch's failures: what went wrong talking to the API server, and whether a
 * retry can help; the API server's error answers as short texts.
 *
 * @module
 */

import { statusLine } from "../_common/http_status.ts";

/** Why a request failed. */
export type KubeErrorKind =
  /** An unreadable or invalid kubeconfig, or a file it names: may be fixed by the next attempt. */
  | "config"
  /**
   * No kubeconfig file at all (`--kubeconfig`, KUBECONFIG or the default path, outside a
   * cluster): no retry can fix it (docs/contract.md §5 orch).
   */
  | "missing"
  /** The kubeconfig names a context that does not exist: no retry can fix it. */
  | "context"
  /** Connection refused, DNS, TLS, reset, ...: retried. */
  | "network"
  /** 401 or 403: the credentials were refused (fatal). */
  | "auth"
  /** Any other HTTP error status. */
  | "http"
  /** The exec credential plugin or the token file failed. */
  | "credentials"
  /** A manifest's kind the server does not serve (yet: its CRD may be on its way): retried. */
  | "unserved";

/** A failed request, as a short lower-case text and a kind. */
export class KubeError extends Error {
  override name = "KubeError";

  constructor(
    readonly kind: KubeErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }

  /** No retry can fix it: refused credentials, no kubeconfig, an unknown context or resource type. */
  get fatal(): boolean {
    return this.kind === "auth" || this.kind === "context" || this.kind === "missing";
  }
}

/** The `message` of a Kubernetes `Status` body, else a snippet of the body. */
export function statusMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { message?: unknown };
    if (typeof j.message === "string" && j.message) return j.message;
  } catch {
    // not JSON
  }
  return body.trim().slice(0, 200);
}

/** `404 Not Found: deployments.apps "web" not found`. */
export function httpProblem(r: { status: number; text: string }): string {
  const msg = statusMessage(r.text);
  return msg ? `${statusLine(r.status)}: ${msg}` : statusLine(r.status);
}
