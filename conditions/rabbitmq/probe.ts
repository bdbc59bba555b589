/**
 * rabbitmq's probe: on each attempt, one amqplib connection (to each address
 * of the host in turn until one answers) opens the vhost, checks the queue
 * on a fresh channel, and is closed. No recovery, no reconnects: nothing
 * outlives the attempt, and an abort closes the connection at once (or as
 * soon as it opens).
 *
 * @module
 */

import amqp from "amqplib";
import {
  attemptEveryAddress,
  connectOrDescribe,
  untilAborted,
} from "../_common/datastore_probe.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import type { NodeTlsOptions } from "../_common/datastore.ts";
import type { HostPort } from "../_common/net.ts";
import { brokerName, describeAmqpError, judgeQueue, type ServerProperties } from "./errors.ts";
import type { RabbitmqOptions } from "./mod.ts";

/**
 * How long the TCP/TLS connect and the AMQP handshake may stay silent before
 * the attempt gives up by itself (an aborted attempt closes sooner).
 */
const HANDSHAKE_IDLE_MS = 10_000;
/** How long a polite connection.close may take before the socket is destroyed. */
const CLOSE_GRACE_MS = 500;

/** The part of amqplib's connection the probe uses. */
type Connection = Awaited<ReturnType<typeof amqp.connect>>;

/** Makes the probe of one rabbitmq condition. */
export function create(options: RabbitmqOptions, env: ProbeEnv): Probe {
  const open = new Set<Connection>();
  return {
    check: ({ signal }) =>
      attemptEveryAddress(
        options,
        signal,
        (address, password, tls) => session(address, password ?? "", tls, signal),
        (e, ctx) => ({
          status: "pending",
          error: describeAmqpError(e, {
            ...ctx,
            vhost: options.vhost,
            handshakeSeconds: HANDSHAKE_IDLE_MS / 1000,
          }),
        }),
      ),
    close() {
      for (const c of open) destroy(c);
      open.clear();
    },
  };

  /** Opens the connection, checks the queue and closes; throws what the driver throws. */
  async function session(
    address: HostPort,
    password: string,
    tls: NodeTlsOptions | undefined,
    signal: AbortSignal,
  ): Promise<ProbeResult> {
    signal.throwIfAborted();
    const o = options;
    const connecting = amqp.connect(
      {
        protocol: tls ? "amqps" : "amqp",
        hostname: address.hostname,
        port: address.port,
        username: o.user,
        password,
        // amqplib percent-decodes the vhost itself.
        vhost: encodeURIComponent(o.vhost),
        heartbeat: 0,
      },
      { timeout: HANDSHAKE_IDLE_MS, noDelay: true, ...tls },
    );
    let conn: Connection | undefined;
    // Aborted while connecting: close the connection as soon as it opens.
    const onAbort = () => {
      if (conn) destroy(conn);
      else connecting.then(destroy, () => {});
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      conn = await connectOrDescribe(() => untilAborted(connecting, signal), o.hp.hostname);
      open.add(conn);
      // Errors after the verdict (a broker closing, a socket reset) must not escape.
      conn.on("error", () => {});
      signal.throwIfAborted();
      const broker = brokerName(
        (conn.connection as { serverProperties?: ServerProperties }).serverProperties,
      );
      const tlsNote = tls ? ", TLS" : "";
      if (o.queue === undefined) {
        return {
          status: "satisfied",
          detail: `connected to ${broker} as ${JSON.stringify(o.user)}, vhost ${
            JSON.stringify(o.vhost)
          }${tlsNote}`,
        };
      }
      // A failed passive declare closes its channel and emits 'error' on it: a fresh
      // channel per check, with a listener.
      const channel = await conn.createChannel();
      channel.on("error", () => {});
      const reply = await channel.checkQueue(o.queue);
      const verdict = judgeQueue(o.queue, reply, o.minMessages, broker + tlsNote);
      return verdict.ok
        ? { status: "satisfied", detail: verdict.detail }
        : { status: "pending", error: verdict.error };
    } finally {
      signal.removeEventListener("abort", onAbort);
      if (conn) {
        await closeConnection(conn, env);
        open.delete(conn);
      }
    }
  }
}

/** Closes politely (connection.close), destroying the socket if that takes longer than the grace. */
async function closeConnection(conn: Connection, env: ProbeEnv): Promise<void> {
  const done = new AbortController();
  await Promise.race([
    conn.close().catch(() => {}),
    env.clock.sleep(CLOSE_GRACE_MS, done.signal),
  ]);
  done.abort();
  destroy(conn);
}

/** Destroys the connection's socket at once (idempotent). */
function destroy(conn: Connection): void {
  conn.on("error", () => {});
  const stream = (conn.connection as unknown as { stream?: { destroy?(): void } }).stream;
  try {
    stream?.destroy?.();
  } catch {
    // already gone
  }
}
