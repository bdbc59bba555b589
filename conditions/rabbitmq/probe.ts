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
  connectOrDescribe,
  dataStoreProbe,
  type SessionInput,
} from "../_common/datastore_probe.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { DriverSessions } from "../_common/driver.ts";
import { brokerName, describeAmqpError, judgeQueue, type ServerProperties } from "./errors.ts";
import type { RabbitmqOptions } from "./mod.ts";

/**
 * How long the TCP/TLS connect and the AMQP handshake may stay silent before
 * the attempt gives up by itself (an aborted attempt closes sooner).
 */
const HANDSHAKE_IDLE_MS = 10_000;

/** amqplib's connection (its channel model). */
type Connection = Awaited<ReturnType<typeof amqp.connect>>;

/** Makes the probe of one rabbitmq condition. */
export function create(options: RabbitmqOptions, env: ProbeEnv): Probe {
  const sessions = new DriverSessions<Connection>({
    end: (c) => c.close(),
    destroy,
  }, env.clock);
  return dataStoreProbe(options, sessions, session, (e, ctx) => ({
    status: "pending",
    error: describeAmqpError(e, {
      ...ctx,
      vhost: options.vhost,
      handshakeSeconds: HANDSHAKE_IDLE_MS / 1000,
    }),
  }));

  /** Opens the connection, checks the queue and closes; throws what the driver throws. */
  function session({ address, password = "", tls, signal }: SessionInput): Promise<ProbeResult> {
    signal.throwIfAborted();
    const o = options;
    // amqplib's connect takes no signal: the session ends at the abort, and the connection is
    // destroyed as soon as it opens (DriverSessions.run).
    const connecting = connectOrDescribe(() =>
      amqp.connect(
        {
          protocol: tls ? "amqps" : "amqp",
          hostname: address.hostname,
          port: address.port,
          username: o.user,
          password,
          // amqplib percent-decodes the vhost itself.
          vhost: encodeURIComponent(o.vhost),
          // The URL's options with their meaning; no heartbeats unless asked for.
          heartbeat: 0,
          ...o.tuning,
        },
        { timeout: HANDSHAKE_IDLE_MS, noDelay: true, ...tls },
      ), o.hp.hostname);
    return sessions.run(connecting, signal, async (conn, state) => {
      // Errors after the verdict (a broker closing, a socket reset) must not escape.
      conn.on("error", () => {});
      state.up = true;
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
    });
  }
}

/**
 * Destroys the connection's socket at once. amqplib has no forced close (its `close()` waits
 * for the broker's close-ok; amqp-node/amqplib#744 asked for one and was closed unmerged), so
 * this reaches the socket its connection keeps as `stream`.
 */
function destroy(conn: Connection): void {
  conn.on("error", () => {});
  (conn.connection as { stream?: { destroy?(): void } }).stream?.destroy?.();
}
