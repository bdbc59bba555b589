/**
 * Ending a command's process group: the command and everything it started.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { groupAlive, killGroup } from "../../engine/process_group.ts";

export { groupAlive, killGroup };

/**
 * Time between SIGTERM and SIGKILL when an attempt is aborted (--attempt-timeout, the
 * deadline, a signal: docs/contract.md §9).
 */
export const KILL_GRACE_MS = 2000;

/** After SIGTERM: waits out the grace period for the group's members, then SIGKILLs what is left. */
export async function reapGroup(pid: number, clock: Clock): Promise<void> {
  const until = clock.now() + KILL_GRACE_MS;
  while (clock.now() < until && groupAlive(pid)) await clock.sleep(50);
  killGroup(pid, "SIGKILL");
}

/**
 * Ends the process groups `pids` lead: SIGTERM to each that is still there, then, once they
 * are gone or `KILL_GRACE_MS` has passed, SIGKILL to what is left. For the end of a run, so
 * that a command ignoring SIGTERM does not outlive waitcmd.
 */
export async function endGroups(pids: Iterable<number>, clock: Clock): Promise<void> {
  const alive = [...pids].filter(groupAlive);
  if (alive.length === 0) return;
  for (const pid of alive) killGroup(pid, "SIGTERM");
  const until = clock.now() + KILL_GRACE_MS;
  while (clock.now() < until && alive.some(groupAlive)) await clock.sleep(20);
  for (const pid of alive) killGroup(pid, "SIGKILL");
}
