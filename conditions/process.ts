/**
 * process: a process selected by name or pid is running (or stopped).
 * Read from /proc on Linux, from `ps` elsewhere. Zombies are not running.
 *
 * @module
 */

import type { ConditionKind, ProbeResult } from "../engine/types.ts";

interface Proc {
  pid: number;
  /** Executable names it is known by: comm, basename of exe and of argv[0]. */
  names: string[];
  /** Single-letter state (R, S, D, Z, T, ...). */
  state: string;
}

const basename = (p: string) => p.slice(p.lastIndexOf("/") + 1);

async function readProc(pid: number): Promise<Proc | undefined> {
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

async function listProcs(): Promise<Proc[]> {
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
async function psProcs(): Promise<Proc[]> {
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
function matches(p: Proc, name: string): boolean {
  return p.names.some((n) =>
    n === name || (n.length === 15 && name.length > 15 && name.startsWith(n))
  );
}

const running = (p: Proc) => p.state !== "Z" && p.state !== "X";

/** The process kind. */
export const process: ConditionKind = {
  name: "process",
  aliases: [],
  summary: "a process is running (or has stopped)",
  description:
    "Selects processes by --name (the executable name: /proc/PID/comm, or the basename of its executable or argv[0]) or by --pid. --running (the default) holds while at least one selected process is alive and not a zombie; --stopped holds when none is.",
  target: { shape: "none", placeholder: "", description: "" },
  flags: [
    {
      name: "name",
      type: "string",
      placeholder: "NAME",
      description: "executable name to look for",
    },
    {
      name: "pid",
      type: "integer",
      min: 1,
      placeholder: "PID",
      description: "process id to look at",
    },
    { name: "running", type: "boolean", description: "a selected process is running (default)" },
    { name: "stopped", type: "boolean", description: "no selected process is running" },
  ],
  examples: [
    { args: "process --name postgres", description: "wait until a postgres process runs" },
    { args: "process --pid 4242 --stopped", description: "wait until process 4242 has exited" },
  ],
  parse(input) {
    const name = input.string("name");
    const pid = input.integer("pid");
    if (name === undefined && pid === undefined) {
      input.fail("name", "process needs --name NAME or --pid PID");
    }
    if (name !== undefined && pid !== undefined) {
      input.fail("pid", "cannot be combined with --name");
    }
    if (name === "") input.fail("name", "expected a name, got an empty string");
    if (input.bool("running") && input.bool("stopped")) {
      input.fail("stopped", "cannot be combined with --running");
    }
    const wantStopped = input.bool("stopped");
    const self = Deno.pid;
    const target = name !== undefined ? `--name ${name}` : `--pid ${pid}`;
    return {
      target,
      async check(): Promise<ProbeResult> {
        let alive: Proc[];
        if (pid !== undefined) {
          const p = Deno.build.os === "linux"
            ? await readProc(pid)
            : (await psProcs()).find((x) => x.pid === pid);
          alive = p && running(p) ? [p] : [];
          if (p && !running(p) && !wantStopped) {
            return { status: "pending", error: `process ${pid} is a zombie` };
          }
        } else {
          alive = (await listProcs()).filter((p) =>
            p.pid !== self && matches(p, name!) && running(p)
          );
        }
        const pids = alive.map((p) => p.pid).sort((a, b) => a - b);
        const shown = pids.slice(0, 10).join(", ") + (pids.length > 10 ? ", ..." : "");
        const what = name !== undefined ? `process ${name}` : `process ${pid}`;
        if (wantStopped) {
          return alive.length === 0
            ? { status: "satisfied", detail: `${what} not running` }
            : { status: "pending", error: `${what} still running (pid ${shown})` };
        }
        return alive.length > 0
          ? { status: "satisfied", detail: `${what} running (pid ${shown})` }
          : { status: "pending", error: `${what} not running` };
      },
    };
  },
};
