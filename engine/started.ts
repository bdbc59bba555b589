/**
 * `--start CMD` (docs/contract.md §4): the commands a run starts before its
 * first probe, watched while it waits, handed to `then` and stopped.
 *
 * - Each command leads a session (and so a process group) of its own, with
 *   standard input from /dev/null: a stop reaches everything it forked, and
 *   a command left running outlives waitcmd untouched by its terminal.
 * - Its output goes to a file it writes itself (so it keeps a place to write
 *   once waitcmd is gone): `--start-log FILE` (appended to), else
 *   `waitcmd-start-N.log` in the temporary directory, made anew. A small
 *   shell redirects and then `exec`s the command's own words: the command is
 *   never interpreted by a shell. waitcmd follows each file by its open
 *   handle and hands every complete line to `onLine` (the `[start N] `
 *   lines) and keeps the last {@link TAIL_LINES} for the report.
 * - A command that exits calls `onExit`; the session ends the run with it.
 * - `stop` sends SIGTERM to each group, waits up to the grace for every
 *   group to be empty, then sends SIGKILL to what is left.
 *
 * @module
 */

import type { StartCommand } from "./options.ts";
import type { StartedReport } from "./report.ts";

/** Output lines kept for the report. */
export const TAIL_LINES = 20;
/** How often the output files are read for new lines. */
const FOLLOW_MS = 50;
/** The longest output line kept whole; the rest of a longer one is cut. */
const MAX_LINE = 4096;
/** Buffers of 64 KiB read from one output file per turn (4 MiB). */
const DRAIN_CHUNKS = 64;
/** How often a stopping group is checked for members left. */
const STOP_POLL_MS = 10;

/** How the commands are started. */
export interface StartOptions {
  /** `--start-log`: every command's output is appended there; undefined: a file per command. */
  readonly logFile: string | undefined;
  /** The directory of the default files (`TMPDIR`, else /tmp). */
  readonly tempDir: string;
  /** The environment the commands get. */
  readonly env: Readonly<Record<string, string>>;
  /** Each complete output line, as it comes; undefined: lines are only kept for the tail. */
  readonly onLine?: (index: number, line: string) => void;
  /** A command exited (on its own or stopped); called once per command. */
  readonly onExit?: (s: StartedReport) => void;
}

/** The shell that redirects the output then becomes the command (`$0`: the file). */
const REDIRECT = 'exec >>"$0" 2>&1 </dev/null; exec "$@"';

/** One started command. */
class Started {
  status: StartedReport["status"] = "running";
  exitCode: number | undefined;
  readonly tail: string[] = [];
  readonly exited: Promise<void>;
  #partial = "";
  readonly #decoder = new TextDecoder();
  readonly #buf = new Uint8Array(64 * 1024);

  constructor(
    readonly index: number,
    readonly command: StartCommand,
    readonly child: Deno.ChildProcess,
    readonly file: Deno.FsFile,
    readonly log: string,
    readonly onLine: ((index: number, line: string) => void) | undefined,
    onExit: (s: Started) => void,
  ) {
    this.exited = child.status.then((st) => {
      this.drain();
      if (this.status === "running") {
        this.status = "exited";
        this.exitCode = st.code;
      }
      onExit(this);
    });
  }

  /**
   * Reads what was written since the last read, at most DRAIN_CHUNKS buffers (a command that
   * writes faster than that is read on the next turn, never holding the event loop); `end`: the
   * last line needs no newline.
   */
  drain(end = false): void {
    for (let chunk = 0; chunk < DRAIN_CHUNKS; chunk++) {
      let n: number | null;
      try {
        n = this.file.readSync(this.#buf);
      } catch {
        return;
      }
      if (n === null || n === 0) break;
      this.#take(this.#decoder.decode(this.#buf.subarray(0, n), { stream: true }));
    }
    if (end && this.#partial !== "") {
      this.#line(this.#partial);
      this.#partial = "";
    }
  }

  #take(text: string): void {
    let from = 0;
    for (;;) {
      const nl = text.indexOf("\n", from);
      if (nl < 0) break;
      const line = this.#partial + text.slice(from, nl);
      this.#partial = "";
      this.#line(line.endsWith("\r") ? line.slice(0, -1) : line);
      from = nl + 1;
    }
    // A line longer than MAX_LINE is cut; the rest of it is dropped until its newline.
    this.#partial = (this.#partial + text.slice(from)).slice(0, MAX_LINE + 1);
  }

  #line(raw: string): void {
    const line = raw.length > MAX_LINE ? raw.slice(0, MAX_LINE) + "…" : raw;
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.onLine?.(this.index, line);
  }

  report(): StartedReport {
    return {
      index: this.index,
      command: this.command.shown,
      pid: this.child.pid,
      status: this.status,
      ...(this.exitCode === undefined ? {} : { exitCode: this.exitCode }),
      tail: [...this.tail],
      log: this.log,
    };
  }

  /** Whether anything of its process group is still alive (zombies are not). */
  groupAlive(): boolean {
    try {
      // SIGCONT: a stopped member has to run to die of SIGTERM anyway.
      Deno.kill(-this.child.pid, "SIGCONT");
    } catch {
      return false;
    }
    return livingMember(this.child.pid);
  }

  send(signal: Deno.Signal): void {
    try {
      Deno.kill(-this.child.pid, signal);
    } catch {
      // The group is gone already.
    }
  }
}

/** The commands of one run. */
export class StartedSet {
  readonly #all: Started[];
  readonly #timer: ReturnType<typeof setInterval>;

  private constructor(all: Started[]) {
    this.#all = all;
    this.#timer = setInterval(() => this.#all.forEach((s) => s.drain()), FOLLOW_MS);
  }

  /**
   * Starts every command, in order. A file that cannot be made throws (the caller reports it as
   * fatal); a command that cannot run exits 127 with the reason in its output.
   */
  static async start(commands: readonly StartCommand[], opts: StartOptions): Promise<StartedSet> {
    const all: Started[] = [];
    let shared: string | undefined;
    if (opts.logFile !== undefined) {
      // Appended to: a `log` condition on this file has taken its end as its baseline.
      shared = opts.logFile;
      (await Deno.open(shared, { append: true, create: true })).close();
    }
    const set = new StartedSet(all);
    try {
      for (const [i, command] of commands.entries()) {
        const index = i + 1;
        const log = shared ?? await freshFile(`${opts.tempDir}/waitcmd-start-${index}.log`);
        const file = await Deno.open(log, { read: true });
        // Only what this run's command writes is its output.
        if (shared !== undefined) await file.seek(0, Deno.SeekMode.End);
        let child: Deno.ChildProcess;
        try {
          child = new Deno.Command("/bin/sh", {
            args: ["-c", REDIRECT, log, ...command.argv],
            // Python buffers what it writes to a file until it exits: a `log` condition on the
            // output would never see `python -m http.server`'s line (as foreman and honcho do).
            env: { PYTHONUNBUFFERED: "1", ...opts.env },
            clearEnv: true,
            stdin: "null",
            stdout: "null",
            stderr: "null",
            detached: true,
          }).spawn();
        } catch (e) {
          file.close();
          throw e;
        }
        all.push(
          new Started(index, command, child, file, log, opts.onLine, (s) => {
            opts.onExit?.(s.report());
          }),
        );
      }
    } catch (e) {
      await set.stop(0);
      throw e;
    }
    return set;
  }

  /** Each command's report entry, as things stand. */
  reports(): StartedReport[] {
    this.#all.forEach((s) => s.drain());
    return this.#all.map((s) => s.report());
  }

  /**
   * Stops every command (docs/contract.md §4): SIGTERM to each process group, then SIGKILL to
   * what is still alive after `graceMs`. Resolves once every group is empty (or, for a group
   * SIGKILL cannot empty, shortly after SIGKILL).
   */
  async stop(graceMs: number): Promise<void> {
    for (const s of this.#all) {
      if (s.status === "running") s.status = "stopped";
      s.send("SIGTERM");
    }
    const deadline = Date.now() + graceMs;
    while (this.#all.some((s) => s.groupAlive()) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, STOP_POLL_MS));
    }
    for (const s of this.#all) s.send("SIGKILL");
    // The leaders' statuses come once they are reaped (bounded: SIGKILL cannot be refused).
    await Promise.race([
      Promise.all(this.#all.map((s) => s.exited)),
      new Promise((r) => setTimeout(r, 1000)),
    ]);
    this.close();
  }

  /** Stops following the output (the commands keep running): the last lines are read first. */
  close(): void {
    clearInterval(this.#timer);
    for (const s of this.#all) {
      s.drain(true);
      try {
        s.file.close();
      } catch {
        // Closed already.
      }
    }
  }

  /** Leaves the commands running on their own: waitcmd may exit without waiting for them. */
  detach(): void {
    this.close();
    for (const s of this.#all) s.child.unref();
  }
}

/** Makes `path` anew (a file of an earlier run is unlinked first, never followed as a link). */
async function freshFile(path: string): Promise<string> {
  try {
    await Deno.remove(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  (await Deno.open(path, { write: true, createNew: true, mode: 0o600 })).close();
  return path;
}

/**
 * Whether the process group `pgid` has a member that is not a zombie. A member that exited is a
 * zombie until its parent reaps it; one whose parent is gone waits for the system's init, which
 * may take a while (a container's init): it holds nothing, so it is not waited for. Where /proc
 * cannot be read, every member counts.
 */
function livingMember(pgid: number): boolean {
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return true;
  }
  const group = String(pgid);
  for (const e of entries) {
    if (e.name.charCodeAt(0) > 57 || e.name.charCodeAt(0) < 48) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
    } catch {
      continue; // Gone meanwhile.
    }
    // After the command name (which may hold anything, so the last ")"): state, ppid, pgrp.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 3);
    if (fields[2] === group && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}
