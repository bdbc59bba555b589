/**
 * svcmgr's D-Bus plumbing: one connection (dbus-next) to the bus systemd is
 * on, with bounded calls, signal listeners and a death notice. Imported with
 * the probe module, before the run's clock starts (docs/contract.md §2).
 *
 * @module
 */

import * as dbusNext from "dbus-next";
import type { Clock } from "../../engine/clock.ts";
import { describeError } from "../../engine/errors.ts";
import { ignoreStrays } from "../../engine/strays.ts";

/** The parts of dbus-next's message this module uses (its own .d.ts numbers types wrongly). */
export interface DbusMessage {
  type: number;
  path: string;
  interface: string;
  member: string;
  body: unknown[];
}

interface DbusBus {
  call(msg: DbusMessage): Promise<DbusMessage | null>;
  disconnect(): void;
  on(event: "connect", f: () => void): void;
  on(event: "error", f: (err: unknown) => void): void;
  on(event: "message", f: (msg: DbusMessage) => void): void;
  off(event: string, f: (...args: never[]) => void): void;
  _connection?: { stream?: { on(event: string, f: () => void): void; destroy?(): void } };
}

interface DbusModule {
  sessionBus(opts: { busAddress: string }): DbusBus;
  Message: new (m: {
    destination: string;
    path: string;
    interface: string;
    member: string;
    signature?: string;
    body?: unknown[];
  }) => DbusMessage;
}

const SIGNAL = 4; // dbus-next's MessageType.SIGNAL
/** systemd's bus name. */
export const SYSTEMD = "org.freedesktop.systemd1";
/** The manager's object path. */
export const MANAGER_PATH = "/org/freedesktop/systemd1";
/** The manager's interface. */
export const MANAGER = "org.freedesktop.systemd1.Manager";
/** The standard properties interface. */
export const PROPS = "org.freedesktop.DBus.Properties";
/** The interface every unit has. */
export const UNIT = "org.freedesktop.systemd1.Unit";
/** Bound on one call, so a bus that never answers cannot stall attempts. */
const BUS_TIMEOUT_MS = 5000;
/** Bound on connecting (socket, authentication, Hello): a local bus answers in milliseconds. */
const CONNECT_TIMEOUT_MS = 2000;

/**
 * Settles with `p`, or rejects when `signal` aborts or `ms` pass on `clock`,
 * whichever comes first.
 */
function bounded<T>(
  p: Promise<T>,
  signal: AbortSignal,
  clock: Clock,
  ms: number,
  what: string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = new AbortController();
    const onAbort = () => done(new Error("aborted"));
    const done = (err: Error | undefined, v?: T) => {
      if (timer.signal.aborted) return;
      timer.abort();
      signal.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve(v as T);
    };
    if (signal.aborted) return done(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    clock.sleep(ms, timer.signal).then(() =>
      done(new Error(`${what} timed out after ${ms / 1000}s`))
    );
    p.then((v) => done(undefined, v), (e) => done(e instanceof Error ? e : new Error(String(e))));
  });
}

let helloFilter = false;

/** The texts of the errors dbus-next reported on a bus's `error` event. */
const reported = new Set<string>();

/**
 * dbus-next answers a failed Hello (a peer that is no bus, a bus that says
 * no) by reporting the error as the connection's `error` event, which
 * `connect` handles, then rethrowing it as `new Error(err)` from a promise
 * nobody can await. Without this the stray rejection would end the run as an
 * internal error. It only matches an Error whose text is that of an error a
 * bus reported: the stack cannot tell, as its frames name the bundle's
 * chunks, not dbus-next's files, in the release build.
 */
function ignoreHelloRejections(): void {
  if (helloFilter) return;
  helloFilter = true;
  ignoreStrays(isHelloRethrow);
}

/** Records an error a bus reported (`error` event), whose rethrow is then a known stray. */
export function noteBusError(e: unknown): void {
  reported.add(String(e));
}

/** Whether `r` is dbus-next's rethrow (`new Error(err)`) of an error a bus reported. */
export function isHelloRethrow(r: unknown): boolean {
  return r instanceof Error && reported.has(r.message);
}

/** Whether `e` is an error reply of the bus or a peer (not a broken connection). */
export function isDbusError(e: unknown): boolean {
  return e instanceof Error && e.name === "DBusError" ||
    (typeof e === "object" && e !== null && "type" in e && "text" in e);
}

/** The text of a D-Bus error reply, else the error's own text. */
export function dbusErrorText(e: unknown): string {
  if (typeof e === "object" && e !== null && "text" in e && typeof e.text === "string") {
    return e.text;
  }
  return describeError(e);
}

/** A connection to the bus systemd is on. */
export class SystemdBus {
  #dead = false;
  readonly #listeners = new Set<(msg: DbusMessage) => void>();
  readonly #onDeath = new Set<() => void>();

  private constructor(
    private readonly bus: DbusBus,
    private readonly mod: DbusModule,
    private readonly clock: Clock,
  ) {
    bus.on("message", (msg) => {
      if (msg.type !== SIGNAL) return;
      for (const f of this.#listeners) f(msg);
    });
    bus.on("error", () => this.#die());
    bus._connection?.stream?.on("close", () => this.#die());
  }

  /** The connection broke or was closed; a new one is needed. */
  get dead(): boolean {
    return this.#dead;
  }

  #die(): void {
    if (this.#dead) return;
    this.#dead = true;
    for (const f of this.#onDeath) f();
  }

  /**
   * Connects (Hello done) or rejects with the reason; bounded in time, so
   * one connection attempt can be shared by callers that each stop waiting
   * on their own signal.
   */
  static async connect(address: string, clock: Clock): Promise<SystemdBus> {
    const mod = dbusNext as unknown as DbusModule;
    let bus: DbusBus;
    try {
      bus = mod.sessionBus({ busAddress: address });
    } catch (e) {
      throw new Error(`cannot use D-Bus address ${address}: ${describeError(e)}`);
    }
    ignoreHelloRejections();
    const connected = new Promise<void>((resolve, reject) => {
      bus.on("connect", () => resolve());
      bus.on("error", (e) => {
        noteBusError(e);
        reject(e);
      });
      // A peer that hangs up (no bus, refused authentication) may say nothing else.
      bus._connection?.stream?.on(
        "close",
        () => reject(new Error("connection closed by the peer")),
      );
    });
    try {
      await bounded(
        connected,
        new AbortController().signal,
        clock,
        CONNECT_TIMEOUT_MS,
        "connecting to D-Bus",
      );
    } catch (e) {
      // Destroy, not just end: a late answer to Hello must not be read any more.
      bus._connection?.stream?.destroy?.();
      try {
        bus.disconnect();
      } catch {
        // Never connected: nothing to close.
      }
      throw e;
    }
    return new SystemdBus(bus, mod, clock);
  }

  /** One method call; resolves to the reply's body. A failure that is not a D-Bus error kills the connection. */
  async call(
    path: string,
    iface: string,
    member: string,
    signature: string,
    body: unknown[],
    signal: AbortSignal,
    destination = SYSTEMD,
  ): Promise<unknown[]> {
    if (this.#dead) throw new Error("D-Bus connection closed");
    const msg = new this.mod.Message({
      destination,
      path,
      interface: iface,
      member,
      ...(signature ? { signature, body } : {}),
    });
    try {
      const reply = await bounded(
        this.bus.call(msg),
        signal,
        this.clock,
        BUS_TIMEOUT_MS,
        `D-Bus ${member}`,
      );
      return reply?.body ?? [];
    } catch (e) {
      if (!isDbusError(e) && !signal.aborted) this.close();
      throw e;
    }
  }

  /** Reads one property (the variant's value). */
  async get(path: string, iface: string, prop: string, signal: AbortSignal): Promise<unknown> {
    const [v] = await this.call(path, PROPS, "Get", "ss", [iface, prop], signal);
    return (v as { value?: unknown } | undefined)?.value;
  }

  /** Reads every property of `iface` at one moment (name -> the variant's value). */
  async getAll(path: string, iface: string, signal: AbortSignal): Promise<Map<string, unknown>> {
    const [dict] = await this.call(path, PROPS, "GetAll", "s", [iface], signal);
    const out = new Map<string, unknown>();
    const entries = dict instanceof Map
      ? [...dict.entries()]
      : Object.entries((dict ?? {}) as Record<string, unknown>);
    for (const [k, v] of entries) out.set(k, (v as { value?: unknown } | undefined)?.value);
    return out;
  }

  /** Asks the bus to route the signals matching `rule` to this connection. */
  addMatch(rule: string, signal: AbortSignal): Promise<unknown[]> {
    return this.call(
      "/org/freedesktop/DBus",
      "org.freedesktop.DBus",
      "AddMatch",
      "s",
      [rule],
      signal,
      "org.freedesktop.DBus",
    );
  }

  /** Calls `f` on every signal received; returns the unsubscribe function. */
  onSignal(f: (msg: DbusMessage) => void): () => void {
    this.#listeners.add(f);
    return () => this.#listeners.delete(f);
  }

  /** Calls `f` once the connection dies; returns the unsubscribe function. */
  onDeath(f: () => void): () => void {
    this.#onDeath.add(f);
    return () => this.#onDeath.delete(f);
  }

  /** Closes the connection. Idempotent. */
  close(): void {
    this.#die();
    try {
      this.bus.disconnect();
    } catch {
      // Already closed.
    }
  }
}

/** A level-triggered wake-up between a signal handler and the watch loop. */
export class Wake {
  #pending = false;
  #reload = false;
  #resolve: (() => void) | undefined;

  /** Wakes the loop; `reload` asks it to look the unit up again. */
  set(reload = false): void {
    this.#pending = true;
    this.#reload ||= reload;
    this.#resolve?.();
  }

  /** Waits for the next wake-up (or the abort of `signal`). */
  async next(signal: AbortSignal): Promise<{ reload: boolean }> {
    if (!this.#pending) {
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        signal.addEventListener("abort", onAbort, { once: true });
        this.#resolve = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
      });
      this.#resolve = undefined;
    }
    const reload = this.#reload;
    this.#pending = false;
    this.#reload = false;
    return { reload };
  }
}
