/**
 * The waitcmd CLI. This is the only module that reads `Deno.args` and the
 * environment, installs signal handlers and exits; it reads the command
 * line once and dispatches. What it calls is testable without a process.
 *
 * @module
 */

// First: its evaluation is the first of our code that runs (the start-up trace, engine/trace.ts).
import { mark } from "./engine/trace.ts";
import denoJson from "./deno.json" with { type: "json" };
import { KINDS, loadRegistry } from "./conditions/mod.ts";
import { cliClock, type Clock } from "./engine/clock.ts";
import { errorText, UsageError } from "./engine/errors.ts";
import { readBounded } from "./engine/files.ts";
import type { Command } from "./engine/grammar.ts";
import { forwardSignals, type Handover, handOver, signalExitCode } from "./engine/handover.ts";
import type { Registry } from "./engine/registry.ts";
import type { Report } from "./engine/report.ts";
import { isHarmlessStray } from "./engine/strays.ts";
import {
  Cancelled,
  crashLine,
  type Io,
  readCommand,
  secretFlags,
  untilSignal,
} from "./cli/command.ts";
import { findNotUtf8, openFilesProblem, readSelf } from "./cli/process_checks.ts";
import { runSession } from "./cli/session.ts";
import { SafeStreams } from "./output/streams.ts";

export type { Io } from "./cli/command.ts";

/** The largest recipe or manifest read (docs/contract.md §9). */
const INPUT_MAX_BYTES = 4 << 20;

/** `waitcmd 0.1.0 (x86_64-unknown-linux-gnu, deno 2.9.6)`. */
export function versionLine(): string {
  return `waitcmd ${denoJson.version} (${Deno.build.target}, deno ${Deno.version.deno})`;
}

/** Exit code of a finished run (docs/contract.md §3); `timeoutCode`: `--timeout-exit-code`. */
export function exitCode(report: Report, timeoutCode = 1): number {
  switch (report.status) {
    case "satisfied":
      return 0;
    case "timeout":
    case "exhausted":
      return timeoutCode;
    case "fatal":
      return 3;
    case "cancelled":
      return signalExitCode(String(report.signal));
  }
}

/** Runs the CLI; returns what the process should exit with, and a `then` to hand over to. */
export async function main(
  argv: readonly string[],
  io: Io,
): Promise<{ code: number; handover?: Handover; stopStarted?: () => Promise<void> }> {
  let full: Promise<Registry> | undefined;
  const everyKind = () => (full ??= loadRegistry());
  let command: Command;
  let registry: Registry;
  try {
    // Every phase before the wait answers a signal at once (docs/contract.md §3): a recipe
    // or a key that is a FIFO nobody writes, a slow import, a large recipe.
    ({ command, registry } = await untilSignal(
      readCommand(argv, io, { every: everyKind, named: loadRegistry }),
      io.signal,
    ));
    mark("plan");
  } catch (e) {
    if (e instanceof Cancelled) {
      io.stderr(`waitcmd: cancelled by ${e.signal} before the wait started\n`);
      return { code: signalExitCode(e.signal) };
    }
    if (!(e instanceof UsageError)) throw e;
    // Our words and the user's argv: its secrets masked where they stand (docs/contract.md §9).
    // Up to `-- then` the words are waitcmd's: a value is secret there when its flag says so.
    const then = argv.findIndex((w, i) => w === "then" && argv[i - 1] === "--");
    const own = then < 0 ? argv.length : then;
    const [{ escapeControls }, { maskArgvText }] = await Promise.all([
      import("./engine/masking.ts"),
      import("./engine/typed_secrets.ts"),
    ]);
    io.stderr(
      escapeControls(maskArgvText(e.format(), argv, secretFlags(await everyKind()), own)) + "\n",
    );
    return { code: 2 };
  }
  switch (command.type) {
    case "help": {
      const { helpText } = await import("./output/help.ts");
      io.stdout(helpText(command.topic, registry));
      return { code: 0 };
    }
    case "version":
      io.stdout(versionLine() + "\n");
      return { code: 0 };
    case "completions": {
      const { completionScript } = await import("./output/completions.ts");
      io.stdout(completionScript(command.shell, registry));
      return { code: 0 };
    }
    case "doctor": {
      const { doctor } = await import("./cli/doctor.ts");
      return { code: await doctor(command, registry, io) };
    }
    case "run": {
      const kindWords = new Set(KINDS.flatMap((k) => [k.name, ...k.aliases]));
      const end = await runSession(command.plan, io, kindWords);
      if (!end.report) return { code: end.code ?? 0 };
      const code = exitCode(end.report, command.plan.options.timeoutExitCode);
      return { code, handover: end.handover, stopStarted: end.stopStarted };
    }
  }
}

/**
 * What to print for an error that escaped every await, or undefined for one a
 * kind declared harmless. Deno would exit 1 on it, which reads as "timed
 * out"; the CLI prints this line and exits 3 instead.
 */
export function strayLine(reason: unknown): string | undefined {
  if (isHarmlessStray(reason)) return undefined;
  return `waitcmd: internal error: ${errorText(reason)}\n`;
}

/** Signals that cancel the run (SIGQUIT too: summary, report, exit 131; docs/contract.md §3). */
const CANCELLING = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;
/** Signals forwarded to `then`'s command. */
const FORWARDED: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"];

if (import.meta.main) {
  const streams = new SafeStreams(Deno.stdout, Deno.stderr);
  const tooFew = openFilesProblem(readSelf("limits"));
  if (tooFew !== undefined) {
    streams.write(Deno.stderr, tooFew);
    Deno.exit(3);
  }
  const onStray = (reason: unknown, prevent: () => void) => {
    prevent();
    const line = strayLine(reason);
    if (line === undefined) return;
    streams.write(Deno.stderr, line);
    Deno.exit(3);
  };
  globalThis.addEventListener(
    "unhandledrejection",
    (e) => onStray(e.reason, () => e.preventDefault()),
  );
  globalThis.addEventListener("error", (e) => onStray(e.error, () => e.preventDefault()));
  const cancel = new AbortController();
  // SIGPIPE is ignored by the runtime: a closed pipe is a failed write, never a silent death.
  const handlers = CANCELLING.map((sig) => {
    const h = () => cancel.abort(sig);
    Deno.addSignalListener(sig, h);
    return [sig, h] as const;
  });
  let result: { code: number; handover?: Handover; stopStarted?: () => Promise<void> };
  try {
    result = await main(Deno.args, {
      stdout: (t) => streams.write(Deno.stdout, t),
      stderr: (t) => streams.write(Deno.stderr, t),
      env: Deno.env.toObject(),
      stderrIsTerminal: Deno.stderr.isTerminal(),
      columns: () => {
        try {
          return Deno.consoleSize().columns;
        } catch {
          return 0; // unknown: plain lines instead of the live view (docs/contract.md §6)
        }
      },
      clock: cliClock as Clock,
      wallClock: Date.now,
      signal: cancel.signal,
      hearOffThread: async () => {
        const { OffThreadEar } = await import("./cli/off_thread_signals.ts");
        const ear = new OffThreadEar(CANCELLING, (sig) => cancel.abort(sig));
        return () => ear.stop();
      },
      readText: (path) => readBounded(path, INPUT_MAX_BYTES, true),
      notUtf8: findNotUtf8(Deno.args),
    });
  } catch (e) {
    streams.write(Deno.stderr, crashLine(e, `${import.meta.dirname}/scripts/packages`));
    if (Deno.env.get("WAITCMD_DEBUG") && e instanceof Error) {
      streams.write(Deno.stderr, `${e.stack}\n`);
    }
    result = { code: 3 };
  }
  for (const [sig, h] of handlers) Deno.removeSignalListener(sig, h);
  const code = result.handover
    ? await handOver(
      { ...result.handover, env: { ...Deno.env.toObject(), ...result.handover.env } },
      forwardSignals(FORWARDED),
      (line) => streams.write(Deno.stderr, line + "\n"),
    )
    : result.code;
  // What --start started is stopped once then has ended (docs/contract.md §4).
  await result.stopStarted?.();
  mark("exit");
  Deno.exit(code);
}
