/**
 * The command-line grammar (docs/contract.md §1), pure: argv in, a `Command`
 * out, or a `UsageError`. It never reads `Deno.args`, never exits, never
 * probes. This module walks the line: the commands, the global options,
 * groups, `then`, and each condition's prefixes and kind word. One
 * condition's segment is read in leaf.ts, a flag's text becomes a typed
 * value in flag_values.ts, a kind reads its segment through
 * segment_input.ts, and the global flags become the run's options in
 * run_options.ts.
 *
 * ```
 * waitcmd [global options] <member> [-- <member>]... [-- then <command> [args...]]
 *   member = [guard] [not] <kind> [target] [flags]
 *          | any [ <member> [-- <member>]... ] [--label TEXT]
 *          | all [ <member> [-- <member>]... ] [--label TEXT]
 * waitcmd doctor [-o text|json] [--require KIND[,KIND]...]...
 * waitcmd help [kind|topic] | completions bash|zsh|fish | version
 * ```
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { GLOBAL_ALIASES, GLOBAL_FLAGS, type RunOptions } from "./options.ts";
import {
  checkCaptureNames,
  type ConditionPlan,
  groupName,
  type GroupNode,
  type GroupOp,
  MAX_GROUP_DEPTH,
  type Plan,
  type PlanNode,
  TOO_DEEP,
} from "./plan.ts";
import type { Registry } from "./registry.ts";
import { commandSecrets } from "./typed_secrets.ts";
import { SecretRegistry } from "./masking.ts";
import { didYouMean } from "./suggest.ts";
import { type FlagValue, q, splitFlag, timeoutValue } from "./flag_values.ts";
import { runOptionsOf } from "./run_options.ts";
import { buildLeaf, flagValue, kindHint, readSegment, type WordCursor } from "./leaf.ts";
import { finish, paced, type Pacer } from "./pace.ts";

/** What the command line asks for. */
export type Command =
  | { readonly type: "run"; readonly plan: Plan }
  | { readonly type: "help"; readonly topic: string | undefined }
  | { readonly type: "version" }
  | { readonly type: "completions"; readonly shell: string }
  /** `doctor [-o text|json] [--require KIND]...`: which kinds can work here. */
  | {
    readonly type: "doctor";
    readonly output: "text" | "json";
    /** Canonical names of the kinds whose failure makes the exit code 1. */
    readonly required: readonly string[];
  };

/** The shells `waitcmd completions <shell>` has a script for. */
export const SHELLS: readonly string[] = ["bash", "zsh", "fish"];

/** The topics of `waitcmd help <topic>` besides the kinds (their text is output/help.ts's). */
export const HELP_TOPIC_NAMES = [
  "then",
  "recipe",
  "exit-codes",
  "environment",
  "output",
  "groups",
  "captures",
  "start",
] as const;

/** Words that open a group (followed by `[`). */
export const GROUP_OPERATORS: readonly string[] = ["any", "all"];
const GROUP_WORDS: ReadonlySet<string> = new Set(GROUP_OPERATORS);

/** Words that may come before a condition's kind, in this order (`guard not http …`). */
export const PREFIX_WORDS: readonly string[] = ["guard", "not"];

/** Words other than kinds that may start a segment after a `--`. */
const STARTERS: ReadonlySet<string> = new Set([...PREFIX_WORDS, "then", ...GROUP_OPERATORS]);

/** Parses argv against the registry. `env` feeds kinds' documented environment fallbacks. */
export function parseArgv(
  argv: readonly string[],
  registry: Registry,
  env: Readonly<Record<string, string>> = {},
): Command {
  return finish(new Parser(argv, registry, env).parse());
}

/**
 * `parseArgv` in slices with turns of the event loop between them (engine/pace.ts): the words
 * of tens of thousands of conditions (a large recipe) hold no signal (docs/contract.md §3).
 */
export function parseArgvInSlices(
  argv: readonly string[],
  registry: Registry,
  env: Readonly<Record<string, string>> = {},
  pacer?: Pacer,
): Promise<Command> {
  return paced(new Parser(argv, registry, env).parse(), pacer);
}

class Parser implements WordCursor {
  /** The index of the next word of argv. */
  i = 0;
  /** Every secret the line holds (docs/contract.md §9). */
  readonly secrets: string[] = [];

  constructor(
    readonly argv: readonly string[],
    readonly registry: Registry,
    readonly env: Readonly<Record<string, string>>,
  ) {}

  /** The command; yields between conditions (see `parseArgvInSlices`). */
  *parse(): Generator<void, Command> {
    const first = this.argv[0];
    if (first === undefined) {
      throw new UsageError(
        "",
        "no condition given; name a kind and its target, e.g. waitcmd <kind> <target>",
      );
    }
    if (first === "help") return this.#help(this.argv[1]);
    if (first === "version") return { type: "version" };
    if (first === "doctor") return this.#doctor(this.argv.slice(1));
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
    return yield* this.#conditions(globals.options);
  }

  #doctor(args: readonly string[]): Command {
    let output: "text" | "json" = "text";
    const required: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const m = /^(--output|-o|--require)(?:=(.*))?$/s.exec(args[i]!);
      if (!m) throw new UsageError("doctor", `unexpected argument ${q(args[i]!)}`);
      const value = m[2] ?? args[++i];
      if (value === undefined) throw new UsageError(`doctor: ${m[1]}`, "missing value");
      if (m[1] === "--require") {
        // A comma list (`--require KIND,KIND`) or the flag repeated, or both.
        const words = value.split(",").map((w) => w.trim()).filter((w) => w !== "");
        if (words.length === 0) throw new UsageError("doctor: --require", "expected a kind");
        for (const word of words) {
          const kind = this.registry.lookup(word);
          if (!kind) {
            throw new UsageError(
              "doctor: --require",
              `unknown kind ${q(word)}${didYouMean(word, this.registry.words)}`,
            );
          }
          if (!required.includes(kind.name)) required.push(kind.name);
        }
      } else if (value === "text" || value === "json") {
        output = value;
      } else {
        throw new UsageError(`doctor: ${m[1]}`, `expected text or json, got ${q(value)}`);
      }
    }
    return { type: "doctor", output, required };
  }

  #help(topic: string | undefined): Command {
    if (topic === undefined) return { type: "help", topic: undefined };
    if ((HELP_TOPIC_NAMES as readonly string[]).includes(topic)) return { type: "help", topic };
    if (topic === "exit" || topic === "codes") return { type: "help", topic: "exit-codes" };
    const kind = this.registry.lookup(topic);
    if (!kind) {
      throw new UsageError(
        "help",
        `unknown kind or topic ${q(topic)}${
          didYouMean(topic, [...this.registry.words, ...HELP_TOPIC_NAMES])
        }; topics: ${HELP_TOPIC_NAMES.join(", ")}`,
      );
    }
    return { type: "help", topic: kind.name };
  }

  #globals(): { type: "options"; options: RunOptions } | { type: "command"; command: Command } {
    const values = new Map<string, FlagValue>();
    /** Every value of a repeatable global option (`--start`), in order. */
    const lists = new Map<string, string[]>();
    while (this.i < this.argv.length) {
      const tok = this.argv[this.i]!;
      if (tok === "--help" || tok === "-h") {
        return { type: "command", command: this.#help(undefined) };
      }
      if (tok === "--version" || tok === "-V") {
        return { type: "command", command: { type: "version" } };
      }
      if (tok === "--") {
        // A leading separator is harmless: `waitcmd -- tcp db:5432`.
        this.i++;
        continue;
      }
      if (!tok.startsWith("-") || tok === "-") break;
      const { name, inline } = splitFlag(tok);
      const long = tok.startsWith("--");
      const spec = long
        ? GLOBAL_FLAGS.find((f) => f.name === (GLOBAL_ALIASES[name] ?? name))
        : GLOBAL_FLAGS.find((f) => f.short === name);
      if (!spec) {
        throw this.hinted("", `unknown global option ${long ? "--" : "-"}${name}`, (r) => {
          const kindFlag = r.kinds.some((k) => k.flags.some((f) => f.name === name));
          return kindFlag
            ? "; flags of a condition go after its kind: waitcmd <kind> <target> --flag value"
            : long
            ? didYouMean(name, GLOBAL_FLAGS.map((f) => f.name), (s) => `--${s}`)
            : `; short options are ${
              GLOBAL_FLAGS.filter((f) => f.short).map((f) => `-${f.short}`).join(" ")
            }`;
        });
      }
      if (values.has(spec.name) && !spec.repeatable) {
        throw new UsageError(`--${spec.name}`, "given more than once");
      }
      this.i++;
      const where = `--${spec.name}`;
      if (spec.repeatable) {
        const value = flagValue(this, spec, inline, where, undefined) as string;
        lists.set(spec.name, [...lists.get(spec.name) ?? [], value]);
        values.set(spec.name, value);
        continue;
      }
      values.set(
        spec.name,
        spec.name === "timeout"
          ? this.#timeoutValue(inline, where)
          : flagValue(this, spec, inline, where, undefined),
      );
    }
    if (this.i >= this.argv.length) {
      throw new UsageError(
        "",
        "no condition given; name a kind and its target, e.g. waitcmd <kind> <target>",
      );
    }
    return { type: "options", options: runOptionsOf(values, this.env, lists) };
  }

  #timeoutValue(inline: string | undefined, where: string): number {
    let raw = inline;
    if (raw === undefined) {
      raw = this.argv[this.i];
      if (raw === undefined) throw new UsageError(where, "missing value DURATION");
      this.i++;
    }
    return timeoutValue(raw, where);
  }

  /**
   * A usage error whose hint may need every kind's declaration: with only some kinds loaded
   * (the CLI's registry of the kinds a line names), the hint is left to `complete`.
   */
  hinted(
    where: string,
    message: string,
    hint: (registry: Registry) => string,
    topic?: string,
  ): UsageError {
    if (!this.registry.partial) return new UsageError(where, message + hint(this.registry), topic);
    return new UsageError(
      where,
      message,
      topic,
      (every) => new UsageError(where, message + hint(every), topic),
    );
  }

  /** True when argv[at] may start a new segment after a `--`. */
  startsSegment(at: number): boolean {
    const w = this.argv[at];
    return w !== undefined &&
      (STARTERS.has(w) || (w === "]" && this.#depth > 0) || this.registry.lookup(w) !== undefined);
  }

  /** How many groups the parser is inside. */
  #depth = 0;

  /** Whether the parser is inside a group. */
  get inGroup(): boolean {
    return this.#depth > 0;
  }
  /** The leaves parsed so far, in order. */
  readonly #leaves: ConditionPlan[] = [];
  #then: string[] | undefined;
  /** Set when a condition asked for its kind's help instead (`tcp --help`). */
  #helpTopic: string | undefined;

  *#conditions(options: RunOptions): Generator<void, Command> {
    const children = yield* this.#members("");
    if (this.#helpTopic !== undefined) return { type: "help", topic: this.#helpTopic };
    const conditions = this.#leaves;
    if (conditions.every((c) => c.guard)) {
      throw new UsageError("", "nothing to wait for: every condition is a guard");
    }
    checkCaptureNames(conditions);
    maskLabels(conditions, this.secrets);
    const root: GroupNode = { type: "group", op: options.mode, path: "", name: "", children };
    return {
      type: "run",
      plan: {
        options,
        conditions,
        root,
        then: this.#then,
        // A started command's credentials are masked like then's (docs/contract.md §9).
        secrets: [
          ...new Set([...this.secrets, ...options.start.flatMap((s) => commandSecrets(s.argv))]),
        ],
      },
    };
  }

  /**
   * The members of the run (`path` "") or of a group, up to its `]`: conditions and groups
   * (docs/contract.md §1, groups). The run's members end at the end of the line or `then`.
   */
  *#members(path: string): Generator<void, PlanNode[]> {
    const children: PlanNode[] = [];
    while (this.i < this.argv.length && this.#helpTopic === undefined) {
      yield;
      const word = this.argv[this.i]!;
      if (word === "]") {
        if (this.#depth === 0) {
          throw new UsageError(
            "",
            `unexpected "]": no group is open (groups are any [ … ] or all [ … ])`,
          );
        }
        return this.#closed(path, children);
      }
      if (word === "then") {
        this.#thenSegment(path);
        break;
      }
      const position = `${path ? path + "." : ""}${children.length + 1}`;
      if (GROUP_WORDS.has(word) || GROUP_WORDS.has(this.#afterPrefixes())) {
        children.push(yield* this.#group(position));
      } else {
        const leaf = this.#leaf(path);
        if (leaf) children.push({ type: "leaf", condition: leaf });
      }
    }
    if (this.#depth > 0 && this.#helpTopic === undefined) {
      throw new UsageError(
        `group ${path}`,
        `missing "]": every any [ or all [ needs its ] (as a word of its own)`,
      );
    }
    return children;
  }

  /** The word after `guard`/`not` at the current position (for a group's error). */
  #afterPrefixes(): string {
    let at = this.i;
    while (this.argv[at] === "guard" || this.argv[at] === "not") at++;
    return at === this.i ? "" : this.argv[at] ?? "";
  }

  /** The members of a group end at its `]`: checked, and the `]` taken. */
  #closed(path: string, children: PlanNode[]): PlanNode[] {
    if (children.length === 0) {
      throw new UsageError(
        `group ${path}`,
        "empty group: put at least one condition between [ and ]",
      );
    }
    if (!children.some((c) => c.type === "group" || !c.condition.guard)) {
      throw new UsageError(
        `group ${path}`,
        "nothing to wait for in this group: every member is a guard",
      );
    }
    this.i++;
    return children;
  }

  /** `any [ … ]` / `all [ … ]` [`--label TEXT`], and the separator after it. */
  *#group(position: string): Generator<void, GroupNode> {
    const first = this.argv[this.i]!;
    if (first === "not" || first === "guard") {
      const op = this.#afterPrefixes();
      throw new UsageError(
        `group ${position}`,
        first === "guard"
          ? `guard applies to one condition, not to a group: write guard inside the group`
          : `not applies to one condition, not to a group: ${
            op === "any"
              ? "not any [ A -- B ] is all [ not A -- not B ]"
              : "not all [ A -- B ] is any [ not A -- not B ]"
          }`,
      );
    }
    const op = first as GroupOp;
    const path = `${position}.${op}`;
    const bracket = this.argv[this.i + 1];
    if (bracket !== "[") {
      throw new UsageError(
        `group ${path}`,
        bracket?.startsWith("[")
          ? `write [ and ] as words of their own: ${op} [ ${bracket.slice(1)} … ]`
          : `${op} must be followed by [: ${op} [ <condition> -- <condition> ... ]`,
      );
    }
    this.i += 2;
    const at = this.argv[this.i];
    if (at === "--mode" || at?.startsWith("--mode=")) {
      throw new UsageError(
        `group ${path}`,
        `--mode applies to the whole run, before the first condition; a group's mode is its word: any [ … ] or all [ … ]`,
      );
    }
    if (this.#depth >= MAX_GROUP_DEPTH) {
      // The path of a group this deep is hundreds of characters: the depth says where.
      throw new UsageError(`group at depth ${this.#depth + 1}`, `${TOO_DEEP}; flatten the plan`);
    }
    this.#depth++;
    const children = yield* this.#members(path);
    this.#depth--;
    let label: string | undefined;
    if (this.argv[this.i] === "--label" || this.argv[this.i]?.startsWith("--label=")) {
      const tok = this.argv[this.i++]!;
      label = tok.includes("=") ? tok.slice(tok.indexOf("=") + 1) : this.argv[this.i++];
      if (label === undefined) throw new UsageError(`group ${path}: --label`, "missing value TEXT");
    }
    this.#separator(`group ${path}`);
    return { type: "group", op, path, name: label ?? groupName(op, children), label, children };
  }

  /** After a group's `]`: the end, the enclosing `]`, or `--` before the next member. */
  #separator(where: string): void {
    const next = this.argv[this.i];
    if (next === undefined || (next === "]" && this.#depth > 0)) return;
    if (next === "--" && this.startsSegment(this.i + 1)) {
      this.i++;
      return;
    }
    throw new UsageError(
      where,
      `unexpected ${
        q(next)
      } after the group's "]"; separate members with "--" (only --label may follow "]")`,
    );
  }

  /** `then`'s segment: the rest of the line, outside every group. */
  #thenSegment(path: string): void {
    if (this.#depth > 0) {
      throw new UsageError(
        `group ${path}`,
        `then goes after the last condition, outside every group`,
      );
    }
    if (this.#leaves.length === 0) {
      throw new UsageError("then", "needs a condition to wait for before it");
    }
    this.#then = this.argv.slice(this.i + 1);
    if (this.#then.length === 0) {
      throw new UsageError("then", "expected a command: -- then <command> [args...]");
    }
    // Its arguments may carry credentials (a URL's password, a header's token): every output,
    // --explain included, masks them (docs/contract.md §9).
    this.secrets.push(...commandSecrets(this.#then));
    this.i = this.argv.length;
  }

  /** `[guard] [not] <kind> [target] [flags]`: one condition; undefined when it asked for help. */
  #leaf(path: string): ConditionPlan | undefined {
    const index = this.#leaves.length + 1;
    let word = this.argv[this.i]!;
    let guard = false;
    let negate = false;
    if (word === "guard") {
      guard = true;
      this.i++;
      const next = this.argv[this.i];
      if (next === undefined) {
        throw new UsageError(`condition ${index}`, "guard must be followed by a condition kind");
      }
      word = next;
    }
    if (word === "not") {
      negate = true;
      this.i++;
      const next = this.argv[this.i];
      if (next === undefined || next === "not" || next === "guard" || next === "then") {
        throw new UsageError(
          `condition ${index}`,
          next === "guard"
            ? "write guard before not: -- guard not <kind> ..."
            : "not must be followed by a condition kind: -- not <kind> <target>",
        );
      }
      word = next;
    }
    const kind = this.registry.lookup(word);
    if (!kind) {
      throw this.hinted(`condition ${index}`, `unknown kind ${q(word)}`, (r) => kindHint(word, r));
    }
    this.i++;
    const seg = readSegment(this, kind, word, index);
    if (seg.type === "help") {
      this.#helpTopic = kind.name;
      return undefined;
    }
    // A command's arguments may carry credentials, like then's (docs/contract.md §9).
    if (seg.command.length > 0) this.secrets.push(...commandSecrets(seg.command));
    const leaf = buildLeaf(kind, word, index, guard, negate, seg, this.env, this.secrets);
    const placed = path ? { ...leaf, group: path } : leaf;
    this.#leaves.push(placed);
    return placed;
  }
}

/**
 * A `--label` is the user's text, shown as the condition's name: a secret of the command line
 * typed into it (then's password, a secret flag's value) is masked by value there, as in text
 * from outside (docs/contract.md §9). Done in place, once every secret of the line is known.
 */
function maskLabels(conditions: readonly ConditionPlan[], secrets: readonly string[]): void {
  if (secrets.length === 0 || conditions.every((c) => c.label === undefined)) return;
  const registry = new SecretRegistry(secrets);
  for (const c of conditions) {
    if (c.label === undefined) continue;
    const masked = c as { name: string; label?: string };
    masked.name = registry.mask(c.name);
    masked.label = registry.mask(c.label);
  }
}
