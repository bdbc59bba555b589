/**
 * Watching a waitcmd process from the outside, through /proc (Linux): when
 * one of its threads is blocked opening a FIFO or reading a pipe, which
 * process groups it left behind. The hooks that let a fault test act at the
 * right moment without guessing how long start-up takes: waitcmd installs its
 * signal handlers before it reads anything (the runtime's own handlers, which
 * exit 130 or 143 silently, are there earlier, so /proc's SigCgt cannot tell).
 *
 * @module
 */

import { WAITCMD } from "../e2e/_cli.ts";

/** Waits until `check()` holds, polling every 20 ms; throws after `limitMs` (a hang guard). */
export async function until(check: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function read(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

/**
 * Whether a thread of `pid` is blocked in the kernel at `wchan`: `wait_for_partner` (the
 * open of a FIFO nobody writes), `anon_pipe_read` (a read of an empty pipe).
 */
export function blockedIn(pid: number, wchan: string): boolean {
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      if (read(`/proc/${pid}/task/${t.name}/wchan`).trim() === wchan) return true;
    }
  } catch {
    // gone
  }
  return false;
}

/** What a spawned waitcmd did, and whether it had to be killed because it hung. */
export interface Ended {
  code: number;
  /** The signal that ended it, when one did (not an exit of its own). */
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
  /** It did not exit within the guard's limit and was killed with SIGKILL. */
  hung: boolean;
}

/** A waitcmd process the test drives. */
export interface Spawned {
  child: Deno.ChildProcess;
  /** Waits for its end; a process still running after `limitMs` is killed and reported as hung. */
  ended(limitMs?: number): Promise<Ended>;
}

/** Starts `waitcmd ...args` with piped outputs (and a piped stdin the test may write to). */
export function spawnWaitcmd(
  args: string[],
  opts: { env?: Record<string, string>; stdin?: "piped" | "null" } = {},
): Spawned {
  const child = new Deno.Command(WAITCMD, {
    args,
    env: { NO_COLOR: "1", ...opts.env },
    stdin: opts.stdin ?? "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = new Response(child.stdout).text();
  const err = new Response(child.stderr).text();
  return {
    child,
    async ended(limitMs = 15_000) {
      let hung = false;
      const guard = setTimeout(() => {
        hung = true;
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
      }, limitMs);
      const status = await child.status;
      clearTimeout(guard);
      return {
        code: status.code,
        signal: status.signal,
        stdout: await out,
        stderr: await err,
        hung,
      };
    },
  };
}

/**
 * The process groups whose processes run `marker` in their command line and are not
 * zombies (a zombie is dead, waiting for a parent to read its status).
 */
export function groupsRunning(marker: string): Set<number> {
  const groups = new Set<number>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const cmdline = read(`/proc/${e.name}/cmdline`).replaceAll("\0", " ");
    if (!cmdline.includes(marker)) continue;
    const stat = read(`/proc/${e.name}/stat`);
    // pid (comm) state ppid pgrp ...: the fields after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z" || fields[0] === undefined || fields[2] === undefined) continue;
    groups.add(Number(fields[2]));
  }
  return groups;
}

/** Ends the process groups `groups` with SIGKILL (a test's cleanup of what it started). */
export function killGroups(groups: Iterable<number>): void {
  for (const g of groups) {
    try {
      Deno.kill(-g, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** The processes (not zombies) that are members of the process groups `groups`. */
export function membersOf(groups: ReadonlySet<number>): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const stat = read(`/proc/${e.name}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z" || fields[0] === undefined) continue;
    if (groups.has(Number(fields[2]))) out.push(Number(e.name));
  }
  return out;
}

/** The peak resident memory of `pid` so far (VmHWM), in bytes; 0 when it is gone. */
export function peakRss(pid: number): number {
  const m = /^VmHWM:\s*(\d+) kB$/m.exec(read(`/proc/${pid}/status`));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Runs `cmd` under sh; throws with its stderr when it fails (a test's setup step). */
export async function sh(cmd: string): Promise<void> {
  const out = await new Deno.Command("sh", { args: ["-c", cmd], stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd}: ${new TextDecoder().decode(out.stderr)}`);
}
