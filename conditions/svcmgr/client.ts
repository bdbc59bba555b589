/**
 * svcmgr's transport: asks one service manager about one unit, over D-Bus
 * (`LoadUnit`, then the unit's properties) or, when the bus cannot be
 * reached, with `systemctl show`; and watches the unit's signals.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { describeError, withHint } from "../../engine/errors.ts";
import type { WatchContext } from "../../engine/types.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import {
  dbusErrorText,
  isDbusError,
  MANAGER,
  MANAGER_PATH,
  PROPS,
  SYSTEMD,
  SystemdBus,
  UNIT,
  Wake,
} from "./dbus.ts";
import { parseShow, type UnitState } from "./judge.ts";

/** Pause before the watcher tries the bus again. */
const RECONNECT_MS = 2000;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const propsRule = (path: string) =>
  `type='signal',sender='${SYSTEMD}',path='${path}',interface='${PROPS}',member='PropertiesChanged'`;

/**
 * What to do when neither the bus nor systemctl reached the manager (docs/contract.md §6,
 * hints): on a machine without systemd (a container) nothing will answer until a bus is given.
 */
export function unreachableHint(user: boolean): string {
  return user
    ? "no systemd user manager here: log in (or loginctl enable-linger), or set " +
      "DBUS_SESSION_BUS_ADDRESS to its bus"
    : "no systemd here (a container?): set DBUS_SYSTEM_BUS_ADDRESS to a systemd's system bus";
}

/** Asks one manager about one unit, over D-Bus or with systemctl. */
export class UnitClient {
  /** One connection, shared by the check and the watcher; made again once it died. */
  readonly #conn: Memo<SystemdBus>;
  /** The connection the memo holds, once made (to forget it only once when it dies). */
  #made: SystemdBus | undefined;

  constructor(
    readonly unit: string,
    readonly user: boolean,
    address: string,
    readonly clock: Clock,
  ) {
    // Connecting is bounded in time, so a caller's abort only stops its own wait.
    this.#conn = memoize(async () => (this.#made = await SystemdBus.connect(address, clock)));
  }

  /** The shared connection, connecting when there is none (or it died). */
  async bus(signal: AbortSignal): Promise<SystemdBus> {
    const bus = await this.#conn.get(signal);
    if (!bus.dead) return bus;
    // The check and the watcher may both find it dead: only the first starts a new one.
    if (this.#made === bus) {
      this.#made = undefined;
      this.#conn.reset();
    }
    return await this.#conn.get(signal);
  }

  /** The unit's object path (loading the unit if needed). */
  async unitPath(bus: SystemdBus, signal: AbortSignal): Promise<string> {
    const [path] = await bus.call(MANAGER_PATH, MANAGER, "LoadUnit", "s", [this.unit], signal);
    if (typeof path !== "string") throw new Error("LoadUnit returned no object path");
    return path;
  }

  async #viaBus(signal: AbortSignal): Promise<UnitState> {
    const bus = await this.bus(signal);
    const path = await this.unitPath(bus, signal);
    // One GetAll: the three states of one moment (three Gets could mix two moments).
    const props = await bus.getAll(path, UNIT, signal);
    const [load, active, sub] = ["LoadState", "ActiveState", "SubState"].map((p) => props.get(p));
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

  async #viaSystemctl(signal: AbortSignal): Promise<UnitState> {
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

  /**
   * The unit's state; throws an Error saying why when neither the bus nor
   * systemctl answered.
   */
  async state(signal: AbortSignal): Promise<UnitState> {
    let busError: string;
    try {
      return await this.#viaBus(signal);
    } catch (e) {
      if (signal.aborted) throw new Error("aborted");
      busError = isDbusError(e) ? dbusErrorText(e) : describeError(e);
    }
    try {
      return await this.#viaSystemctl(signal);
    } catch (e) {
      if (signal.aborted) throw new Error("aborted");
      const manager = this.user ? "the systemd user manager" : "systemd";
      const error = new Error(
        `cannot reach ${manager}: D-Bus: ${busError}; systemctl: ${describeError(e)}`,
      );
      throw withHint(error, unreachableHint(this.user));
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
        await this.clock.sleep(RECONNECT_MS, signal);
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
        await bus.addMatch(propsRule(path), signal);
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
              await bus.addMatch(propsRule(path), signal);
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
      await this.clock.sleep(RECONNECT_MS, signal);
    }
  }

  /** Closes the connection, if one was made. Idempotent. */
  close(): void {
    const made = this.#conn.peek();
    this.#made = undefined;
    this.#conn.reset();
    // A connection still being made is closed once it is there.
    made?.then((bus) => bus.close(), () => {});
  }
}
