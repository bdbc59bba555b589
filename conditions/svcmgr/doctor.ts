/**
 * svcmgr's check for `waitcmd doctor` (docs/contract.md §1): asks the
 * service manager the way a condition would, over the bus the kind uses
 * (DBUS_SYSTEM_BUS_ADDRESS, else the system bus), then with `systemctl`,
 * so doctor says `ok` only when an attempt could get an answer.
 *
 * @module
 */

import { realClock } from "../../engine/clock.ts";
import { describeError } from "../../engine/errors.ts";
import { UnitClient } from "./client.ts";
import { busAddress } from "./mod.ts";

/** How long doctor gives the manager to answer. */
const DOCTOR_MS = 5000;

/** Why the manager cannot be asked, over the bus or with systemctl; undefined when it can. */
async function unreachable(
  user: boolean,
  address: string | undefined,
): Promise<string | undefined> {
  const client = new UnitClient(
    "init.scope",
    user,
    address ?? `unix:path=/run/user/${Deno.uid() ?? 0}/bus`,
    realClock,
  );
  try {
    await client.state(AbortSignal.timeout(DOCTOR_MS));
    return undefined;
  } catch (e) {
    return describeError(e);
  } finally {
    client.close();
  }
}

/**
 * Undefined when systemd answers svcmgr's questions here; else why not, and whether the user
 * manager (`svcmgr --user`) answers instead.
 */
export async function systemdReachable(
  env: Readonly<Record<string, string>>,
): Promise<string | undefined> {
  const system = await unreachable(false, busAddress(false, env));
  if (system === undefined) return undefined;
  const user = await unreachable(true, busAddress(true, env));
  return user === undefined ? `${system} (svcmgr --user works: the user manager answers)` : system;
}
