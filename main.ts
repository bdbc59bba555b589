/**
 * The waitcmd CLI. This is the only module that reads `Deno.args` and the
 * environment, installs signal handlers and exits; everything it calls is
 * testable without a process.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { registry } from "./conditions/mod.ts";
import { cliClock, type Clock } from "./engine/clock.ts";
import { errorText, UsageError } from "./engine/errors.ts";
import { parseArgv, type Plan } from "./engine/grammar.ts";
import { isHarmlessStray } from "./engine/strays.ts";
import { type Report, run, type RunEvent } from "./engine/runner.ts";
import { completionScript } from "./output/completions.ts";
import { kindHelp, mainHelp } from "./output/help.ts";
import { renderJsonlEvent, renderJsonReport } from "./output/json.ts";
import { LiveRenderer } from "./output/live.ts";
import { makeRedactor } from "./output/redact.ts";
import { ansiStyle, LineRenderer, plainStyle } from "./output/text.ts";

/** The program's connection to the outside world. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly env: Readonly<Record<string, string>>;
  readonly stderrIsTerminal: boolean;
  columns(): number;
  readonly clock: Clock;
  /** Aborted with "SIGINT" or "SIGTERM" to cancel the run. */
  readonly signal: AbortSignal;
}

/** `waitcmd 0.1.0 (x86_64-unknown-linux-gnu, deno 2.9.6)`. */
export function versionLine(): string {
  return `waitcmd ${denoJson.version} (${Deno.build.target}, deno ${Deno.version.deno})`;
}

/** Exit code of a finished run (DECISIONS §4). */
export function exitCode(report: Report): number {
  switch (report.status) {
    case "satisfied":
      return 0;
    case "timeout":
      return 1;
    case "fatal":
      return 3;
    case "cancelled":
      return report.signal === "SIGTERM" ? 143 : 130;
  }
}

/** Runs the CLI; returns what the process should exit with, plus a `then` command to hand over to. */
export async function main(
  argv: readonly string[],
  io: Io,
): Promise<{ code: number; then?: readonly string[] }> {
  let command;
  try {
    command = parseArgv(argv, registry, io.env);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(e.format() + "\n");
      return { code: 2 };
    }
    throw e;
  }
  switch (command.type) {
    case "help": {
      const kind = command.topic ? registry.lookup(command.topic) : undefined;
      io.stdout(kind ? kindHelp(kind) : mainHelp(registry));
      return { code: 0 };
    }
    case "version":
      io.stdout(versionLine() + "\n");
      return { code: 0 };
    case "completions":
      io.stdout(completionScript(command.shell, registry));
      return { code: 0 };
    case "run":
      return await runPlan(command.plan, io);
  }
}

async function runPlan(plan: Plan, io: Io): Promise<{ code: number; then?: readonly string[] }> {
  const redact = makeRedactor(plan.secrets);
  const o = plan.options;
  let onEvent: (e: RunEvent) => void;
  if (o.output === "json") {
    onEvent = () => {};
  } else if (o.output === "jsonl") {
    onEvent = (e) => {
      const line = renderJsonlEvent(e, redact);
      if (line !== undefined) io.stdout(line);
    };
  } else {
    const color = io.stderrIsTerminal && !o.noColor &&
      !("NO_COLOR" in io.env && io.env.NO_COLOR !== "");
    const style = color ? ansiStyle : plainStyle;
    if (io.stderrIsTerminal && !o.quiet) {
      const live = new LiveRenderer(io.stderr, redact, style, io.columns);
      onEvent = (e) => live.onEvent(e);
    } else {
      const lines = new LineRenderer((l) => io.stderr(l + "\n"), redact, { quiet: o.quiet, style });
      onEvent = (e) => lines.onEvent(e);
    }
  }
  const report = await run(plan, { clock: io.clock, signal: io.signal, onEvent });
  if (o.output === "json") io.stdout(renderJsonReport(report, redact));
  const code = exitCode(report);
  if (code === 0 && plan.then) return { code, then: plan.then };
  return { code };
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

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  let data = new TextEncoder().encode(text);
  while (data.length > 0) data = data.subarray(file.writeSync(data));
}

const FORWARDED: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"];

/** Runs the `then` command with inherited stdio, forwarding signals; returns its exit code. */
async function handOver(cmd: readonly string[]): Promise<number> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd[0]!, {
      args: cmd.slice(1),
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (e) {
    const notFound = e instanceof Deno.errors.NotFound;
    writeAll(
      Deno.stderr,
      `waitcmd: then: ${notFound ? "command not found" : errorText(e)}: ${cmd[0]}\n`,
    );
    return notFound ? 127 : 126;
  }
  const forwards = FORWARDED.map((sig) => {
    const h = () => {
      try {
        child.kill(sig);
      } catch {
        // The child is already gone; its status tells the rest.
      }
    };
    try {
      Deno.addSignalListener(sig, h);
    } catch {
      return undefined; // Not supported on this platform.
    }
    return [sig, h] as const;
  });
  const status = await child.status;
  for (const f of forwards) if (f) Deno.removeSignalListener(f[0], f[1]);
  if (status.signal) return 128 + (SIGNAL_NUMBERS[status.signal] ?? 1);
  return status.code;
}

const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGUSR2: 12,
  SIGTERM: 15,
};

if (import.meta.main) {
  const onStray = (reason: unknown, prevent: () => void) => {
    prevent();
    const line = strayLine(reason);
    if (line === undefined) return;
    writeAll(Deno.stderr, line);
    Deno.exit(3);
  };
  globalThis.addEventListener(
    "unhandledrejection",
    (e) => onStray(e.reason, () => e.preventDefault()),
  );
  globalThis.addEventListener("error", (e) => onStray(e.error, () => e.preventDefault()));
  const cancel = new AbortController();
  const handlers = (["SIGINT", "SIGTERM"] as const).map((sig) => {
    const h = () => cancel.abort(sig);
    Deno.addSignalListener(sig, h);
    return [sig, h] as const;
  });
  let result: { code: number; then?: readonly string[] };
  try {
    result = await main(Deno.args, {
      stdout: (t) => writeAll(Deno.stdout, t),
      stderr: (t) => writeAll(Deno.stderr, t),
      env: Deno.env.toObject(),
      stderrIsTerminal: Deno.stderr.isTerminal(),
      columns: () => {
        try {
          return Deno.consoleSize().columns;
        } catch {
          return 80;
        }
      },
      clock: cliClock,
      signal: cancel.signal,
    });
  } catch (e) {
    // A bug of ours: one line, never a stack trace (WAITCMD_DEBUG shows it).
    writeAll(Deno.stderr, `waitcmd: internal error: ${errorText(e)}\n`);
    if (Deno.env.get("WAITCMD_DEBUG") && e instanceof Error) writeAll(Deno.stderr, `${e.stack}\n`);
    result = { code: 3 };
  }
  for (const [sig, h] of handlers) Deno.removeSignalListener(sig, h);
  const code = result.then ? await handOver(result.then) : result.code;
  Deno.exit(code);
}
