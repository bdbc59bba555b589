/**
 * rabbitmq: the texts of failed attempts (docs/contract.md §5 rabbitmq).
 * Every failure of an AMQP broker is one a later state can fix (a user or
 * vhost created late, a broker restarting), so all are pending; this module
 * only gives them the broker's own words. Pure, so it is unit-tested without
 * a broker.
 *
 * @module
 */

import { authFailed, scrub } from "../_common/datastore.ts";
import { describeNodeError } from "../_common/nodeerr.ts";

/** What the attempt knows for the error text. */
export interface ErrorContext {
  readonly user: string;
  readonly vhost: string;
  /** The host as typed, for certificate errors. */
  readonly hostname: string;
  /** Seconds the handshake may stay silent before the attempt gives up. */
  readonly handshakeSeconds: number;
  /** Every secret the text must not show (the password, whatever its source). */
  readonly secrets: readonly (string | undefined)[];
}

/** The quoted server text of an amqplib error (`... with message "NOT_FOUND - no queue 'x'"`). */
function serverText(message: string): string | undefined {
  return /with message "(.*)"\s*$/s.exec(message)?.[1];
}

/** The pending text of an attempt that failed with `e` (a connection, login or channel error). */
export function describeAmqpError(e: unknown, ctx: ErrorContext): string {
  const message = e instanceof Error ? e.message : String(e);
  const text = (t: string) => scrub(t, ctx.secrets);
  const code = (e as { code?: unknown } | null)?.code;
  // connection.close during the handshake: 403 is a refused login (RabbitMQ
  // does not say whether the user or the password is wrong).
  const handshake = /^Handshake terminated by server: (\d+) \(([A-Z-]+)\)/.exec(message);
  if (handshake) {
    const said = serverText(message) ?? `${handshake[1]} ${handshake[2]}`;
    if (handshake[1] === "403") return text(authFailed(ctx.user, said));
    return text(said);
  }
  // The broker closes the connection instead of opening the vhost; amqplib keeps no reason.
  if (/^Expected ConnectionOpenOk; got <ConnectionClose/.test(message)) {
    return text(
      `the broker refused to open vhost ${JSON.stringify(ctx.vhost)} ` +
        `(it does not exist yet, or user ${JSON.stringify(ctx.user)} has no permissions on it)`,
    );
  }
  // A channel closed by the broker: 404 NOT_FOUND (no queue), 403 ACCESS_REFUSED, ...
  if (typeof code === "number" && serverText(message) !== undefined) {
    return text(serverText(message)!);
  }
  if (/^SASL mechanism \S+ is not provided by the server/.test(message)) {
    return text(lowerFirst(message));
  }
  if (/^Socket closed abruptly during opening handshake/.test(message)) {
    return "connection closed during the AMQP handshake (not an AMQP port, or the broker is stopping)";
  }
  if (/^connect ETIMEDOUT$/.test(message)) {
    return `no answer to the AMQP handshake within ${ctx.handshakeSeconds}s`;
  }
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || /wrong version number/i.test(message)) {
    return "TLS handshake failed: the port does not speak TLS (plain AMQP?)";
  }
  if (/^Unexpected close$|^Connection closed/.test(message)) {
    return text(`connection closed by the broker: ${lowerFirst(message)}`);
  }
  return text(describeNodeError(e, ctx.hostname));
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** What a broker says about itself at connection start. */
export interface ServerProperties {
  readonly product?: unknown;
  readonly version?: unknown;
}

/** `RabbitMQ 3.10.8`, from the broker's connection.start properties ("AMQP broker" if absent). */
export function brokerName(props: ServerProperties | undefined): string {
  const str = (v: unknown) =>
    typeof v === "string" ? v : v instanceof Uint8Array ? new TextDecoder().decode(v) : "";
  const product = str(props?.product);
  const version = str(props?.version);
  return [product || "AMQP broker", version].filter(Boolean).join(" ");
}

/** The verdict on a queue's passive declare: satisfied detail, or pending text. */
export function judgeQueue(
  queue: string,
  reply: { readonly messageCount: number; readonly consumerCount: number },
  minMessages: number | undefined,
  broker: string,
): { ok: true; detail: string } | { ok: false; error: string } {
  const n = reply.messageCount;
  const counts = `${n} ${n === 1 ? "message" : "messages"}, ${reply.consumerCount} ${
    reply.consumerCount === 1 ? "consumer" : "consumers"
  }`;
  if (minMessages !== undefined && n < minMessages) {
    return {
      ok: false,
      error: `queue ${JSON.stringify(queue)} holds ${n} ready ${
        n === 1 ? "message" : "messages"
      }, waiting for at least ${minMessages}`,
    };
  }
  return { ok: true, detail: `queue ${JSON.stringify(queue)}: ${counts} (${broker})` };
}
