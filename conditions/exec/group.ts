/**
 * Ending a command's process group: the command and everything it started.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";

/** Time between SIGTERM and SIGKILL when an attempt is aborted. */
export const KILL_GRACE_MS = 2000;

/** Sends `signal` to the process group `pid` leads, if it is still there. */
export function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

function groupAlive(pid: number): boolean {
  try {
    Deno.kill(-pid, 0 as unknown as Deno.Signal);
    return true;
  } catch {
    return false;
  }
}

/** After SIGTERM: waits out the grace period for the group's members, then SIGKILLs what is left. */
export async function reapGroup(pid: number, clock: Clock): Promise<void> {
  const until = clock.now() + KILL_GRACE_MS;
  while (clock.now() < until && groupAlive(pid)) await clock.sleep(50);
  killGroup(pid, "SIGKILL");
}
