/**
 * redis: the text of a failed attempt (docs/contract.md §5 redis). Every
 * failure is pending: a server loading its dataset, a user created late, a
 * key set late, a role that changes on failover are all fixed by a later
 * state of the server. Pure, so the texts are unit-tested without a server.
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";
import { authFailed, scrub } from "../_common/datastore.ts";
import { describeNodeError } from "../_common/nodeerr.ts";
import type { ErrorContext } from "../_common/datastore_probe.ts";

/** What the attempt knows for the error text. */

/** An error reply of the server starts with an upper-case code (`WRONGPASS`, `LOADING`, `ERR`). */
const REPLY = /^[A-Z][A-Z_]+ /;

/** The result of an attempt that failed with `e`. */
export function judgeError(e: unknown, ctx: ErrorContext): ProbeResult {
  const message = e instanceof Error ? e.message : String(e);
  const text = (t: string) => scrub(t, ctx.secrets);
  if (/^(WRONGPASS|NOAUTH)\b/.test(message)) {
    return { status: "pending", error: text(authFailed(ctx.user ?? "default", message)) };
  }
  if (REPLY.test(message) && !(e as { code?: unknown } | null)?.code) {
    return { status: "pending", error: text(message) };
  }
  if (/socket closed unexpectedly/i.test(message)) {
    return { status: "pending", error: "the server closed the connection" };
  }
  return { status: "pending", error: text(describeNodeError(e, ctx.hostname)) };
}
