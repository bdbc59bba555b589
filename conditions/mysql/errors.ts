/**
 * mysql: which failures a retry can fix (docs/contract.md §5 mysql). MySQL
 * and MariaDB share these error numbers. Everything a later server state
 * can fix is pending with the server's own text; a statement the server can
 * never run is fatal. Pure, so the decisions are unit-tested without a server.
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";
import { authFailed, scrub } from "../_common/datastore.ts";
import { describeNodeError, tlsReason } from "../_common/nodeerr.ts";
import type { ErrorContext } from "../_common/datastore_probe.ts";

/** Refused logins: wrong password, unknown user, a password that must be changed first. */
const AUTH_ERRNOS: ReadonlySet<number> = new Set([
  1045, // ER_ACCESS_DENIED_ERROR
  1698, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
  1820, // ER_MUST_CHANGE_PASSWORD
  1862, // ER_MUST_CHANGE_PASSWORD_LOGIN
]);

/** Statements no state of the server can run. */
const FATAL_ERRNOS: ReadonlySet<number> = new Set([
  1064, // ER_PARSE_ERROR
  1149, // ER_SYNTAX_ERROR
  1065, // ER_EMPTY_QUERY
  1052, // ER_NON_UNIQ_ERROR (ambiguous column)
  1222, // ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT
  1241, // ER_OPERAND_COLUMNS
]);

/** What the attempt knows for the error text. */

/** A server error: mysql2 gives its number as `errno` and its name as `code`. */
function serverErrno(e: unknown): number | undefined {
  const err = e as { errno?: unknown; sqlState?: unknown } | null;
  return typeof err?.errno === "number" && err.errno >= 1000 && typeof err.sqlState === "string"
    ? err.errno
    : undefined;
}

/** The result of an attempt that failed with `e`. */
export function judgeError(e: unknown, ctx: ErrorContext<string>): ProbeResult {
  const message = e instanceof Error ? e.message : String(e);
  const text = (t: string) => scrub(t, ctx.secrets);
  const errno = serverErrno(e);
  if (errno !== undefined) {
    if (AUTH_ERRNOS.has(errno)) {
      return { status: "pending", error: text(refusedLogin(ctx.user, message)) };
    }
    if (FATAL_ERRNOS.has(errno)) {
      const code = (e as { code?: unknown }).code;
      return {
        status: "fatal",
        error: text(`${message} (${typeof code === "string" ? `${code} ` : ""}${errno})`),
      };
    }
    return { status: "pending", error: text(message) };
  }
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "HANDSHAKE_NO_SSL_SUPPORT") {
    return { status: "pending", error: "the server does not support TLS connections" };
  }
  if (code === "HANDSHAKE_SSL_ERROR") return { status: "pending", error: tlsText(message, ctx) };
  if (code === "PROTOCOL_CONNECTION_LOST") {
    return { status: "pending", error: "the server closed the connection" };
  }
  return { status: "pending", error: text(describeNodeError(e, ctx.hostname)) };
}

/**
 * A refused login's text, the user named once: the server's `Access denied
 * for user 'app'@'10.0.0.2' (using password: YES)` becomes `authentication
 * failed for user "app" from '10.0.0.2' (using password: YES)`; another
 * text (a password that must be changed) follows the common prefix.
 */
function refusedLogin(user: string, message: string): string {
  const head = `Access denied for user '${user}'@`;
  if (!message.startsWith(head)) return authFailed(user, message);
  return `${authFailed(user, "").slice(0, -2)} from ${message.slice(head.length)}`;
}

/**
 * The driver wraps a failed TLS handshake (HANDSHAKE_SSL_ERROR) and keeps
 * only node's message: read it back into the reasons of the other kinds.
 */
function tlsText(message: string, ctx: ErrorContext<string>): string {
  return tlsReason(message, ctx.hostname) ?? `TLS handshake failed: ${message}`;
}
