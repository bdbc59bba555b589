/**
 * Signalling a process group: a command and everything it started (docs/contract.md §2, §5
 * exec). Used by the exec kind for its commands and by the isolation for the helpers a kind's
 * libraries start (engine/helper_procs.ts).
 *
 * @module
 */

/** Sends `signal` to the process group `pid` leads, if it is still there. */
export function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Whether the process group `pid` leads still has a member. */
export function groupAlive(pid: number): boolean {
  try {
    Deno.kill(-pid, 0 as unknown as Deno.Signal);
    return true;
  } catch {
    return false;
  }
}
