/**
 * The command-line grammar (DECISIONS §3), pure: argv in, a `Command` out, or
 * a `UsageError`. It never reads `Deno.args`, never exits, never probes.
 *
 * ```
 * waitcmd [global options] [guard] <kind> [target] [flags]
 *         [-- [guard] <kind> ...]... [-- then <command> [args...]]
 * ```
 *
 * @module
 */

import { parseDuration } from "./duration.ts";
import { UsageError } from "./errors.ts";
import {
  COMMON_CONDITION_FLAGS,
  DEFAULT_OPTIONS,
  GLOBAL_FLAGS,
  type RunOptions,
} from "./options.ts";
import type { Registry } from "./registry.ts";
import { didYouMean } from "./suggest.ts";
import type { ConditionKind, FlagSpec, KindInput, Probe } from "./types.ts";

/** One condition of a run, ready to be polled. */
export interface ConditionPlan {
  /** 1-based position on the command line. */
  readonly index: number;
  readonly kind: ConditionKind;
  /** The kind word as typed (an alias stays an alias in the display name). */
  readonly kindWord: string;
  readonly guard: boolean;
  /** Display name: `<kind word> <target>`, or `--label`. */
  readonly name: string;
  readonly target: string;
  readonly probe: Probe;
}

/** Everything a run needs. */
export interface Plan {
  readonly options: RunOptions;
  readonly conditions: readonly ConditionPlan[];
  /** The `-- then <command...>` segment, if given. */
  readonly then: readonly string[] | undefined;
  /** Values that must never appear in any output. */
  readonly secrets: readonly string[];
}

/** What the command line asks for. */
export type Command =
  | { readonly type: "run"; readonly plan: Plan }
  | { readonly type: "help"; readonly topic: string | undefined }
  | { readonly type: "version" }
  | { readonly type: "completions"; readonly shell: string };

type FlagValue = string | boolean | number;

const SHELLS = ["bash", "zsh", "fish"];

/** Parses argv against the registry. `env` feeds kinds' documented environment fallbacks. */
export function parseArgv(
  argv: readonly string[],
  registry: Registry,
  env: Readonly<Record<string, string>> = {},
): Command {
  const p = new Parser(argv, registry, env);
  return p.parse();
}

class Parser {
  #i = 0;
  readonly #secrets: string[] = [];

  constructor(
    readonly argv: readonly string[],
    readonly registry: Registry,
    readonly env: Readonly<Record<string, string>>,
  ) {}

  parse(): Command {
    const first = this.argv[0];
    if (first === undefined) {
      throw new UsageError(
        "",
        "no condition given; name a kind and its target, e.g. waitcmd <kind> <target>",
      );
    }
    if (first === "help") return this.#help(this.argv[1]);
    if (first === "version") return { type: "version" };
    if (first === "completions") {
      const shell = this.argv[1];
      if (shell === undefined || !SHELLS.includes(shell)) {
        throw new UsageError(
          "completions",
          `expected a shell: ${SHELLS.join(", ")}, got ${
            shell === undefined ? "nothing" : q(shell)
          }` +
            (shell ? didYouMean(shell, SHELLS) : ""),
        );
      }
      return { type: "completions", shell };
    }
    const globals = this.#globals();
    if (globals.type !== "options") return globals.command;
    return this.#conditions(globals.options);
  }

  #help(topic: string | undefined): Command {
    if (topic === undefined) return { type: "help", topic: undefined };
    const kind = this.registry.lookup(topic);
    if (!kind) {
      throw new UsageError(
        "help",
        `unknown kind ${q(topic)}${didYouMean(topic, this.registry.words)}`,
      );
    }
    return { type: "help", topic: kind.name };
  }

  #globals(): { type: "options"; options: RunOptions } | { type: "command"; command: Command } {
    const values = new Map<string, FlagValue>();
    while (this.#i < this.argv.length) {
      const tok = this.argv[this.#i]!;
      if (tok === "--help" || tok === "-h") {
        return { type: "command", command: this.#help(undefined) };
      }
      if (tok === "--version" || tok === "-V") {
        return { type: "command", command: { type: "version" } };
      }
      if (tok === "-q") {
        values.set("quiet", true);
        this.#i++;
        continue;
      }
      if (tok === "--") {
        // A leading separator is harmless: `waitcmd -- tcp db:5432`.
        this.#i++;
        continue;
      }
      if (!tok.startsWith("-") || tok === "-") break;
      const { name, inline } = splitFlag(tok);
      const spec = GLOBAL_FLAGS.find((f) => f.name === name);
      if (!spec) {
        const kindFlag = this.registry.kinds.some((k) => k.flags.some((f) => f.name === name));
        const hint = kindFlag
          ? "; flags of a condition go after its kind: waitcmd <kind> <target> --flag value"
          : didYouMean(name, GLOBAL_FLAGS.map((f) => f.name), (s) => `--${s}`);
        throw new UsageError("", `unknown global option --${name}${hint}`);
      }
      if (values.has(spec.name)) {
        throw new UsageError(`--${spec.name}`, "given more than once");
      }
      this.#i++;
      values.set(spec.name, this.#flagValue(spec, inline, `--${spec.name}`, undefined));
    }
    if (this.#i >= this.argv.length) {
      throw new UsageError(
        "",
        "no condition given; name a kind and its target, e.g. waitcmd <kind> <target>",
      );
    }
    const options: RunOptions = {
      timeoutMs: (values.get("timeout") as number | undefined) ?? DEFAULT_OPTIONS.timeoutMs,
      intervalMs: (values.get("interval") as number | undefined) ?? DEFAULT_OPTIONS.intervalMs,
      attemptTimeoutMs: values.get("attempt-timeout") as number | undefined,
      mode: (values.get("mode") as "all" | "any" | undefined) ?? DEFAULT_OPTIONS.mode,
      successes: (values.get("successes") as number | undefined) ?? DEFAULT_OPTIONS.successes,
      stableForMs: (values.get("stable-for") as number | undefined) ?? DEFAULT_OPTIONS.stableForMs,
      output: (values.get("output") as RunOptions["output"] | undefined) ?? DEFAULT_OPTIONS.output,
      quiet: values.get("quiet") === true,
      noColor: values.get("no-color") === true,
    };
    if (options.timeoutMs <= 0) throw new UsageError("--timeout", "must be longer than 0");
    if (options.attemptTimeoutMs !== undefined && options.attemptTimeoutMs <= 0) {
      throw new UsageError("--attempt-timeout", "must be longer than 0");
    }
    return { type: "options", options };
  }

  /** True when argv[at] may start a new segment after a `--`. */
  #startsSegment(at: number): boolean {
    const w = this.argv[at];
    return w !== undefined &&
      (w === "guard" || w === "then" || this.registry.lookup(w) !== undefined);
  }

  #conditions(options: RunOptions): Command {
    const conditions: ConditionPlan[] = [];
    let then: string[] | undefined;
    while (this.#i < this.argv.length) {
      const index = conditions.length + 1;
      let word = this.argv[this.#i]!;
      if (word === "then") {
        if (index === 1) throw new UsageError("then", "needs a condition to wait for before it");
        then = this.argv.slice(this.#i + 1);
        if (then.length === 0) {
          throw new UsageError("then", "expected a command: -- then <command> [args...]");
        }
        break;
      }
      let guard = false;
      if (word === "guard") {
        guard = true;
        this.#i++;
        const next = this.argv[this.#i];
        if (next === undefined) {
          throw new UsageError(`condition ${index}`, "guard must be followed by a condition kind");
        }
        word = next;
      }
      const kind = this.registry.lookup(word);
      if (!kind) {
        throw new UsageError(
          `condition ${index}`,
          `unknown kind ${q(word)}${didYouMean(word, this.registry.words)}`,
        );
      }
      this.#i++;
      const seg = this.#segment(kind, word, index);
      if (seg.type === "help") return { type: "help", topic: kind.name };
      conditions.push(this.#build(kind, word, index, guard, seg));
    }
    if (conditions.every((c) => c.guard)) {
      throw new UsageError("", "nothing to wait for: every condition is a guard");
    }
    return {
      type: "run",
      plan: { options, conditions, then, secrets: [...new Set(this.#secrets)] },
    };
  }

  #segment(kind: ConditionKind, word: string, index: number):
    | { type: "help" }
    | {
      type: "segment";
      target: string | undefined;
      command: string[];
      flags: Map<string, FlagValue[]>;
    } {
    const where = `condition ${index} (${word})`;
    const fail = (msg: string): never => {
      throw new UsageError(where, msg, kind.name);
    };
    const flags = new Map<string, FlagValue[]>();
    const command: string[] = [];
    let target: string | undefined;
    let inCommand = false;
    while (this.#i < this.argv.length) {
      const tok = this.argv[this.#i]!;
      // exec's own first "--" always starts its command, even `exec -- docker ps`.
      const opensCommand = tok === "--" && kind.target.shape === "command" && !inCommand;
      if (tok === "--" && !opensCommand && this.#startsSegment(this.#i + 1)) {
        this.#i++;
        break;
      }
      this.#i++;
      if (inCommand) {
        command.push(tok);
        continue;
      }
      if (opensCommand) {
        inCommand = true;
        continue;
      }
      if (tok === "--") {
        const next = this.argv[this.#i];
        if (next === undefined) fail(`nothing after "--"; expected a condition kind`);
        fail(
          `unexpected "--" before ${q(next!)}: a new condition starts with a kind` +
            didYouMean(next!, this.registry.words),
        );
      }
      if (tok === "--help" || tok === "-h") return { type: "help" };
      if (tok.startsWith("-") && tok.length > 1 && !/^-\d/.test(tok)) {
        const { name, inline } = splitFlag(tok);
        const spec = kind.flags.find((f) => f.name === name) ??
          COMMON_CONDITION_FLAGS.find((f) => f.name === name);
        if (!spec) {
          const all = [...kind.flags, ...COMMON_CONDITION_FLAGS].map((f) => f.name);
          let hint = didYouMean(name, all, (s) => `--${s}`);
          if (!hint && GLOBAL_FLAGS.some((f) => f.name === name)) {
            hint = `; global options such as --${name} go before the first condition`;
          }
          if (!tok.startsWith("--")) hint ||= `; flags are written --name`;
          fail(`unknown flag ${tok.startsWith("--") ? "--" + name : tok}${hint}`);
        }
        const list = flags.get(spec!.name) ?? [];
        if (list.length > 0 && !spec!.repeatable) fail(`--${spec!.name}: given more than once`);
        list.push(this.#flagValue(spec!, inline, `${where}: --${spec!.name}`, kind.name));
        flags.set(spec!.name, list);
        continue;
      }
      if (kind.target.shape === "required" && target === undefined) {
        target = tok;
        continue;
      }
      if (kind.target.shape === "command") {
        fail(`unexpected argument ${q(tok)}; the command goes after "--": ${word} -- ${tok} ...`);
      }
      if (kind.target.shape === "none") {
        fail(`unexpected argument ${q(tok)}; ${word} takes no target, only flags`);
      }
      fail(`unexpected argument ${q(tok)} after the target ${q(target!)}`);
    }
    if (kind.target.shape === "required" && target === undefined) {
      fail(`missing target ${kind.target.placeholder}`);
    }
    if (kind.target.shape === "command" && command.length === 0) {
      fail(`missing command: ${word} [flags] -- <command> [args...]`);
    }
    return { type: "segment", target, command, flags };
  }

  #flagValue(
    spec: FlagSpec,
    inline: string | undefined,
    where: string,
    topic: string | undefined,
  ): FlagValue {
    const fail = (msg: string): never => {
      throw new UsageError(where, msg, topic);
    };
    if (spec.type === "boolean") {
      if (inline === undefined) return true;
      if (inline === "true") return true;
      if (inline === "false") return false;
      return fail(`expected true or false, got ${q(inline)}`);
    }
    let raw = inline;
    if (raw === undefined) {
      raw = this.argv[this.#i];
      if (raw === undefined) {
        return fail(`missing value${spec.placeholder ? " " + spec.placeholder : ""}`);
      }
      this.#i++;
    }
    if (spec.secret) this.#secrets.push(raw);
    switch (spec.type) {
      case "string":
        return raw;
      case "enum": {
        const values = spec.values ?? [];
        if (!values.includes(raw)) {
          fail(`expected one of ${values.join(", ")}, got ${q(raw)}${didYouMean(raw, values)}`);
        }
        return raw;
      }
      case "integer": {
        const min = spec.min;
        const max = spec.max;
        const range = min !== undefined && max !== undefined
          ? ` from ${min} to ${max}`
          : min !== undefined
          ? ` of at least ${min}`
          : "";
        if (!/^-?\d+$/.test(raw)) return fail(`expected a whole number${range}, got ${q(raw)}`);
        const n = Number(raw);
        if (
          !Number.isSafeInteger(n) || (min !== undefined && n < min) ||
          (max !== undefined && n > max)
        ) {
          return fail(`expected a whole number${range}, got ${q(raw)}`);
        }
        return n;
      }
      case "duration": {
        const ms = parseDuration(raw);
        if (ms === undefined) {
          return fail(`expected a duration like 30s, 2m or 1h30m, got ${q(raw)}`);
        }
        return ms;
      }
    }
  }

  #build(
    kind: ConditionKind,
    word: string,
    index: number,
    guard: boolean,
    seg: { target: string | undefined; command: string[]; flags: Map<string, FlagValue[]> },
  ): ConditionPlan {
    const where = `condition ${index} (${word})`;
    const declared = (flag: string): FlagSpec => {
      const spec = kind.flags.find((f) => f.name === flag);
      if (!spec) throw new Error(`Cannot read flag --${flag} of kind '${kind.name}': not declared`);
      return spec;
    };
    const last = (flag: string): FlagValue | undefined => {
      declared(flag);
      return seg.flags.get(flag)?.at(-1);
    };
    const secrets = this.#secrets;
    const input: KindInput = {
      kindWord: word,
      target: seg.target,
      command: seg.command,
      env: this.env,
      has: (flag) => (declared(flag), seg.flags.has(flag)),
      string: (flag) => last(flag) as string | undefined,
      strings: (flag) => (declared(flag), (seg.flags.get(flag) ?? []) as string[]),
      bool: (flag) => last(flag) === true,
      integer: (flag) => last(flag) as number | undefined,
      duration: (flag) => last(flag) as number | undefined,
      fail(flag, message) {
        throw new UsageError(flag ? `${where}: --${flag}` : where, message, kind.name);
      },
      secret(value) {
        if (value) secrets.push(value);
      },
    };
    const probe = kind.parse(input);
    const label = seg.flags.get("label")?.at(-1) as string | undefined;
    return {
      index,
      kind,
      kindWord: word,
      guard,
      name: label ?? `${word} ${probe.target}`.trimEnd(),
      target: probe.target,
      probe,
    };
  }
}

function splitFlag(tok: string): { name: string; inline: string | undefined } {
  const body = tok.replace(/^--?/, "");
  const eq = body.indexOf("=");
  if (eq < 0) return { name: body, inline: undefined };
  return { name: body.slice(0, eq), inline: body.slice(eq + 1) };
}

/** Quotes a user's word for an error line. */
export function q(s: string): string {
  return JSON.stringify(s);
}
