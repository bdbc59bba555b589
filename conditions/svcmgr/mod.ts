/**
 * svcmgr (alias systemd): a systemd unit is active, inactive or failed.
 *
 * The probe (probe.ts) asks the service manager through its D-Bus API
 * (org.freedesktop.systemd1: `LoadUnit`, then the unit's
 * ActiveState/SubState/LoadState), on the system bus or, with `--user`, the
 * user's session bus; `PropertiesChanged` signals of the unit ask for an
 * attempt at once. When the bus cannot be reached, `systemctl [--user] show`
 * answers instead (it also knows systemd's private socket, which works
 * without a D-Bus daemon). See docs/contract.md §5 svcmgr.
 *
 * @module
 */

import { errorText } from "../../engine/errors.ts";
import { defineKind, type KindInput } from "../../engine/types.ts";
import type { UnitWant } from "./judge.ts";
import { normalizeUnitName } from "./unitname.ts";

/** What a svcmgr condition needs. */
export interface SvcmgrOptions {
  /** The full unit name (`nginx.service`). */
  readonly unit: string;
  readonly want: UnitWant;
  /** `--user`: the user's service manager. */
  readonly user: boolean;
  /**
   * The D-Bus address of the manager's bus; undefined for the user bus at
   * /run/user/<uid>/bus, which the probe resolves (parse reads no uid).
   */
  readonly address: string | undefined;
}

/**
 * The D-Bus address of the manager: the session bus for `--user`, else the
 * system bus; undefined when only the user's id can tell (/run/user/<uid>/bus).
 */
export function busAddress(
  user: boolean,
  env: Readonly<Record<string, string>>,
): string | undefined {
  const pick = (address: string) =>
    // dbus-next only tries the next of several addresses on a synchronous
    // failure (and warns on stderr); take the first one it can use.
    address.split(";").find((a) => /^(unix|tcp):/.test(a)) ?? address.split(";")[0] ?? address;
  if (user) {
    if (env.DBUS_SESSION_BUS_ADDRESS) return pick(env.DBUS_SESSION_BUS_ADDRESS);
    return env.XDG_RUNTIME_DIR ? `unix:path=${env.XDG_RUNTIME_DIR}/bus` : undefined;
  }
  return pick(env.DBUS_SYSTEM_BUS_ADDRESS || "unix:path=/var/run/dbus/system_bus_socket");
}

function wantOf(input: KindInput): UnitWant {
  const given = (["active", "inactive", "failed"] as const).filter((f) => input.bool(f));
  if (given.length > 1) input.fail(given[1], `cannot be combined with --${given[0]}`);
  return given[0] ?? "active";
}

/** The full unit name of the target; a bad one is a usage error. */
function unitOf(input: KindInput): string {
  try {
    return normalizeUnitName(input.target ?? "");
  } catch (e) {
    return input.fail(undefined, errorText(e));
  }
}

/** The svcmgr kind. */
export const svcmgr = defineKind<SvcmgrOptions>({
  name: "svcmgr",
  aliases: ["systemd"],
  summary: "a systemd unit is active, inactive or failed",
  description:
    "Asks systemd through its D-Bus API (the system bus, or the user's session bus with --user) for the unit's ActiveState and SubState; PropertiesChanged signals trigger an attempt at once. When the bus cannot be reached, `systemctl show` answers instead. --active (the default) holds while the unit is active (or reloading), --inactive while it is inactive, --failed once it has failed (use it as a guard to stop waiting for a unit that crashed). A unit that does not exist is inactive to systemd: --inactive holds for it, --active and --failed retry it with last_error \"unit not found\".",
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
    const unit = unitOf(input);
    const want = wantOf(input);
    const user = input.bool("user");
    return { target: unit, options: { unit, want, user, address: busAddress(user, input.env) } };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  // The bus the kind uses, then systemctl, as an attempt would (docs/contract.md §1).
  doctor: (env) => import("./doctor.ts").then((m) => m.systemdReachable(env)),
});
