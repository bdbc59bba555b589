/**
 * exec's probe: runs the command once per attempt and judges its exit
 * status and output. A command that cannot be started is fatal.
 *
 * @module
 */

import { describeError, FatalError } from "../../engine/errors.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { endGroups, groupAlive, KILL_GRACE_MS, killGroup, reapGroup } from "./group.ts";
import { captureText } from "../_common/captures.ts";
import { formatSize } from "../_common/bytes.ts";
import type { ExecOptions } from "./mod.ts";
import { lastLine, OUTPUT_CAP, readOutputs } from "./output.ts";

/**
 * Starts the command in its own process group. Throws a `FatalError` when it
 * cannot be started (docs/contract.md §8): no retry makes it exist.
 */
function spawn(command: string, args: readonly string[], o: ExecOptions): Deno.ChildProcess {
  try {
    return new Deno.Command(command, {
      args: [...args],
      ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
      ...(o.env.length === 0 ? {} : { env: Object.fromEntries(o.env) }),
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

/**
 * Why the command cannot start in `--cwd` yet (the directory does not exist or is not one),
 * else undefined. Pending, not fatal: a checkout or a build may still create the directory
 * (docs/contract.md §5 exec).
 */
async function checkCwd(cwd: string | undefined): Promise<string | undefined> {
  if (cwd === undefined) return undefined;
  try {
    const info = await Deno.stat(cwd);
    return info.isDirectory ? undefined : `--cwd ${cwd}: not a directory`;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return `--cwd ${cwd}: no such directory`;
    return `--cwd ${cwd}: ${describeError(e)}`;
  }
}

/** Start failures that a later attempt may not meet (descriptors, processes, memory). */
const TRANSIENT = /too many open files|resource temporarily unavailable|cannot allocate memory/i;

/** Makes the probe of one exec condition. */
export function create(options: ExecOptions, env: ProbeEnv): Probe {
  const { command, args, exitCode: want, outputContains: needle, jsonpaths } = options;
  const clock = env.clock;
  /** The process groups started and not yet seen gone: ended by `close` at the end of the run. */
  const groups = new Set<number>();
  /** One run of the command. */
  async function run(signal: AbortSignal): Promise<ProbeResult> {
    const cwdProblem = await checkCwd(options.cwd);
    if (cwdProblem !== undefined) return { status: "pending", error: cwdProblem };
    // Ended while the directory was looked at: a command started now would hear of no abort
    // (the signal has fired) and outlive the run.
    if (signal.aborted) return { status: "pending", error: "aborted" };
    const child = spawn(command, args, options);
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
    const reading = readOutputs(child, jsonpaths.length > 0);
    try {
      const status = await child.status;
      // Background children of the command would hold the pipes open: end them.
      killGroup(pid, "SIGTERM");
      if (signal.aborted) {
        reading.catch(() => {}); // Ends with the group; nobody reads it any more.
        await reapGroup(pid, clock);
        return { status: "pending", error: "aborted" };
      }
      const outputs = await reading;
      const output = outputs.text;
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
      const detail = needle !== undefined
        ? `exit ${status.code}, output contains ${JSON.stringify(needle)}`
        : `exit ${status.code}`;
      if (jsonpaths.length === 0) return { status: "satisfied", detail };
      return await judgeJson(detail, outputs.stdout!, signal);
    } finally {
      signal.removeEventListener("abort", onAbort);
      grace.abort();
      if (!groupAlive(pid)) groups.delete(pid);
    }
  }

  /** The `--jsonpath` checks on stdout, after the exit status and `--output-contains` held. */
  async function judgeJson(
    detail: string,
    stdout: { readonly text: string; readonly truncated: boolean },
    signal: AbortSignal,
  ): Promise<ProbeResult> {
    if (stdout.truncated) {
      return {
        status: "pending",
        error: `stdout is larger than ${formatSize(OUTPUT_CAP)}, not parsed as JSON`,
      };
    }
    // Loaded only for a condition with --jsonpath: the JSONPath and RE2 libraries are large,
    // and a plain exec is the most common kind that runs from a cold start.
    const { judgeJsonPaths, jsonSyntaxError } = await import("../_common/jsonpath_lib.ts");
    let doc: unknown;
    try {
      doc = JSON.parse(stdout.text);
    } catch (e) {
      const why = stdout.text.trim() === "" ? "it is empty" : jsonSyntaxError(e);
      return { status: "pending", error: `stdout is not JSON: ${why}` };
    }
    const v = await judgeJsonPaths(jsonpaths, doc, signal, env.secrets);
    if (!v.ok) return { status: "pending", error: v.error };
    return {
      status: "satisfied",
      detail: [detail, ...v.details].join("; "),
      captures: { value: captureText(v.value) },
    };
  }

  return {
    check: ({ signal }) => run(signal),
    // The run is over (deadline, signal, verdict): nothing the command started outlives it,
    // a command that ignores SIGTERM included (docs/contract.md §9, exec kill grace).
    close: () => endGroups(groups, clock).finally(() => groups.clear()),
  };
}
