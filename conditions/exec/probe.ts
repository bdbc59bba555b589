/**
 * exec's probe: runs the command once per attempt and judges its exit
 * status and output. A command that cannot be started is fatal.
 *
 * @module
 */

import { describeError, FatalError } from "../../engine/errors.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { endGroups, groupAlive, KILL_GRACE_MS, killGroup, reapGroup } from "./group.ts";
import type { ExecOptions } from "./mod.ts";
import { lastLine, readOutput } from "./output.ts";

/**
 * Starts the command in its own process group. Throws a `FatalError` when it
 * cannot be started (docs/contract.md §8): no retry makes it exist.
 */
function spawn(command: string, args: readonly string[]): Deno.ChildProcess {
  try {
    return new Deno.Command(command, {
      args: [...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new FatalError(`command not found: ${command}`);
    if (e instanceof Deno.errors.PermissionDenied) {
      throw new FatalError(`command is not executable: ${command}`);
    }
    const why = describeError(e).replace(/^cannot start [^:]*: /, "");
    // Out of descriptors or processes for now: the next attempt may start it.
    if (TRANSIENT.test(why)) throw new Error(`cannot start ${command}: ${why}`);
    throw new FatalError(`cannot start ${command}: ${why}`);
  }
}

/** Start failures that a later attempt may not meet (descriptors, processes, memory). */
const TRANSIENT = /too many open files|resource temporarily unavailable|cannot allocate memory/i;

/** Makes the probe of one exec condition. */
export function create(options: ExecOptions, env: ProbeEnv): Probe {
  const { command, args, exitCode: want, outputContains: needle } = options;
  const clock = env.clock;
  /** The process groups started and not yet seen gone: ended by `close` at the end of the run. */
  const groups = new Set<number>();
  /** One run of the command. */
  async function run(signal: AbortSignal): Promise<ProbeResult> {
    const child = spawn(command, args);
    const pid = child.pid;
    groups.add(pid);
    const grace = new AbortController();
    const onAbort = () => {
      killGroup(pid, "SIGTERM");
      clock.sleep(KILL_GRACE_MS, grace.signal).then(() => {
        if (!grace.signal.aborted) killGroup(pid, "SIGKILL");
      });
    };
    signal.addEventListener("abort", onAbort, { once: true });
    const reading = readOutput(child);
    try {
      const status = await child.status;
      // Background children of the command would hold the pipes open: end them.
      killGroup(pid, "SIGTERM");
      if (signal.aborted) {
        reading.catch(() => {}); // Ends with the group; nobody reads it any more.
        await reapGroup(pid, clock);
        return { status: "pending", error: "aborted" };
      }
      const output = await reading;
      if (status.signal) return { status: "pending", error: `killed by ${status.signal}` };
      if (status.code !== want) {
        const tail = lastLine(output, env.secrets);
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
      grace.abort();
      if (!groupAlive(pid)) groups.delete(pid);
    }
  }

  return {
    check: ({ signal }) => run(signal),
    // The run is over (deadline, signal, verdict): nothing the command started outlives it,
    // a command that ignores SIGTERM included (docs/contract.md §9, exec kill grace).
    close: () => endGroups(groups, clock).finally(() => groups.clear()),
  };
}
