/**
 * The life of a driver's client in one attempt, the same for every driver
 * kind (postgres, mysql, redis, mongodb, rabbitmq, kafka, nats;
 * docs/contract.md §5, data stores): the client is made (or connected) for
 * the attempt (or for the stream a watcher follows), used, then closed
 * politely within a grace period; an abort destroys it at once, whatever it
 * is doing; the probe's `close` destroys every client still open. Nothing outlives the attempt. A kind keeps only
 * its session (what it asks the server) and its judge (what the answer
 * means). Loaded by probes only.
 *
 * @module
 */

import { onAbort } from "../../engine/abort.ts";
import type { Clock } from "../../engine/clock.ts";

/** How long a polite close may take before the client is destroyed. */
export const CLOSE_GRACE_MS = 500;

/** What the scaffold needs to know of a driver's client. */
export interface DriverClient<C> {
  /** Ends the session politely (Terminate, COM_QUIT, QUIT, close()); may wait for the server. */
  end(client: C): Promise<unknown>;
  /** Drops the connection at once, whatever it is doing; idempotent. */
  destroy(client: C): void;
}

/** What a session says about its client while it runs. */
export interface SessionState {
  /**
   * Whether the session with the server is up, so that closing it says goodbye instead of
   * destroying: set once connected, cleared when the driver reports the connection broken.
   */
  up: boolean;
}

/** The clients of one probe: each lives for one session of one attempt. */
export class DriverSessions<C> {
  readonly #open = new Set<C>();

  constructor(readonly driver: DriverClient<C>, readonly clock: Clock) {}

  /**
   * Runs `work` with `client` for one session and disposes of the client: politely (within
   * `CLOSE_GRACE_MS`) when the session is up and was not aborted, else destroyed at once.
   * `client` may still be connecting (a driver whose connect returns the client and takes no
   * signal, such as amqplib): the session then ends at once on abort, and the client is
   * destroyed as soon as it arrives. What `work` (or the connect) throws is thrown.
   */
  async run<T>(
    client: C | Promise<C>,
    signal: AbortSignal,
    work: (client: C, state: SessionState) => Promise<T>,
  ): Promise<T> {
    const c = client instanceof Promise ? await this.#arrival(client, signal) : client;
    this.#open.add(c);
    const state: SessionState = { up: false };
    const off = onAbort(signal, () => this.#destroy(c));
    try {
      signal.throwIfAborted();
      return await work(c, state);
    } finally {
      off();
      if (state.up && !signal.aborted) await this.#end(c);
      this.#destroy(c);
      this.#open.delete(c);
    }
  }

  /**
   * Like `run`, for a session that yields while it holds its client (a watcher following a
   * server's stream): the client is destroyed at the abort, when `work` ends or throws, and
   * when the consumer stops the generator; the probe's `close` destroys it if still open.
   */
  async *follow<T, R>(
    client: C,
    signal: AbortSignal,
    work: (client: C) => AsyncGenerator<T, R>,
  ): AsyncGenerator<T, R> {
    this.#open.add(client);
    const off = onAbort(signal, () => this.#destroy(client));
    try {
      return yield* work(client);
    } finally {
      off();
      this.#destroy(client);
      this.#open.delete(client);
    }
  }

  /** Destroys every client still open (the probe's `close`); idempotent. */
  close(): void {
    for (const c of this.#open) this.#destroy(c);
    this.#open.clear();
  }

  /** The client a connect brings, or a rejection at the abort (the client is then destroyed). */
  #arrival(connecting: Promise<C>, signal: AbortSignal): Promise<C> {
    return new Promise((resolve, reject) => {
      let aborted = false;
      const off = onAbort(signal, () => {
        aborted = true;
        reject(signal.reason);
      });
      connecting.then((c) => {
        off();
        if (aborted) this.#destroy(c);
        else resolve(c);
      }, (e: unknown) => {
        off();
        reject(e);
      });
    });
  }

  /** Ends the session politely, giving up after the grace. */
  async #end(c: C): Promise<void> {
    const done = new AbortController();
    await Promise.race([
      Promise.resolve().then(() => this.driver.end(c)).catch(() => {}),
      this.clock.sleep(CLOSE_GRACE_MS, done.signal),
    ]);
    done.abort();
  }

  #destroy(c: C): void {
    try {
      this.driver.destroy(c);
    } catch {
      // already gone
    }
  }
}
