/**
 * process's view of the process table: /proc on Linux, `ps` elsewhere.
 *
 * @module
 */

/** One process as a check sees it. */
export interface Proc {
  readonly pid: number;
  /** Executable names it is known by: comm, basename of exe and of argv[0]. */
  readonly names: readonly string[];
  /** Single-letter state (R, S, D, Z, T, ...). */
  readonly state: string;
}

const basename = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/** Process `pid` from /proc, or undefined when there is none. */
export async function readProc(pid: number): Promise<Proc | undefined> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // comm is parenthesised and may contain spaces or parentheses: state follows the last ')'.
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const state = stat.slice(close + 2, close + 3);
    const names = [comm];
    try {
      names.push(basename(await Deno.readLink(`/proc/${pid}/exe`)).replace(/ \(deleted\)$/, ""));
    } catch {
      // Kernel threads and other users' processes have no readable exe.
    }
    try {
      const argv0 = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0")[0];
      if (argv0) names.push(basename(argv0));
    } catch {
      // Gone meanwhile.
    }
    return { pid, names, state };
  } catch {
    return undefined;
  }
}

/** Every process: from /proc, else from `ps`. */
export async function listProcs(): Promise<Proc[]> {
  try {
    const out: Proc[] = [];
    for await (const e of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(e.name)) continue;
      const p = await readProc(Number(e.name));
      if (p) out.push(p);
    }
    return out;
  } catch {
    return await psProcs();
  }
}

/** Without /proc (macOS, BSD): ask ps. */
export async function psProcs(): Promise<Proc[]> {
  const out = await new Deno.Command("ps", {
    args: ["-A", "-o", "pid=,stat=,comm="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    return m
      ? [{ pid: Number(m[1]), state: m[2]!.charAt(0), names: [basename(m[3]!.trim())] }]
      : [];
  });
}

/** Whether `name` names this process (comm is cut to 15 characters by the kernel). */
export function matches(p: Proc, name: string): boolean {
  return p.names.some((n) =>
    n === name || (n.length === 15 && name.length > 15 && name.startsWith(n))
  );
}

/** Alive and not a zombie. */
export const running = (p: Proc): boolean => p.state !== "Z" && p.state !== "X";
