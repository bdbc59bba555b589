/**
 * The process table as the process and pidfile kinds read it: /proc on Linux
 * (state, names, start time, kernel threads), `ps` elsewhere (state and name
 * only).
 *
 * @module
 */

import { type Memo, memoize } from "./memo.ts";

/** One process. */
export interface Proc {
  readonly pid: number;
  /** Single-letter state (R, S, D, Z, T, ...). */
  readonly state: string;
  /** Executable names it is known by: comm, the basename of exe and of argv[0]. */
  readonly names: readonly string[];
  /** When it started, in wall-clock ms, where the system tells (Linux); else undefined. */
  readonly startedAt?: number;
  /** A kernel thread: never the process of a pid file. */
  readonly kernelThread: boolean;
}

/** Kernel clock ticks per second of /proc/PID/stat (USER_HZ: 100 on every Linux build). */
const USER_HZ = 100;
/** PF_KTHREAD in the flags field of /proc/PID/stat. */
const PF_KTHREAD = 0x00200000;

const basename = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/** Boot time in wall-clock ms (whole seconds: `btime` of /proc/stat), read once. */
const bootTime: Memo<number | undefined> = memoize(() =>
  Deno.readTextFile("/proc/stat").then(
    (t) => {
      const m = /^btime (\d+)$/m.exec(t);
      return m ? Number(m[1]) * 1000 : undefined;
    },
    () => undefined,
  )
);

/** Process `pid` from /proc, or undefined when there is none. */
async function readProcLinux(pid: number): Promise<Proc | undefined> {
  let stat: string;
  try {
    stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  // comm is parenthesised and may hold spaces or parentheses: the fields follow the last ')'.
  const close = stat.lastIndexOf(")");
  const comm = stat.slice(stat.indexOf("(") + 1, close);
  const rest = stat.slice(close + 2).split(" ");
  const state = rest[0] ?? "?";
  const flags = Number(rest[6] ?? 0);
  const ticks = Number(rest[19]);
  const names = [comm];
  try {
    names.push(basename(await Deno.readLink(`/proc/${pid}/exe`)).replace(/ \(deleted\)$/, ""));
  } catch {
    // Kernel threads, zombies and other users' processes have no readable exe.
  }
  try {
    const argv0 = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0")[0];
    if (argv0) names.push(basename(argv0));
  } catch {
    // Gone meanwhile.
  }
  const boot = await bootTime.get();
  const startedAt = boot !== undefined && Number.isFinite(ticks)
    ? boot + (ticks * 1000) / USER_HZ
    : undefined;
  return { pid, state, names, startedAt, kernelThread: (flags & PF_KTHREAD) !== 0 };
}

/** Processes from `ps` (macOS, BSD): every one, or the one of `pid`. */
async function psProcs(pid?: number): Promise<Proc[]> {
  const out = await new Deno.Command("ps", {
    args: [...(pid === undefined ? ["-A"] : ["-p", String(pid)]), "-o", "pid=,stat=,comm="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    return m
      ? [{
        pid: Number(m[1]),
        state: m[2]!.charAt(0),
        names: [basename(m[3]!.trim())],
        kernelThread: false,
      }]
      : [];
  });
}

/** Process `pid`, or undefined when there is none. */
export async function readProc(pid: number): Promise<Proc | undefined> {
  if (Deno.build.os === "linux") return await readProcLinux(pid);
  return (await psProcs(pid)).find((p) => p.pid === pid);
}

/** Every process: from /proc, else from `ps`. */
export async function listProcs(): Promise<Proc[]> {
  try {
    const out: Proc[] = [];
    for await (const e of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(e.name)) continue;
      const p = await readProcLinux(Number(e.name));
      if (p) out.push(p);
    }
    return out;
  } catch {
    return await psProcs();
  }
}

/**
 * Whether `name` names this process: equal to one of its names (docs/contract.md §5 process).
 * The kernel cuts comm to 15 characters, so a longer name is found only by the base name of the
 * executable or of argv[0]; a cut comm that merely begins it is another program.
 */
export function hasName(p: Proc, name: string): boolean {
  return p.names.includes(name);
}

/** Alive and not a zombie. */
export const running = (p: Proc): boolean => p.state !== "Z" && p.state !== "X";
