/**
 * nats's probe: on each attempt, one connection of the official client (to
 * each address of the host in turn until one answers) goes through INFO,
 * CONNECT and PING/PONG, asks JetStream when the condition wants it, and is
 * closed. No reconnects and no other server of a cluster: nothing outlives
 * the attempt, and an abort destroys the socket at once (client.ts).
 *
 * @module
 */

import {
  type ConnectionOptions,
  credsAuthenticator,
  type NatsConnection,
  type TlsOptions,
} from "@nats-io/transport-node";
import { describeError } from "../../engine/errors.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { isConnectFailure } from "../_common/datastore.ts";
import {
  attemptEveryAddress,
  connectOrDescribe,
  type ErrorContext,
  type Session,
  type SessionInput,
} from "../_common/datastore_probe.ts";
import { DriverSessions } from "../_common/driver.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { formatHostPort, type HostPort } from "../_common/net.ts";
import { connectOnce } from "./client.ts";
import { describeNatsError, JetStreamFailure } from "./errors.ts";
import type { NatsOptions } from "./mod.ts";
import { commonJsExports } from "../../engine/commonjs.ts";

/** How long INFO to PONG may take before the client gives up by itself (an abort is sooner). */
const HANDSHAKE_MS = 10_000;
/** How long a JetStream request may take before the client gives up by itself. */
const JETSTREAM_MS = 5_000;

/** The JetStream client's module: imported only by conditions that ask JetStream. */
type JetStreamModule = typeof import("@nats-io/jetstream");

/**
 * Makes the probe of one nats condition. The JetStream client is imported
 * here, before the run's clock starts, and only when the condition asks
 * JetStream (docs/contract.md §2).
 */
export async function create(options: NatsOptions, env: ProbeEnv): Promise<Probe> {
  const js = options.jetstream
    ? commonJsExports(await import("@nats-io/jetstream") as JetStreamModule)
    : undefined;
  // An abort destroys the socket by itself (client.ts); closing flushes and says nothing more.
  const sessions = new DriverSessions<NatsConnection>({
    end: (nc) => nc.close(),
    destroy: (nc) => void nc.close().catch(() => {}),
  }, env.clock);
  const judge = (e: unknown, ctx: ErrorContext): ProbeResult => ({
    status: "pending",
    error: describeNatsError(e, {
      user: options.user,
      hostname: ctx.hostname,
      secrets: [...ctx.secrets, options.token],
      stream: options.stream,
      handshakeSeconds: HANDSHAKE_MS / 1000,
      jetStreamSeconds: JETSTREAM_MS / 1000,
    }),
  });
  return {
    check: ({ signal }) => everyServer(options, signal, (hp) => sessionOf(hp.hostname), judge),
    close: () => sessions.close(),
  };

  /** The session with one address of the server named `hostname`. */
  function sessionOf(hostname: string): Session {
    return (input) => session(input, hostname);
  }

  /** Connects, asks JetStream and closes; throws what the client throws. */
  async function session(
    { address, password, tls, signal }: SessionInput,
    hostname: string,
  ): Promise<ProbeResult> {
    const o = options;
    const login = await credentials(o, password);
    signal.throwIfAborted();
    const connecting = connectOrDescribe(
      () =>
        connectOnce({
          servers: formatHostPort(address),
          name: "waitcmd",
          timeout: HANDSHAKE_MS,
          // null: plain text even when the server offers TLS (the client would upgrade by itself).
          tls: tls === undefined ? null : tls as unknown as TlsOptions,
          attemptSignal: signal,
          ...login,
        }).catch((e: unknown) => {
          throw connectCause(e);
        }),
      hostname,
    );
    return await sessions.run(connecting, signal, async (nc, state) => {
      state.up = true;
      const parts = [`NATS ${nc.info?.version ?? "server"}`];
      if (js !== undefined) parts.push(await askJetStream(js, nc, o.stream));
      if (tls !== undefined) parts.push("TLS");
      return { status: "satisfied", detail: parts.join(", ") };
    });
  }
}

/**
 * One attempt over the target's servers, in the order written, as a NATS
 * client goes through its server list: each server on every address of its
 * name, until one answers. When none does, the error names each server with
 * its own failure (one server: its failure alone).
 */
export async function everyServer(
  o: NatsOptions,
  signal: AbortSignal,
  sessionFor: (hp: HostPort) => Session,
  judge: (e: unknown, ctx: ErrorContext) => ProbeResult,
): Promise<ProbeResult> {
  const failures: { hp: HostPort; result: ProbeResult & { status: "pending" | "fatal" } }[] = [];
  for (const hp of o.servers) {
    const result = await attemptEveryAddress({ ...o, hp }, signal, sessionFor(hp), judge);
    if (result.status === "satisfied" || o.servers.length === 1) return result;
    failures.push({ hp, result });
    if (signal.aborted) break;
  }
  const hint = failures.find((f) => f.result.hint !== undefined)?.result.hint;
  return {
    status: "pending",
    error: failures.map((f) => `${formatHostPort(f.hp)}: ${f.result.error}`).join("; "),
    ...(hint === undefined ? {} : { hint }),
  };
}

/** The login options: the URL's user and password, a token, or a credentials file's JWT and seed. */
async function credentials(
  o: NatsOptions,
  password: string | undefined,
): Promise<Partial<ConnectionOptions>> {
  if (o.user !== undefined) return { user: o.user, pass: password ?? "" };
  if (o.token !== undefined) return { token: o.token };
  if (o.credsFile === undefined) return {};
  const creds = new TextEncoder().encode(await readFlagFile("creds-file", o.credsFile));
  const authenticator = credsAuthenticator(creds);
  // Parsed and signed now: inside the handshake a bad file would only end in a timeout.
  try {
    authenticator("nonce");
  } catch (e) {
    throw new Error(`cannot use --creds-file ${o.credsFile}: ${describeError(e)}`);
  }
  return { authenticator };
}

/** JetStream's answer as a detail: the account's streams, or the stream's messages. */
async function askJetStream(
  js: JetStreamModule,
  nc: NatsConnection,
  stream: string | undefined,
): Promise<string> {
  try {
    const jsm = await js.jetstreamManager(nc, { checkAPI: false, timeout: JETSTREAM_MS });
    if (stream === undefined) {
      const info = await jsm.getAccountInfo();
      return `JetStream (${plural(info.streams, "stream")})`;
    }
    const info = await jsm.streams.info(stream);
    return `JetStream, stream ${JSON.stringify(stream)}: ${plural(info.state.messages, "message")}`;
  } catch (e) {
    throw new JetStreamFailure(e);
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * The node error under the client's "connection refused" (it wraps the
 * socket's error), so that the next address of a name is tried and the text
 * is the same as the other kinds'.
 */
function connectCause(e: unknown): unknown {
  const cause = (e as { cause?: unknown } | null)?.cause;
  return isConnectFailure(cause) ? cause : e;
}
