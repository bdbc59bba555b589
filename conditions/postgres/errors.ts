/**
 * postgres: which failures a retry can fix (docs/contract.md §5 postgres).
 * Everything a later server state can fix is pending with the server's own
 * text; a statement the server can never run is fatal. Pure, so the
 * decisions are unit-tested without a server.
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";
import { authFailed, scrub } from "../_common/datastore.ts";
import { describeNodeError } from "../_common/nodeerr.ts";
import type { ErrorContext } from "../_common/datastore_probe.ts";

/**
 * SQLSTATEs of class 42 (syntax error or access rule violation) that a
 * later state of the database fixes: a table, column, function, schema
 * object or privilege that migrations or a grant have not created yet.
 */
const PENDING_42: ReadonlySet<string> = new Set([
  "42P01", // undefined_table
  "42703", // undefined_column
  "42883", // undefined_function
  "42704", // undefined_object
  "42501", // insufficient_privilege
]);

/** SQLSTATEs of refused credentials (class 28). */
function isAuthState(code: string): boolean {
  return code.startsWith("28");
}

/** What the attempt knows for the error text. */

/** A PostgreSQL server error: `severity` and a five-character SQLSTATE `code`. */
function sqlState(e: unknown): string | undefined {
  const err = e as { code?: unknown; severity?: unknown } | null;
  return typeof err?.code === "string" && /^[0-9A-Z]{5}$/.test(err.code) &&
      typeof err.severity === "string"
    ? err.code
    : undefined;
}

/** The result of an attempt that failed with `e`. */
export function judgeError(e: unknown, ctx: ErrorContext<string>): ProbeResult {
  const message = e instanceof Error ? e.message : String(e);
  const text = (t: string) => scrub(t, ctx.secrets);
  const state = sqlState(e);
  if (state !== undefined) {
    if (isAuthState(state)) {
      // The server's own text already says it (`password authentication failed for user "app"`):
      // once is enough.
      const said = message.includes(`authentication failed for user ${JSON.stringify(ctx.user)}`);
      return { status: "pending", error: text(said ? message : authFailed(ctx.user, message)) };
    }
    if (state.startsWith("42") && !PENDING_42.has(state)) {
      return { status: "fatal", error: text(`${message} (SQLSTATE ${state})`) };
    }
    return { status: "pending", error: text(message) };
  }
  if (/client password must be a string|SASL.*password/i.test(message)) {
    return {
      status: "pending",
      error: text(authFailed(ctx.user, "the server asks for a password and none was given")),
    };
  }
  if (/does not support SSL/i.test(message)) {
    return { status: "pending", error: "the server does not support TLS (SSL) connections" };
  }
  if (/^Connection terminated/i.test(message)) {
    return { status: "pending", error: text(lowerFirst(message)) };
  }
  return { status: "pending", error: text(describeNodeError(e, ctx.hostname)) };
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}
