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

/** A process's parent and process group, from /proc/PID/stat. */
function statOf(pid: string): { ppid: number; pgid: number } | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name may hold anything: the fields follow the last ")".
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(rest[1]), pgid: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

/** Whether any thread of this process has a child process (Linux: /proc/self/task/T/children). */
function hasChildren(): boolean {
  try {
    for (const t of Deno.readDirSync("/proc/self/task")) {
      if (Deno.readTextFileSync(`/proc/self/task/${t.name}/children`).trim() !== "") return true;
    }
  } catch {
    return false;
  }
  return false;
}

/**
 * Ends with SIGKILL every descendant of this process that is still in this process's own
 * group (Linux; elsewhere nothing): what a library's helper started without a group of its
 * own (an AWS `credential_process` run through `exec`) and what that helper forked. Every
 * command waitcmd starts on purpose (exec's, `--start`'s, `then`'s) leads a group of its own, so
 * none of them is touched. For the run's end (docs/contract.md §2).
 */
export function killStrayChildren(): void {
  if (Deno.build.os !== "linux" || !hasChildren()) return;
  const own = statOf("self")?.pgid;
  const children = new Map<number, number[]>();
  const groups = new Map<number, number>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const s = statOf(e.name);
    if (s === undefined) continue;
    const pid = Number(e.name);
    groups.set(pid, s.pgid);
    children.set(s.ppid, [...children.get(s.ppid) ?? [], pid]);
  }
  const found: number[] = [];
  const todo = [Deno.pid];
  while (todo.length > 0) {
    const pid = todo.pop()!;
    for (const child of children.get(pid) ?? []) {
      todo.push(child);
      if (groups.get(child) === own) found.push(child);
    }
  }
  for (const pid of found) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}
