/**
 * exec: a command exits with the expected status (and prints a text).
 *
 * The command runs without a shell, in its own process group, so a timeout or
 * a cancel kills it and everything it started.
 *
 * @module
 */

import type { ConditionKind, ProbeResult } from "../engine/types.ts";
import { describeError } from "./_net.ts";

/** Most captured output (stdout and stderr together) kept per attempt. */
export const OUTPUT_CAP = 1 << 20;
/** Time between SIGTERM and SIGKILL when an attempt is aborted. */
const KILL_GRACE_MS = 2000;

function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Reads a stream to its end, keeping at most `cap` bytes in `sink` (shared budget). */
async function drain(
  stream: ReadableStream<Uint8Array>,
  sink: { parts: Uint8Array[]; size: number },
  cap: number,
) {
  for await (const chunk of stream) {
    const room = cap - sink.size;
    if (room <= 0) continue; // Keep reading so the child never blocks on a full pipe.
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    sink.parts.push(part.slice());
    sink.size += part.length;
  }
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const line = lines.at(-1) ?? "";
  return line.length > 200 ? line.slice(0, 199) + "…" : line;
}

/** The exec kind. */
export const exec: ConditionKind = {
  name: "exec",
  aliases: [],
  summary: "a command succeeds",
  description:
    "Runs the command on each attempt, without a shell, in its own process group. Satisfied when it exits with --exit-code (default 0) and, with --output-contains, its stdout or stderr includes the text (at most 1 MiB of output is kept). A command that cannot be started (not found, not executable) is fatal (exit 3); any exit status is an ordinary failed attempt. On timeout or cancel the whole process group gets SIGTERM, then SIGKILL after 2s.",
  target: {
    shape: "command",
    placeholder: "COMMAND [ARGS...]",
    description: "the command and its arguments",
  },
  flags: [
    {
      name: "output-contains",
      type: "string",
      placeholder: "TEXT",
      description: "stdout or stderr includes TEXT",
    },
    {
      name: "exit-code",
      type: "integer",
      min: 0,
      max: 255,
      placeholder: "N",
      description: "expected exit status (default 0)",
    },
  ],
  examples: [
    { args: "exec -- pg_isready -h db", description: "wait until pg_isready succeeds" },
    {
      args: "exec --output-contains healthy -- curl -s http://localhost/status",
      description: "wait for a word in a command's output",
    },
    {
      args: "exec --exit-code 1 -- grep -q lock /etc/state",
      description: "wait until grep no longer finds the text",
    },
  ],
  parse(input) {
    const [cmd, ...args] = input.command;
    if (!cmd) input.fail(undefined, "missing command after --");
    const want = input.integer("exit-code") ?? 0;
    const needle = input.string("output-contains");
    return {
      // Arguments may carry secrets: the display name shows only the command.
      target: cmd!,
      async check({ signal }): Promise<ProbeResult> {
        let child: Deno.ChildProcess;
        try {
          child = new Deno.Command(cmd!, {
            args,
            stdin: "null",
            stdout: "piped",
            stderr: "piped",
            detached: true,
          }).spawn();
        } catch (e) {
          if (e instanceof Deno.errors.NotFound) {
            return { status: "fatal", error: `command not found: ${cmd}` };
          }
          if (e instanceof Deno.errors.PermissionDenied) {
            return { status: "fatal", error: `command is not executable: ${cmd}` };
          }
          return { status: "fatal", error: `cannot start ${cmd}: ${describeError(e)}` };
        }
        const pid = child.pid;
        let killTimer: ReturnType<typeof setTimeout> | undefined;
        const onAbort = () => {
          killGroup(pid, "SIGTERM");
          killTimer = setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        const sink = { parts: [] as Uint8Array[], size: 0 };
        const reading = Promise.all([
          drain(child.stdout, sink, OUTPUT_CAP),
          drain(child.stderr, sink, OUTPUT_CAP),
        ]);
        try {
          const status = await child.status;
          // Background children of the command would hold the pipes open: end them.
          killGroup(pid, "SIGTERM");
          if (signal.aborted) {
            await reapGroup(pid);
            return { status: "pending", error: "aborted" };
          }
          await reading;
          const output = new TextDecoder().decode(concat(sink.parts, sink.size));
          if (status.signal) return { status: "pending", error: `killed by ${status.signal}` };
          if (status.code !== want) {
            const tail = lastLine(output);
            return {
              status: "pending",
              error: `exit ${status.code}${want !== 0 ? `, expected ${want}` : ""}${
                tail ? `: ${tail}` : ""
              }`,
            };
          }
          if (needle !== undefined && !output.includes(needle)) {
            return {
              status: "pending",
              error: `exit ${status.code}, output does not contain ${JSON.stringify(needle)}`,
            };
          }
          return {
            status: "satisfied",
            detail: needle !== undefined
              ? `exit ${status.code}, output contains ${JSON.stringify(needle)}`
              : `exit ${status.code}`,
          };
        } finally {
          signal.removeEventListener("abort", onAbort);
          clearTimeout(killTimer);
        }
      },
    };
  },
};

/** After SIGTERM: waits out the grace period for the group's members, then SIGKILLs what is left. */
async function reapGroup(pid: number): Promise<void> {
  const until = Date.now() + KILL_GRACE_MS;
  while (Date.now() < until && groupAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  killGroup(pid, "SIGKILL");
}

function groupAlive(pid: number): boolean {
  try {
    Deno.kill(-pid, 0 as unknown as Deno.Signal);
    return true;
  } catch {
    return false;
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
