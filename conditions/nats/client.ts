/**
 * nats's connection: the official client (`@nats-io/transport-node` and its
 * core) opening one connection to one address, with a transport of our own
 * in place of the stock `NodeTransport` for what the stock one does not do
 * here (docs/contract.md §5 nats):
 *
 * - an abort destroys the socket at once, whatever the connection is doing
 *   (connecting, reading INFO, the TLS handshake, CONNECT/PONG, a JetStream
 *   request); the stock transport cannot be reached before it connects;
 * - every socket it lets go keeps an error listener: under Deno, node:net
 *   can emit a late `read ECONNRESET` on a socket the client has destroyed
 *   after removing its listeners (a refused login, about one in ten), which
 *   would escape as an uncaught error;
 * - a server that requires TLS, with TLS off, fails with a clear error (the
 *   stock transport fails on a TypeError of its own).
 *
 * And nothing the library writes to the console (a parse failure's "reader
 * closed", a destroy that throws) reaches stdout or stderr.
 *
 * Imported with the probe module, before the run's clock starts
 * (docs/contract.md §2).
 *
 * @module
 */

import * as net from "node:net";
import {
  type ConnectionOptions,
  type NatsConnection,
  NatsConnectionImpl,
  setTransportFactory,
} from "@nats-io/transport-node";
import { nodeResolveHost, NodeTransport } from "@nats-io/transport-node/lib/node_transport.js";

/** Thrown when a server requires TLS and the condition has it off. */
export class TlsRequiredError extends Error {
  override name = "TlsRequiredError";
  constructor() {
    super("the server requires TLS (use a tls:// URL or --tls)");
  }
}

/** The options of one connection: the library's, and the attempt's signal. */
export interface OnceOptions extends ConnectionOptions {
  /** Aborted when the attempt ends: the socket is destroyed at once. */
  readonly attemptSignal: AbortSignal;
}

/** Does nothing: the error listener a socket keeps once the client let it go. */
function ignore(): void {}

/** Sockets already made to keep an error listener. */
const quieted = new WeakSet<net.Socket>();

/**
 * Makes `socket` keep an error listener for good: the client removes all
 * listeners of a socket before destroying it, and Deno may still emit an
 * error on it afterwards.
 */
function keepErrorListener(socket: net.Socket): void {
  if (quieted.has(socket)) return;
  quieted.add(socket);
  socket.on("error", ignore);
  const removeAll = socket.removeAllListeners;
  socket.removeAllListeners = function (this: net.Socket, event?: string | symbol) {
    // Node tells "all events" from an undefined event by the number of arguments.
    const r = event === undefined ? removeAll.call(this) : removeAll.call(this, event);
    if (event === undefined || event === "error") this.on("error", ignore);
    return r;
  };
}

/** The stock transport, abortable, whose sockets never throw late. */
class AttemptTransport extends NodeTransport {
  /** The socket while it connects (the stock transport keeps it to itself until then). */
  #dialing: net.Socket | undefined;
  /** Stops listening to the attempt's signal. */
  #release: () => void = ignore;

  override async connect(
    hp: { hostname: string; port: number; tlsName: string },
    options: OnceOptions,
  ): Promise<void> {
    const signal = options.attemptSignal;
    signal.throwIfAborted();
    const onAbort = () => this.#destroy();
    signal.addEventListener("abort", onAbort, { once: true });
    this.#release = () => signal.removeEventListener("abort", onAbort);
    try {
      await super.connect(hp, options);
    } catch (e) {
      this.#release();
      throw e;
    }
  }

  /** The stock dial, keeping the socket within reach of an abort. */
  override dial(hp: { hostname: string; port: number }): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.createConnection({ host: hp.hostname, port: hp.port, noDelay: true });
      keepErrorListener(socket);
      this.#dialing = socket;
      let failure: unknown;
      const onError = (e: unknown) => {
        failure = e;
      };
      const onClose = () => {
        this.#dialing = undefined;
        reject(failure ?? new Error("connection closed while connecting"));
      };
      socket.on("error", onError);
      socket.once("close", onClose);
      socket.once("connect", () => {
        socket.off("error", onError);
        socket.off("close", onClose);
        this.#dialing = undefined;
        resolve(socket);
      });
    });
  }

  override async startTLS(): Promise<import("node:tls").TLSSocket> {
    // The stock transport sets `tls: null` aside only when the server merely offers TLS.
    if (this.options.tls === null) throw new TlsRequiredError();
    const socket = await super.startTLS();
    keepErrorListener(socket);
    return socket;
  }

  override close(err?: Error): Promise<void> {
    this.#release();
    return super.close(err);
  }

  override discard(): void {
    this.#release();
    super.discard();
  }

  /** Destroys the socket, connecting or connected: the client then fails or closes at once. */
  #destroy(): void {
    const socket = this.#dialing ?? (this.socket as net.Socket | undefined);
    socket?.destroy();
  }
}

/**
 * Opens one connection (no reconnects, no other server of a cluster, no
 * randomising) with `options`; resolves once the server answered PONG.
 */
export function connectOnce(options: OnceOptions): Promise<NatsConnection> {
  muteLibraryConsole();
  // Set at each connection: the library's own connect() sets the stock transport globally.
  setTransportFactory({ factory: () => new AttemptTransport(), dnsResolveFn: nodeResolveHost });
  return NatsConnectionImpl.connect({
    ...options,
    reconnect: false,
    maxReconnectAttempts: 0,
    waitOnFirstConnect: false,
    ignoreClusterUpdates: true,
    noRandomize: true,
    debug: false,
  });
}

/** A frame of the client's code in a stack trace (npm cache, node_modules, compiled binary). */
const LIBRARY_FRAME = /[\\/]@nats-io[\\/+]/;

let muted = false;

/**
 * Drops console output whose caller is the client's code. The client writes
 * to the console on paths no option turns off ("reader closed" when the
 * server's bytes do not parse); our own output never goes through the
 * console. Installed once, for the process.
 */
export function muteLibraryConsole(): void {
  if (muted) return;
  muted = true;
  const target = console as unknown as Record<string, (...args: unknown[]) => void>;
  for (const method of ["log", "info", "warn", "error", "debug", "trace"]) {
    const original = target[method]!;
    target[method] = function (...args: unknown[]): void {
      if (LIBRARY_FRAME.test(new Error().stack ?? "")) return;
      original.apply(console, args);
    };
  }
}
