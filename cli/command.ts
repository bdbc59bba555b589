/**
 * Reading the command: the words (and the recipe they name) become a
 * validated, expanded `Command`, or a usage error located in the recipe.
 * Every step before the wait answers a signal at once (docs/contract.md §3).
 *
 * @module
 */

import { errorText, missingPackage, UsageError } from "../engine/errors.ts";
import { FileReadError } from "../engine/files.ts";
import { type Command, parseArgvInSlices } from "../engine/grammar.ts";
import { Pacer } from "../engine/pace.ts";
import { type ExpandIo, expandPlan, validatePlan } from "../engine/prepare.ts";
import type { Registry } from "../engine/registry.ts";
import { mark } from "../engine/trace.ts";
import type { SessionIo } from "./session.ts";

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

/** A word that may name a recipe file (`--config FILE`, `-f=FILE`). */
const CONFIG_FLAG = /^(?:--config|-f)(?:=|$)/;

/** Where the kinds' declarations come from (conditions/mod.ts), injected. */
export interface Kinds {
  /** Every kind's declaration (help, doctor, recipes, a did-you-mean hint). */
  every(): Promise<Registry>;
  /** The declarations of the kinds `words` name, and no others. */
  named(words: readonly string[]): Promise<Registry>;
}

/**
 * The command the words (and the recipe they name) ask for, validated and expanded; a usage
 * error located in the recipe when it comes from one, with every hint completed.
 */
export async function readCommand(
  argv: readonly string[],
  io: Io,
  kinds: Kinds,
): Promise<{ command: Command; registry: Registry }> {
  let locate = (e: UsageError) => e;
  // Long steps take turns of the event loop, so a signal is answered (docs/contract.md §3).
  const pacer = new Pacer(io.signal);
  try {
    if (io.notUtf8) checkUtf8(argv, io.notUtf8);
    let words: readonly string[] = argv;
    let registry: Registry;
    // Recipes (and their parser) load only for a command line that may name one.
    const recipe = argv.some((a) => CONFIG_FLAG.test(a))
      ? await import("../engine/recipe.ts")
      : undefined;
    const { file, rest } = recipe ? recipe.takeConfig(argv) : { file: undefined, rest: argv };
    if (file !== undefined) {
      registry = await kinds.every();
      const expanded = await recipe!.expandRecipe(
        await readInput(io, file),
        file,
        rest,
        registry,
        pacer,
      );
      words = expanded.argv;
      locate = expanded.locate;
    } else {
      // The declarations of the kinds the command line names, and no others: a run of one
      // kind does not load thirty (docs/performance.md). Help and doctor list every kind.
      const all = argv[0] === "doctor" || argv[0] === "help" || argv.includes("--help") ||
        argv.includes("-h") || argv[0] === "completions";
      registry = all ? await kinds.every() : await kinds.named(words);
    }
    mark("registry");
    let command = await parseArgvInSlices(words, registry, io.env, pacer);
    mark("parsed");
    if (command.type === "run") {
      await validatePlan(command.plan, { env: io.env, isolate: true, pacer });
      mark("validated");
      command = { ...command, plan: await expandPlan(command.plan, expandIo(io), pacer) };
    }
    return { command, registry };
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // A hint that needs every kind (did you mean …?) is completed now, without parsing again.
    throw locate(e.complete ? e.complete(await kinds.every()) : e);
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

/** A signal came before the wait started. */
export class Cancelled extends Error {
  override name = "Cancelled";
  constructor(readonly signal: string) {
    super(`cancelled by ${signal}`);
  }
}

/**
 * `work`, or a `Cancelled` as soon as `signal` aborts. What `work` still waits for (an open
 * of a FIFO nobody writes) is left behind: the process exits.
 */
export function untilSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
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
    signal: io.signal,
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
export function secretFlags(registry: Registry): ReadonlySet<string> {
  return new Set(
    registry.kinds.flatMap((k) => k.flags.filter((f) => f.secret).map((f) => f.name)),
  );
}

/**
 * The line for an error that reached the top: a set-up that left a kind's library out (a wait
 * never downloads it; docs/development.md), or a bug of ours, in one line, never a stack trace.
 */
export function crashLine(e: unknown, packagesCommand: string): string {
  const missing = missingPackage(e);
  return missing
    ? `waitcmd: the kinds' npm packages are not installed (${missing} is missing), and a wait never downloads: run ${packagesCommand}\n`
    : `waitcmd: internal error: ${errorText(e)}\n`;
}
