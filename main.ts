/**
 * The waitcmd CLI. This is the only module that reads `Deno.args` and the
 * environment, installs signal handlers and exits; it reads the command
 * line once and dispatches. What it calls is testable without a process.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { KINDS, loadRegistry } from "./conditions/mod.ts";
import { cliClock, type Clock } from "./engine/clock.ts";
import { errorText, missingPackage, UsageError } from "./engine/errors.ts";
import { FileReadError, isUtf8, readBounded } from "./engine/files.ts";
import { type Command, parseArgv } from "./engine/grammar.ts";
import { type Handover, handOver, signalExitCode } from "./engine/handover.ts";
import { type ExpandIo, expandPlan, validatePlan } from "./engine/prepare.ts";
import type { Registry } from "./engine/registry.ts";
import type { Report } from "./engine/report.ts";
import { isHarmlessStray } from "./engine/strays.ts";
import { lineRedactor, makeRedactor } from "./output/redact.ts";
import { runSession, type SessionIo } from "./output/session.ts";
import { SafeStreams } from "./output/streams.ts";

/** The program's connection to the outside world. */
export interface Io extends SessionIo {
  /** The text of a file (`-` is standard input), bounded (docs/contract.md §9). */
  readText(path: string): Promise<string>;
  /** What the process's command line and environment hold that is not UTF-8. */
  readonly notUtf8?: NotUtf8;
}

/**
 * The words and variables whose bytes are not UTF-8. The runtime hands them over mangled
 * (argv with U+FFFD in place of each bad byte) or not at all (the environment), so waitcmd
 * would use another path or value than the one given (docs/contract.md §1).
 */
export interface NotUtf8 {
  /** Indexes into the arguments. */
  readonly args: readonly number[];
  /** Names of variables. */
  readonly env: readonly string[];
}

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

/** A word that may name a recipe file (`--config FILE`, `-f=FILE`). */
const CONFIG_FLAG = /^(?:--config|-f)(?:=|$)/;

/** Runs the CLI; returns what the process should exit with, and a `then` to hand over to. */
export async function main(
  argv: readonly string[],
  io: Io,
): Promise<{ code: number; handover?: Handover }> {
  let full: Promise<Registry> | undefined;
  const everyKind = () => (full ??= loadRegistry());
  let command: Command;
  let registry: Registry;
  try {
    // Every phase before the wait answers a signal at once (docs/contract.md §3): a recipe
    // or a key that is a FIFO nobody writes, a slow import, a large recipe.
    ({ command, registry } = await untilSignal(readCommand(argv, io, everyKind), io.signal));
  } catch (e) {
    if (e instanceof Cancelled) {
      io.stderr(`waitcmd: cancelled by ${e.signal} before the wait started\n`);
      return { code: signalExitCode(e.signal) };
    }
    if (!(e instanceof UsageError)) throw e;
    const { argvSecrets } = await import("./engine/secrets.ts");
    const secrets = argvSecrets(argv, secretFlags(await everyKind()));
    io.stderr(lineRedactor(makeRedactor(secrets), false)(e.format()) + "\n");
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
      const kindWords = new Set(KINDS.flatMap((k) => [k.name, ...k.aliases]));
      const end = await runSession(command.plan, io, kindWords);
      if (!end.report) return { code: end.code ?? 0 };
      const code = exitCode(end.report, command.plan.options.timeoutExitCode);
      return { code, handover: end.handover };
    }
  }
}

/**
 * The command the words (and the recipe they name) ask for, validated and expanded; a usage
 * error located in the recipe when it comes from one, with every hint completed.
 */
async function readCommand(
  argv: readonly string[],
  io: Io,
  everyKind: () => Promise<Registry>,
): Promise<{ command: Command; registry: Registry }> {
  let locate = (e: UsageError) => e;
  try {
    if (io.notUtf8) checkUtf8(argv, io.notUtf8);
    let words: readonly string[] = argv;
    let registry: Registry;
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
    let command = parseArgv(words, registry, io.env);
    if (command.type === "run") {
      await validatePlan(command.plan, { env: io.env, isolate: true });
      command = { ...command, plan: await expandPlan(command.plan, expandIo(io)) };
    }
    return { command, registry };
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // A hint that needs every kind (did you mean …?) is completed now, without parsing again.
    throw locate(e.complete ? e.complete(await everyKind()) : e);
  }
}

/**
 * A usage error for the first word or `WAITCMD_*` variable that is not UTF-8: the runtime
 * decodes such a word with U+FFFD, so `lockfile $'/run/x\xff.lock'` would look at another path
 * (docs/contract.md §1). The word itself is not shown: it may be a secret.
 */
function checkUtf8(argv: readonly string[], bad: NotUtf8): void {
  const name = bad.env.find((n) => n.startsWith("WAITCMD_"));
  if (name !== undefined) {
    throw new UsageError(name, "the value is not valid UTF-8", "environment");
  }
  const at = bad.args[0];
  if (at === undefined) return;
  const after = at > 0 ? ` (after ${JSON.stringify(argv[at - 1])})` : "";
  throw new UsageError(
    "",
    `argument ${at + 1}${after} is not valid UTF-8: waitcmd cannot use such a path or word ` +
      "exactly as given",
  );
}

/**
 * What the raw command line (/proc/self/cmdline) and environment (/proc/self/environ) hold
 * that is not UTF-8; nothing where /proc cannot be read. Every such word or value holds U+FFFD
 * once decoded, so the bytes are looked at only then (a typed U+FFFD is valid): a loop over
 * every byte at each start cost 5 MB of peak memory, the compiler's (docs/performance.md).
 * Of the environment, only `WAITCMD_*` variables count.
 */
function findNotUtf8(args: readonly string[]): NotUtf8 {
  const read = (path: string) => {
    try {
      return Deno.readFileSync(path);
    } catch {
      return new Uint8Array();
    }
  };
  /** The NUL-terminated entries of `raw`, as bytes. */
  const entries = (raw: Uint8Array) => {
    const out: Uint8Array[] = [];
    for (let from = 0; from < raw.length;) {
      const end = raw.indexOf(0, from);
      out.push(raw.subarray(from, end < 0 ? raw.length : end));
      from = end < 0 ? raw.length : end + 1;
    }
    return out;
  };
  const badArgs: number[] = [];
  if (args.some((a) => a.includes("\uFFFD"))) {
    // The runtime's own words (deno run … main.ts) come first; the arguments are the last ones.
    const words = entries(read("/proc/self/cmdline")).slice(-args.length);
    if (words.length === args.length) words.forEach((w, i) => isUtf8(w) || badArgs.push(i));
  }
  const badEnv: string[] = [];
  const raw = read("/proc/self/environ");
  const suspect = new TextDecoder().decode(raw).split("\0").some((e) =>
    e.startsWith("WAITCMD_") && e.includes("\uFFFD")
  );
  if (suspect) {
    for (const entry of entries(raw)) {
      const text = new TextDecoder().decode(entry);
      if (text.startsWith("WAITCMD_") && !isUtf8(entry)) badEnv.push(text.replace(/=.*$/s, ""));
    }
  }
  return { args: badArgs, env: badEnv };
}

/** A signal came before the wait started. */
class Cancelled extends Error {
  override name = "Cancelled";
  constructor(readonly signal: string) {
    super(`cancelled by ${signal}`);
  }
}

/**
 * `work`, or a `Cancelled` as soon as `signal` aborts. What `work` still waits for (an open
 * of a FIFO nobody writes) is left behind: the process exits.
 */
function untilSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {}); // a failure after the signal is of no interest
  return new Promise<T>((resolve, reject) => {
    const cancel = () => reject(new Cancelled(String(signal.reason)));
    if (signal.aborted) return cancel();
    signal.addEventListener("abort", cancel, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", cancel));
  });
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

/** The fewest open files a run needs: the runtime, its signal handlers, a command's pipes. */
const MIN_OPEN_FILES = 32;

/**
 * The line to exit 3 with when the open-files limit (`ulimit -n`) is too low for the runtime
 * itself (docs/contract.md §3), or undefined. The runtime panics when it cannot get a
 * descriptor it needs (a signal handler's, a child's pipes): so the limit is said before.
 */
export function openFilesProblem(limits: string): string | undefined {
  const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
  if (soft === undefined || Number(soft) >= MIN_OPEN_FILES) return undefined;
  return `waitcmd: fatal: the open files limit (ulimit -n) is ${soft}; ` +
    `waitcmd needs at least ${MIN_OPEN_FILES}\n`;
}

if (import.meta.main) {
  const streams = new SafeStreams(Deno.stdout, Deno.stderr);
  let limits = "";
  try {
    limits = Deno.readTextFileSync("/proc/self/limits");
  } catch {
    // Not Linux, or no /proc: nothing to say.
  }
  const tooFew = openFilesProblem(limits);
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
      wallClock: Date.now,
      signal: cancel.signal,
      readText: (path) => readBounded(path, INPUT_MAX_BYTES, true),
      notUtf8: findNotUtf8(Deno.args),
    });
  } catch (e) {
    // A bug of ours: one line, never a stack trace (WAITCMD_DEBUG shows it). Or a set-up that
    // left a library out: a wait never downloads it (docs/development.md).
    const missing = missingPackage(e);
    streams.write(
      Deno.stderr,
      missing
        ? `waitcmd: the kinds' npm packages are not installed (${missing} is missing), and a wait never downloads: run ${import.meta.dirname}/scripts/packages\n`
        : `waitcmd: internal error: ${errorText(e)}\n`,
    );
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
