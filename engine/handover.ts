/**
 * `-- then <command>` (docs/contract.md §1, §4): checked before the wait,
 * run once the wait succeeded, with inherited stdio, the captures of the
 * wait in its environment, and the signals waitcmd receives forwarded to it.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { captureVariable } from "./plan.ts";
import type { Report } from "./report.ts";

/**
 * A `then` command that cannot run is a usage error found before waiting
 * (docs/contract.md §1): a path that does not exist or is not an executable
 * file, or a bare name that is on no PATH directory. A name with spaces is
 * most often a command typed as one word (`then "npm test"`): the message
 * says the words must be separate.
 */
export function checkThen(cmd: string, env: Readonly<Record<string, string>>): void {
  const executable = (path: string): boolean => {
    try {
      const info = Deno.statSync(path);
      return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  const oneWord = /\s/.test(cmd.trim())
    ? `; the command and its arguments are separate words: -- then ${
      cmd.trim().split(/\s+/).join(" ")
    }` +
      " (unquoted)"
    : "";
  if (cmd.includes("/")) {
    let exists = true;
    try {
      Deno.statSync(cmd);
    } catch {
      exists = false;
    }
    if (!exists) throw new UsageError("then", `command not found: ${cmd}${oneWord}`);
    if (!executable(cmd)) throw new UsageError("then", `not an executable file: ${cmd}`);
    return;
  }
  const dirs = (env.PATH ?? "").split(":").map((d) => d || ".");
  if (!dirs.some((d) => executable(`${d}/${cmd}`))) {
    throw new UsageError("then", `command not found on PATH: ${cmd}${oneWord}`);
  }
}

export { captureVariable };

/**
 * The longest text Linux takes as one `NAME=value` string of an environment (MAX_ARG_STRLEN,
 * 32 pages), its closing NUL included: a longer capture could not reach `then`.
 */
export const ENV_STRING_MAX = 131_072;

/**
 * Why `value` cannot be `then`'s variable `variable` (docs/contract.md §7, captures), or
 * undefined when it can: an environment value ends at its first NUL byte, the system
 * refuses a variable longer than {@link ENV_STRING_MAX}, and bytes that are not UTF-8 were
 * read as U+FFFD: `then` would get other bytes than those matched.
 */
export function captureProblem(variable: string, value: string): string | undefined {
  if (value.includes("\0")) return "it holds a NUL byte";
  if (value.includes("\uFFFD")) {
    return "it holds bytes that are not UTF-8 (read as U+FFFD)";
  }
  const bytes = new TextEncoder().encode(value).length;
  if (variable.length + 2 + bytes > ENV_STRING_MAX) {
    return `it is ${bytes} bytes long, more than an environment variable may hold (${ENV_STRING_MAX} bytes with its name)`;
  }
  return undefined;
}

/**
 * What `then` gets on top of waitcmd's environment: each named group a satisfied condition
 * captured (numbered groups and `--jsonpath`'s value stay in the report), and the report
 * file's path when `--report` was given.
 */
export function thenEnvironment(
  report: Report,
  namedGroups: ReadonlyMap<number, readonly string[]>,
  reportFile: string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of report.conditions) {
    if (!c.satisfied || c.guard) continue;
    for (const name of namedGroups.get(c.index) ?? []) {
      const value = c.captures[name];
      if (value !== undefined) out[captureVariable(name)] = value;
    }
  }
  if (reportFile !== undefined) out.WAITCMD_REPORT = reportFile;
  return out;
}

/**
 * Why `then` cannot be given the captures of `report` (docs/contract.md §7, captures): the line
 * naming the first variable whose value no environment can hold and its condition, or
 * undefined. The wait's verdict stands; `then` is not started (exit 3).
 */
export function thenRefusal(
  report: Report,
  namedGroups: ReadonlyMap<number, readonly string[]>,
): string | undefined {
  for (const c of report.conditions) {
    if (!c.satisfied || c.guard) continue;
    for (const name of namedGroups.get(c.index) ?? []) {
      const value = c.captures[name];
      if (value === undefined) continue;
      const variable = captureVariable(name);
      const why = captureProblem(variable, value);
      if (why !== undefined) {
        return `waitcmd: then: not started: ${variable}, the capture ${JSON.stringify(name)} of ` +
          `condition ${c.index} (${c.kind}), cannot be an environment variable: ${why}`;
      }
    }
  }
  return undefined;
}

/** Where the hand-over hears the signals waitcmd receives (main.ts installs the listeners). */
export type SignalSource = (listener: (signal: Deno.Signal) => void) => () => void;

/**
 * A {@link SignalSource} of the process's own `signals`: each received is passed on; one this
 * platform cannot listen to is left out.
 */
export function forwardSignals(signals: readonly Deno.Signal[]): SignalSource {
  return (listener) => {
    const added = signals.flatMap((sig) => {
      const h = () => listener(sig);
      try {
        Deno.addSignalListener(sig, h);
        return [[sig, h] as const];
      } catch {
        return []; // Not supported on this platform.
      }
    });
    return () => added.forEach(([sig, h]) => Deno.removeSignalListener(sig, h));
  };
}

/** What the command runs with. */
export interface Handover {
  readonly command: readonly string[];
  /** Added to waitcmd's own environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Why the command is not started after all (a capture no environment can hold): the line. */
  readonly refused?: string;
}

/** Signals after which the child's whole group must be gone within GRACE_MS. */
const ENDING: ReadonlySet<Deno.Signal> = new Set(["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]);
/** How long a `then` child may take to stop after an ending signal before SIGKILL (as docker stop). */
const GRACE_MS = 10_000;

/**
 * Runs the `then` command with inherited stdio, forwarding signals to its
 * whole process group, and returns its exit code (docs/contract.md §4).
 * Without a terminal the child leads a process group of its own, so an
 * ending signal reaches everything it started, and what is still alive
 * GRACE_MS later is killed. On a terminal the child stays in the terminal's
 * foreground group (it may read the terminal); the terminal's Ctrl-C
 * reaches the whole group itself. `report` says what went wrong starting it.
 */
export async function handOver(
  h: Handover,
  signals: SignalSource,
  report: (line: string) => void,
): Promise<number> {
  if (h.refused !== undefined) {
    report(h.refused);
    return 3;
  }
  const ownGroup = !Deno.stdin.isTerminal();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(h.command[0]!, {
      args: h.command.slice(1),
      env: h.env,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
      detached: ownGroup,
    }).spawn();
  } catch (e) {
    report(`waitcmd: then: cannot start ${h.command[0]}: ${(e as Error).message}`);
    return 3;
  }
  const send = (sig: Deno.Signal) => {
    try {
      if (ownGroup) Deno.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // The child (or its group) is already gone; its status tells the rest.
    }
  };
  let killer: ReturnType<typeof setTimeout> | undefined;
  const stop = signals((sig) => {
    send(sig);
    if (ENDING.has(sig) && killer === undefined) {
      killer = setTimeout(() => send("SIGKILL"), GRACE_MS);
    }
  });
  const status = await child.status;
  // After an ending signal, nothing the command started outlives waitcmd.
  if (killer !== undefined) {
    clearTimeout(killer);
    if (ownGroup) send("SIGKILL");
  }
  stop();
  if (status.signal) return 128 + (SIGNAL_NUMBERS[status.signal] ?? 1);
  return status.code;
}

/** Numbers of the signals waitcmd reports or forwards (exit code 128 + n). */
export const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGUSR2: 12,
  SIGTERM: 15,
};

/** 128 + the signal's number: 130 for SIGINT, 131 for SIGQUIT, 143 for SIGTERM. */
export function signalExitCode(signal: string): number {
  return 128 + (SIGNAL_NUMBERS[signal as Deno.Signal] ?? 2);
}
