/**
 * nats: the texts of failed attempts (docs/contract.md §5 nats). Every
 * failure is one a later state of the server can fix (a user or a stream
 * created late, JetStream turned on, a server restarting), so all are
 * pending; this module only gives them the server's own words. The client's
 * errors are told apart by name, so this module stays pure and is
 * unit-tested without the client or a server.
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import { authFailed, scrub } from "../_common/datastore.ts";
import { describeNodeError } from "../_common/nodeerr.ts";

/** What the attempt knows for the error text. */
export interface NatsErrorContext {
  /** The URL's user, when the login is a user's. */
  readonly user: string | undefined;
  /** The host as typed, for certificate errors. */
  readonly hostname: string;
  /** Every secret the text must not show (password, token), whatever its source. */
  readonly secrets: readonly (string | undefined)[];
  /** --stream. */
  readonly stream: string | undefined;
  /** Seconds the handshake (INFO to PONG) may take before the client gives up. */
  readonly handshakeSeconds: number;
  /** Seconds a JetStream request may take before the client gives up. */
  readonly jetStreamSeconds: number;
}

/** A failure of a JetStream request, after the connection was made (`cause` is the client's). */
export class JetStreamFailure extends Error {
  override name = "JetStreamFailure";
  constructor(readonly failure: unknown) {
    super(describeError(failure));
  }
}

/** The pending text of an attempt that failed with `e`. */
export function describeNatsError(e: unknown, ctx: NatsErrorContext): string {
  const text = (t: string) => scrub(t, ctx.secrets);
  if (e instanceof JetStreamFailure) return text(describeJetStream(e.failure, ctx));
  const name = (e as { name?: unknown } | null)?.name;
  const message = e instanceof Error ? e.message : String(e);
  switch (name) {
    case "AuthorizationError":
    case "UserAuthenticationExpiredError":
      return text(
        ctx.user === undefined
          ? `authentication failed: ${message}`
          : authFailed(ctx.user, message),
      );
    case "PermissionViolationError":
    case "ProtocolError":
    case "TlsRequiredError":
      return text(message);
    case "TimeoutError":
      return `no answer to the NATS handshake within ${ctx.handshakeSeconds}s`;
  }
  if (message === "server does not support 'tls'") {
    return "the server does not offer TLS (TLS was asked for with a tls:// URL or --tls)";
  }
  if (message === "unexpected response from server") {
    return "not a NATS server: its first line is not INFO";
  }
  // The server closed the connection before its INFO: the stock transport has no error to give.
  if (/^error connecting - node provided an undefined error$/.test(message)) {
    return "connection closed before the server's INFO";
  }
  const coded = withCode(e);
  if (coded !== undefined) return text(describeNodeError(coded, ctx.hostname));
  return text(describeError(e));
}

/** A JetStream request's failure as a text. */
function describeJetStream(e: unknown, ctx: NatsErrorContext): string {
  const name = (e as { name?: unknown } | null)?.name;
  const message = e instanceof Error ? e.message : String(e);
  switch (name) {
    case "JetStreamNotEnabled":
      // No responders on $JS.API: the server runs without JetStream; else the account has none.
      return message === "jetstream is not enabled"
        ? "JetStream is not enabled on the server"
        : `JetStream is not enabled: ${message}`;
    case "StreamNotFoundError":
      return `stream ${JSON.stringify(ctx.stream ?? "")} not found`;
    case "TimeoutError":
      return `no answer from the JetStream API within ${ctx.jetStreamSeconds}s`;
  }
  const coded = withCode(e);
  if (coded !== undefined) return describeNodeError(coded, ctx.hostname);
  return `JetStream: ${message}`;
}

/** `e` or the first of its causes that carries a node error code (ECONNREFUSED, a TLS code). */
function withCode(e: unknown): unknown {
  for (let c = e, depth = 0; c && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    if (typeof (c as { code?: unknown }).code === "string") return c;
  }
  return undefined;
}
