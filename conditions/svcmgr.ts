/**
 * svcmgr (alias systemd): a systemd unit is active, inactive or failed.
 *
 * Asks the service manager through its D-Bus API (org.freedesktop.systemd1:
 * `LoadUnit`, then the unit's ActiveState/SubState/LoadState), on the system
 * bus or, with `--user`, the user's session bus. `PropertiesChanged` signals
 * of the unit ask for an attempt at once. When the bus cannot be reached,
 * `systemctl [--user] show` answers instead (it also knows systemd's private
 * socket, which works without a D-Bus daemon).
 *
 * @module
 */

import { realClock } from "../engine/clock.ts";
import { ignoreStrays } from "../engine/strays.ts";
import type { ConditionKind, KindInput, ProbeResult, WatchContext } from "../engine/types.ts";
import { describeError } from "./_net.ts";

/** Unit types systemd knows; a name without one of these suffixes gets `.service`. */
export const UNIT_TYPES: readonly string[] = [
  "service",
  "socket",
  "device",
  "mount",
  "automount",
  "swap",
  "target",
  "path",
  "timer",
  "slice",
  "scope",
];

/** The state a wait asks for. */
export type UnitWant = "active" | "inactive" | "failed";

/** What the manager says about a unit. */
export interface UnitState {
  /** loaded, not-found, masked, error, bad-setting, merged, stub. */
  readonly load: string;
  /** active, reloading, inactive, failed, activating, deactivating, maintenance, refreshing. */
  readonly active: string;
  /** Type-specific: running, dead, exited, failed, listening, start-pre, ... */
  readonly sub: string;
  /** The unit's Result (exit-code, signal, ...), when it has one and it is known. */
  readonly result?: string;
}

const UNIT_NAME_CHARS = /^[A-Za-z0-9:_.\\@-]+$/;
const EXPECTED = "expected a unit name like nginx or nginx.service";

/**
 * The full unit name for `text` (`.service` appended when it has no unit-type
 * suffix), or an error text for a usage error.
 */
export function normalizeUnitName(text: string): string | { error: string } {
  if (text === "") return { error: `${EXPECTED}, got an empty string` };
  if (!UNIT_NAME_CHARS.test(text)) {
    return {
      error: `${EXPECTED}, got ${JSON.stringify(text)} (allowed: letters, digits and :_.\\@-)`,
    };
  }
  const dot = text.lastIndexOf(".");
  const suffix = dot >= 0 ? text.slice(dot + 1) : "";
  const name = UNIT_TYPES.includes(suffix) ? text : `${text}.service`;
  const prefix = name.slice(0, name.lastIndexOf("."));
  if (prefix === "" || prefix.startsWith("@") || prefix.startsWith(".")) {
    return { error: `${EXPECTED}, got ${JSON.stringify(text)}` };
  }
  if (prefix.endsWith("@")) {
    return {
      error: `${JSON.stringify(text)} is a template; name an instance like ${
        prefix.slice(0, -1)
      }@1.${name.slice(name.lastIndexOf(".") + 1)}`,
    };
  }
  if (name.length > 255) return { error: "unit name is longer than 255 characters" };
  return name;
}

/** `active (running)`, with the result of a failed unit: `failed (failed, result exit-code)`. */
export function describeUnitState(st: UnitState): string {
  const result = st.active === "failed" && st.result && st.result !== "success"
    ? `, result ${st.result}`
    : "";
  return `${st.active} (${st.sub}${result})`;
}

/** Decides an attempt from the unit's state. */
export function judgeUnit(st: UnitState, want: UnitWant): ProbeResult {
  // A unit that is neither loaded nor running (in any state) is missing.
  if (st.load === "not-found" && st.active === "inactive") {
    return { status: "pending", error: "unit not found" };
  }
  const ok = want === "active"
    ? st.active === "active" || st.active === "reloading"
    : st.active === want;
  const text = describeUnitState(st);
  if (ok) return { status: "satisfied", detail: text };
  const load = st.load === "loaded" || st.load === "" ? "" : `; unit ${st.load}`;
  return { status: "pending", error: text + load };
}

/** The D-Bus address of the manager: the session bus for `--user`, else the system bus. */
export function busAddress(user: boolean, env: Readonly<Record<string, string>>): string {
  const pick = (address: string) =>
    // dbus-next only tries the next of several addresses on a synchronous
    // failure (and warns on stderr); take the first one it can use.
    address.split(";").find((a) => /^(unix|tcp):/.test(a)) ?? address.split(";")[0] ?? address;
  if (user) {
    if (env.DBUS_SESSION_BUS_ADDRESS) return pick(env.DBUS_SESSION_BUS_ADDRESS);
    const runtime = env.XDG_RUNTIME_DIR || `/run/user/${Deno.uid() ?? 0}`;
    return `unix:path=${runtime}/bus`;
  }
  return pick(env.DBUS_SYSTEM_BUS_ADDRESS || "unix:path=/var/run/dbus/system_bus_socket");
}

/** Parses `systemctl show -p ...` output (KEY=VALUE lines). */
export function parseShow(text: string): UnitState | undefined {
  const rec: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) rec[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  if (rec.ActiveState === undefined) return undefined;
  return {
    load: rec.LoadState ?? "",
    active: rec.ActiveState,
    sub: rec.SubState ?? "",
    result: rec.Result,
  };
}

// --- D-Bus plumbing (dbus-next, imported lazily) -------------------------

/** The parts of dbus-next's message this module uses (its own .d.ts numbers types wrongly). */
interface DbusMessage {
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
const SYSTEMD = "org.freedesktop.systemd1";
const MANAGER_PATH = "/org/freedesktop/systemd1";
const MANAGER = "org.freedesktop.systemd1.Manager";
const PROPS = "org.freedesktop.DBus.Properties";
const UNIT = "org.freedesktop.systemd1.Unit";
/** Bound on one call, so a bus that never answers cannot stall attempts. */
const BUS_TIMEOUT_MS = 5000;
/** Bound on connecting (socket, authentication, Hello): a local bus answers in milliseconds. */
const CONNECT_TIMEOUT_MS = 2000;
/** Pause before the watcher tries the bus again. */
const RECONNECT_MS = 2000;

/** Rejects when `signal` aborts or `ms` pass, whichever first; settles with `p` otherwise. */
function bounded<T>(p: Promise<T>, signal: AbortSignal, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${what} timed out after ${ms / 1000}s`)), ms);
    const onAbort = () => done(new Error("aborted"));
    const done = (err: Error | undefined, v?: T) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve(v as T);
    };
    if (signal.aborted) return done(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then((v) => done(undefined, v), (e) => done(e instanceof Error ? e : new Error(String(e))));
  });
}

let helloFilter = false;

/**
 * dbus-next answers a failed Hello (a peer that is no bus, a bus that says
 * no) by rethrowing from a promise nobody can await, after reporting the
 * same error as the connection's `error` event, which `connect` handles.
 * Without this the stray rejection would end the run as an internal error.
 * It only matches rejections raised inside dbus-next's bus module.
 */
function ignoreHelloRejections(): void {
  if (helloFilter) return;
  helloFilter = true;
  ignoreStrays((r) =>
    r instanceof Error && /[\\/]dbus-next[\\/].*[\\/]lib[\\/]bus\.js/.test(r.stack ?? "")
  );
}

/** A connection to the bus systemd is on. */
class SystemdBus {
  #dead = false;
  readonly #listeners = new Set<(msg: DbusMessage) => void>();
  readonly #onDeath = new Set<() => void>();

  private constructor(readonly bus: DbusBus, readonly mod: DbusModule) {
    bus.on("message", (msg) => {
      if (msg.type !== SIGNAL) return;
      for (const f of this.#listeners) f(msg);
    });
    bus.on("error", () => this.#die());
    bus._connection?.stream?.on("close", () => this.#die());
  }

  get dead(): boolean {
    return this.#dead;
  }

  #die(): void {
    if (this.#dead) return;
    this.#dead = true;
    for (const f of this.#onDeath) f();
  }

  /** Connects (Hello done) or rejects with the reason. */
  static async connect(address: string, signal: AbortSignal): Promise<SystemdBus> {
    const mod = (await import("dbus-next")) as unknown as DbusModule;
    let bus: DbusBus;
    try {
      bus = mod.sessionBus({ busAddress: address });
    } catch (e) {
      throw new Error(`cannot use D-Bus address ${address}: ${describeError(e)}`);
    }
    ignoreHelloRejections();
    const connected = new Promise<void>((resolve, reject) => {
      bus.on("connect", () => resolve());
      bus.on("error", (e) => reject(e));
      // A peer that hangs up (no bus, refused authentication) may say nothing else.
      bus._connection?.stream?.on(
        "close",
        () => reject(new Error("connection closed by the peer")),
      );
    });
    try {
      await bounded(connected, signal, CONNECT_TIMEOUT_MS, "connecting to D-Bus");
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
    return new SystemdBus(bus, mod);
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
      const reply = await bounded(this.bus.call(msg), signal, BUS_TIMEOUT_MS, `D-Bus ${member}`);
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

  onSignal(f: (msg: DbusMessage) => void): () => void {
    this.#listeners.add(f);
    return () => this.#listeners.delete(f);
  }

  onDeath(f: () => void): () => void {
    this.#onDeath.add(f);
    return () => this.#onDeath.delete(f);
  }

  close(): void {
    this.#die();
    try {
      this.bus.disconnect();
    } catch {
      // Already closed.
    }
  }
}

function isDbusError(e: unknown): boolean {
  return e instanceof Error && e.name === "DBusError" ||
    (typeof e === "object" && e !== null && "type" in e && "text" in e);
}

function dbusErrorText(e: unknown): string {
  if (typeof e === "object" && e !== null && "text" in e && typeof e.text === "string") {
    return e.text;
  }
  return describeError(e);
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Asks one manager about one unit, over D-Bus or with systemctl. */
class UnitClient {
  #bus: SystemdBus | undefined;
  #connecting: Promise<SystemdBus> | undefined;

  constructor(readonly unit: string, readonly user: boolean, readonly address: string) {}

  /** The shared connection, connecting when there is none. */
  bus(signal: AbortSignal): Promise<SystemdBus> {
    if (this.#bus && !this.#bus.dead) return Promise.resolve(this.#bus);
    this.#bus = undefined;
    // One connection attempt at a time, shared by the check and the watcher;
    // the attempt itself is bounded, so a caller's abort only stops its wait.
    this.#connecting ??= SystemdBus.connect(this.address, new AbortController().signal)
      .then((b) => (this.#bus = b))
      .finally(() => (this.#connecting = undefined));
    return bounded(this.#connecting, signal, CONNECT_TIMEOUT_MS + 1000, "connecting to D-Bus");
  }

  /** The unit's object path (loading the unit if needed). */
  async unitPath(bus: SystemdBus, signal: AbortSignal): Promise<string> {
    const [path] = await bus.call(MANAGER_PATH, MANAGER, "LoadUnit", "s", [this.unit], signal);
    if (typeof path !== "string") throw new Error("LoadUnit returned no object path");
    return path;
  }

  async viaBus(signal: AbortSignal): Promise<UnitState> {
    const bus = await this.bus(signal);
    const path = await this.unitPath(bus, signal);
    const [load, active, sub] = await Promise.all(
      ["LoadState", "ActiveState", "SubState"].map((p) => bus.get(path, UNIT, p, signal)),
    );
    let result: string | undefined;
    if (active === "failed") {
      const type = this.unit.slice(this.unit.lastIndexOf(".") + 1);
      const iface = `org.freedesktop.systemd1.${capitalize(type)}`;
      result = await bus.get(path, iface, "Result", signal).then(
        (r) => (typeof r === "string" ? r : undefined),
        () => undefined, // Unit types without a Result (target, device, ...).
      );
    }
    return {
      load: String(load ?? ""),
      active: String(active ?? ""),
      sub: String(sub ?? ""),
      result,
    };
  }

  async viaSystemctl(signal: AbortSignal): Promise<UnitState> {
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command("systemctl", {
        args: [
          ...(this.user ? ["--user"] : []),
          "show",
          "-p",
          "LoadState,ActiveState,SubState,Result",
          "--",
          this.unit,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal,
      }).output();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new Error("systemctl not found");
      throw e;
    }
    if (!out.success) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n")[0] ||
        `exited with status ${out.code}`;
      throw new Error(err.charAt(0).toLowerCase() + err.slice(1));
    }
    const st = parseShow(new TextDecoder().decode(out.stdout));
    if (!st) throw new Error("no ActiveState in its output");
    return st;
  }

  /** The unit's state, or an error text when neither the bus nor systemctl answered. */
  async state(signal: AbortSignal): Promise<UnitState | { error: string }> {
    let busError: string;
    try {
      return await this.viaBus(signal);
    } catch (e) {
      if (signal.aborted) return { error: "aborted" };
      busError = isDbusError(e) ? dbusErrorText(e) : describeError(e);
    }
    try {
      return await this.viaSystemctl(signal);
    } catch (e) {
      if (signal.aborted) return { error: "aborted" };
      const manager = this.user ? "the systemd user manager" : "systemd";
      return {
        error: `cannot reach ${manager}: D-Bus: ${busError}; systemctl: ${describeError(e)}`,
      };
    }
  }

  /**
   * Yields whenever the unit's properties change, or the manager loads,
   * removes or reloads units. Reconnects quietly; while the bus is
   * unreachable the runner's interval (and systemctl) carry the wait.
   */
  async *watch({ signal, notice }: WatchContext): AsyncGenerator<void> {
    let connections = 0;
    while (!signal.aborted) {
      let bus: SystemdBus;
      try {
        bus = await this.bus(signal);
      } catch (e) {
        if (signal.aborted) return;
        notice(`no D-Bus connection to systemd (${describeError(e)}); polling`);
        await realClock.sleep(RECONNECT_MS, signal);
        continue;
      }
      const wake = new Wake();
      let path: string | undefined;
      const offSignal = bus.onSignal((msg) => {
        if (msg.path === path && msg.interface === PROPS && msg.member === "PropertiesChanged") {
          if (msg.body[0] === UNIT) wake.set();
        } else if (msg.path === MANAGER_PATH && msg.interface === MANAGER) {
          // Not UnitNew/UnitRemoved: our own LoadUnit of a missing unit makes
          // systemd load and drop it again, which would wake us in a loop.
          if (msg.member === "JobRemoved" && msg.body[2] === this.unit) wake.set(true);
          if (msg.member === "Reloading" && msg.body[0] === false) wake.set(true);
        }
      });
      const offDeath = bus.onDeath(() => wake.set());
      try {
        path = await this.unitPath(bus, signal);
        await bus.addMatch(
          `type='signal',sender='${SYSTEMD}',path='${path}',interface='${PROPS}',member='PropertiesChanged'`,
          signal,
        );
        await bus.addMatch(
          `type='signal',sender='${SYSTEMD}',path='${MANAGER_PATH}',interface='${MANAGER}'`,
          signal,
        );
        // systemd sends unit signals only while some client has subscribed.
        await bus.call(MANAGER_PATH, MANAGER, "Subscribe", "", [], signal);
        // After a reconnect, something may have changed meanwhile.
        if (connections++ > 0) yield;
        while (!signal.aborted && !bus.dead) {
          const { reload } = await wake.next(signal);
          if (signal.aborted || bus.dead) break;
          if (reload) {
            // The unit may have been (re)loaded under another object path.
            const now = await this.unitPath(bus, signal);
            if (now !== path) {
              path = now;
              await bus.addMatch(
                `type='signal',sender='${SYSTEMD}',path='${path}',interface='${PROPS}',member='PropertiesChanged'`,
                signal,
              );
            }
          }
          yield;
        }
      } catch (e) {
        if (signal.aborted) return;
        if (!bus.dead) {
          // The bus is there but refuses (no systemd on it, access denied): give up watching.
          notice(`cannot watch ${this.unit} on D-Bus (${dbusErrorText(e)}); polling`);
          return;
        }
      } finally {
        offSignal();
        offDeath();
      }
      await realClock.sleep(RECONNECT_MS, signal);
    }
  }

  close(): void {
    this.#bus?.close();
    this.#bus = undefined;
  }
}

/** A level-triggered wake-up between a signal handler and the watch loop. */
class Wake {
  #pending = false;
  #reload = false;
  #resolve: (() => void) | undefined;

  set(reload = false): void {
    this.#pending = true;
    this.#reload ||= reload;
    this.#resolve?.();
  }

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

function wantOf(input: KindInput): UnitWant {
  const given = (["active", "inactive", "failed"] as const).filter((f) => input.bool(f));
  if (given.length > 1) input.fail(given[1], `cannot be combined with --${given[0]}`);
  return given[0] ?? "active";
}

/** The svcmgr kind. */
export const svcmgr: ConditionKind = {
  name: "svcmgr",
  aliases: ["systemd"],
  summary: "a systemd unit is active, inactive or failed",
  description:
    "Asks systemd through its D-Bus API (the system bus, or the user's session bus with --user) for the unit's ActiveState and SubState; PropertiesChanged signals trigger an attempt at once. When the bus cannot be reached, `systemctl show` answers instead. --active (the default) holds while the unit is active (or reloading), --inactive while it is inactive, --failed once it has failed (use it as a guard to stop waiting for a unit that crashed). A unit that does not exist is retried with last_error \"unit not found\".",
  target: {
    shape: "required",
    placeholder: "UNIT",
    description:
      "unit name; .service is assumed without a unit-type suffix (nginx = nginx.service)",
  },
  flags: [
    { name: "active", type: "boolean", description: "the unit is active (default)" },
    { name: "inactive", type: "boolean", description: "the unit is inactive (stopped)" },
    { name: "failed", type: "boolean", description: "the unit has failed" },
    {
      name: "user",
      type: "boolean",
      description: "ask the user's service manager (systemctl --user)",
    },
  ],
  examples: [
    { args: "systemd postgresql", description: "wait until postgresql.service is active" },
    {
      args: "svcmgr app.service -- guard svcmgr app.service --failed",
      description: "wait for app.service, but stop at once (exit 3) if it fails",
    },
    {
      args: "svcmgr --user sync.timer --inactive",
      description: "wait until the user's sync.timer is stopped",
    },
  ],
  parse(input) {
    const unit = normalizeUnitName(input.target ?? "");
    if (typeof unit !== "string") input.fail(undefined, unit.error);
    const name = unit as string;
    const want = wantOf(input);
    const user = input.bool("user");
    const client = new UnitClient(name, user, busAddress(user, input.env));
    return {
      target: name,
      async check({ signal }): Promise<ProbeResult> {
        const st = await client.state(signal);
        if ("error" in st) return { status: "pending", error: st.error };
        return judgeUnit(st, want);
      },
      watch: (ctx) => client.watch(ctx),
      close: () => client.close(),
    };
  },
};
