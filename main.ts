/**
 * The waitcmd CLI. This is the only module that reads `Deno.args` and the
 * environment, installs signal handlers and exits; it reads the command
 * line once and dispatches. What it calls is testable without a process.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { loadRegistry } from "./conditions/mod.ts";
import { cliClock, type Clock } from "./engine/clock.ts";
import { errorText, UsageError } from "./engine/errors.ts";
import { FileReadError, readBounded } from "./engine/files.ts";
import { type Command, parseArgv } from "./engine/grammar.ts";
import { type Handover, handOver, SIGNAL_NUMBERS } from "./engine/handover.ts";
import { type ExpandIo, expandPlan, validatePlan } from "./engine/prepare.ts";
import type { Registry } from "./engine/registry.ts";
import type { Report } from "./engine/report.ts";
import { isHarmlessStray } from "./engine/strays.ts";
import { makeRedactor } from "./output/redact.ts";
import { runSession, type SessionIo } from "./output/session.ts";
import { SafeStreams } from "./output/streams.ts";

/** The program's connection to the outside world. */
export interface Io extends SessionIo {
  /** The text of a file (`-` is standard input), bounded (docs/contract.md §9). */
  readText(path: string): Promise<string>;
}

/** The largest recipe or manifest read (docs/contract.md §9). */
const INPUT_MAX_BYTES = 4 << 20;

/** `waitcmd 0.1.0 (x86_64-unknown-linux-gnu, deno 2.9.6)`. */
export function versionLine(): string {
  return `waitcmd ${denoJson.version} (${Deno.build.target}, deno ${Deno.version.deno})`;
}

/** Exit code of a finished run (DECISIONS §4, §14); `timeoutCode`: `--timeout-exit-code`. */
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
      return 128 + (SIGNAL_NUMBERS[report.signal as Deno.Signal] ?? 2);
  }
}

/** A word that may name a recipe file (`--config FILE`, `-f=FILE`). */
const CONFIG_FLAG = /^(?:--config|-f)(?:=|$)/;

/** Runs the CLI; returns what the process should exit with, and a `then` to hand over to. */
export async function main(
  argv: readonly string[],
  io: Io,
): Promise<{ code: number; handover?: Handover }> {
  let full: Promise<Registry> | undefined;
  const everyKind = () => (full ??= loadRegistry());
  let locate = (e: UsageError) => e;
  let command: Command;
  let registry: Registry;
  try {
    let words: readonly string[] = argv;
    // Recipes (and their parser) load only for a command line that may name one.
    const recipe = argv.some((a) => CONFIG_FLAG.test(a))
      ? await import("./engine/recipe.ts")
      : undefined;
    const { file, rest } = recipe ? recipe.takeConfig(argv) : { file: undefined, rest: argv };
    if (file !== undefined) {
      registry = await everyKind();
      const expanded = await recipe!.expandRecipe(await readInput(io, file), file, rest, registry);
      words = expanded.argv;
      locate = expanded.locate;
    } else {
      // The declarations of the kinds the command line names, and no others: a run of one
      // kind does not load thirty (docs/performance.md). Help and doctor list every kind.
      const all = argv[0] === "doctor" || argv[0] === "help" || argv.includes("--help") ||
        argv.includes("-h") || argv[0] === "completions";
      registry = all ? await everyKind() : await loadRegistry(words);
    }
    command = parseArgv(words, registry, io.env);
    if (command.type === "run") {
      await validatePlan(command.plan, { env: io.env, isolate: true, signal: io.signal });
      command = { ...command, plan: await expandPlan(command.plan, expandIo(io)) };
    }
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // A hint that needs every kind (did you mean …?) is completed now, without parsing again.
    const error = locate(e.complete ? e.complete(await everyKind()) : e);
    const { argvSecrets } = await import("./engine/secrets.ts");
    const secrets = argvSecrets(argv, secretFlags(await everyKind()));
    io.stderr(makeRedactor(secrets)(error.format()) + "\n");
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
      const { doctor } = await import("./output/doctor.ts");
      return { code: await doctor(command, registry, io) };
    }
    case "run": {
      const end = await runSession(command.plan, io);
      if (!end.report) return { code: end.code ?? 0 };
      const code = exitCode(end.report, command.plan.options.timeoutExitCode);
      return { code, handover: end.handover };
    }
  }
}

/** A recipe or manifest given on the command line, bounded; a usage error when unreadable. */
async function readInput(io: Io, path: string, flag = "--config"): Promise<string> {
  try {
    return await io.readText(path);
  } catch (e) {
    if (!(e instanceof FileReadError)) throw e;
    throw new UsageError(flag, `cannot read ${path}: ${e.message}`);
  }
}

/** What kinds that expand (`orch -f`) read their files with. */
function expandIo(io: Io): ExpandIo {
  return {
    readText: (path) => io.readText(path),
    readDir: async (path) => {
      const entries = [];
      for await (const e of Deno.readDir(path)) {
        entries.push({ name: e.name, isFile: e.isFile, isDirectory: e.isDirectory });
      }
      return entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    },
    isDirectory: (path) => Deno.stat(path).then((i) => i.isDirectory, () => false),
  };
}

/** Names of every flag declared secret, for redacting a raw command line. */
function secretFlags(registry: Registry): ReadonlySet<string> {
  return new Set(
    registry.kinds.flatMap((k) => k.flags.filter((f) => f.secret).map((f) => f.name)),
  );
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
  let result: { code: number; handover?: Handover };
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
          return 80;
        }
      },
      clock: cliClock as Clock,
      signal: cancel.signal,
      readText: (path) => readBounded(path, INPUT_MAX_BYTES),
    });
  } catch (e) {
    // A bug of ours: one line, never a stack trace (WAITCMD_DEBUG shows it).
    streams.write(Deno.stderr, `waitcmd: internal error: ${errorText(e)}\n`);
    if (Deno.env.get("WAITCMD_DEBUG") && e instanceof Error) {
      streams.write(Deno.stderr, `${e.stack}\n`);
    }
    result = { code: 3 };
  }
  for (const [sig, h] of handlers) Deno.removeSignalListener(sig, h);
  const code = result.handover
    ? await handOver(
      { command: result.handover.command, env: { ...Deno.env.toObject(), ...result.handover.env } },
      (listener) => {
        const added = FORWARDED.flatMap((sig) => {
          const h = () => listener(sig);
          try {
            Deno.addSignalListener(sig, h);
            return [[sig, h] as const];
          } catch {
            return []; // Not supported on this platform.
          }
        });
        return () => added.forEach(([sig, h]) => Deno.removeSignalListener(sig, h));
      },
      (line) => streams.write(Deno.stderr, line + "\n"),
    )
    : result.code;
  Deno.exit(code);
}
