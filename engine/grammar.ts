/**
 * The command-line grammar (docs/contract.md §1), pure: argv in, a `Command`
 * out, or a `UsageError`. It never reads `Deno.args`, never exits, never probes.
 *
 * ```
 * waitcmd [global options] <member> [-- <member>]... [-- then <command> [args...]]
 *   member = [guard] [not] <kind> [target] [flags]
 *          | any [ <member> [-- <member>]... ] [--label TEXT]
 *          | all [ <member> [-- <member>]... ] [--label TEXT]
 * waitcmd doctor [-o text|json] [--require KIND]...
 * waitcmd help [kind|topic] | completions bash|zsh|fish | version
 * ```
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { formatDuration, parseDuration } from "./duration.ts";
import {
  COMMON_CONDITION_FLAGS,
  DEFAULT_OPTIONS,
  ENV_DEFAULTS,
  GLOBAL_ALIASES,
  GLOBAL_FLAGS,
  type RunOptions,
} from "./options.ts";
import {
  type ConditionPlan,
  groupName,
  type GroupNode,
  type GroupOp,
  type Plan,
  type PlanNode,
} from "./plan.ts";
import type { Registry } from "./registry.ts";
import { commandSecrets } from "./secrets.ts";
import { conditionFor, didYouMean } from "./suggest.ts";
import type { ConditionKind, FlagSpec, KindInput } from "./types.ts";

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

type FlagValue = string | boolean | number;

/** One condition's words, sorted: its target, its command (a command-shaped kind's) and its flags. */
interface Segment {
  readonly target: string | undefined;
  readonly command: string[];
  readonly flags: Map<string, FlagValue[]>;
  /** The flags' words as typed, `--label` left out (for --explain). */
  readonly words: string[];
}

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
    return this.#conditions(globals.options);
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
        const kind = this.registry.lookup(value);
        if (!kind) {
          throw new UsageError(
            "doctor: --require",
            `unknown kind ${q(value)}${didYouMean(value, this.registry.words)}`,
          );
        }
        required.push(kind.name);
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
    while (this.#i < this.argv.length) {
      const tok = this.argv[this.#i]!;
      if (tok === "--help" || tok === "-h") {
        return { type: "command", command: this.#help(undefined) };
      }
      if (tok === "--version" || tok === "-V") {
        return { type: "command", command: { type: "version" } };
      }
      if (tok === "--") {
        // A leading separator is harmless: `waitcmd -- tcp db:5432`.
        this.#i++;
        continue;
      }
      if (!tok.startsWith("-") || tok === "-") break;
      const { name, inline } = splitFlag(tok);
      const long = tok.startsWith("--");
      const spec = long
        ? GLOBAL_FLAGS.find((f) => f.name === (GLOBAL_ALIASES[name] ?? name))
        : GLOBAL_FLAGS.find((f) => f.short === name);
      if (!spec) {
        throw this.#hinted("", `unknown global option ${long ? "--" : "-"}${name}`, (r) => {
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
      if (values.has(spec.name)) {
        throw new UsageError(`--${spec.name}`, "given more than once");
      }
      this.#i++;
      const where = `--${spec.name}`;
      values.set(
        spec.name,
        spec.name === "timeout"
          ? this.#timeoutValue(inline, where)
          : this.#flagValue(spec, inline, where, undefined),
      );
    }
    if (this.#i >= this.argv.length) {
      throw new UsageError(
        "",
        "no condition given; name a kind and its target, e.g. waitcmd <kind> <target>",
      );
    }
    // Environment defaults: a flag wins; a bad value names the variable.
    for (const [variable, flag] of Object.entries(ENV_DEFAULTS)) {
      const raw = this.env[variable];
      if (raw === undefined || raw === "" || values.has(flag)) continue;
      const spec = GLOBAL_FLAGS.find((f) => f.name === flag)!;
      values.set(
        flag,
        flag === "timeout"
          ? timeoutValue(raw, variable)
          : typedValue(spec, raw, variable, undefined),
      );
    }
    const num = (flag: string) => values.get(flag) as number | undefined;
    const options: RunOptions = {
      timeoutMs: num("timeout") ?? DEFAULT_OPTIONS.timeoutMs,
      intervalMs: num("interval") ?? DEFAULT_OPTIONS.intervalMs,
      backoff: (values.get("backoff") as RunOptions["backoff"] | undefined) ??
        DEFAULT_OPTIONS.backoff,
      maxIntervalMs: num("max-interval") ?? DEFAULT_OPTIONS.maxIntervalMs,
      jitter: values.has("jitter")
        ? parseJitter(values.get("jitter") as string)
        : DEFAULT_OPTIONS.jitter,
      delayMs: num("delay") ?? DEFAULT_OPTIONS.delayMs,
      attemptTimeoutMs: num("attempt-timeout"),
      mode: (values.get("mode") as "all" | "any" | undefined) ?? DEFAULT_OPTIONS.mode,
      successes: num("successes") ?? DEFAULT_OPTIONS.successes,
      stableForMs: num("stable-for") ?? DEFAULT_OPTIONS.stableForMs,
      maxAttempts: num("max-attempts") ?? DEFAULT_OPTIONS.maxAttempts,
      timeoutExitCode: num("timeout-exit-code") ?? DEFAULT_OPTIONS.timeoutExitCode,
      progress: (values.get("progress") as RunOptions["progress"] | undefined) ??
        DEFAULT_OPTIONS.progress,
      output: (values.get("output") as RunOptions["output"] | undefined) ?? DEFAULT_OPTIONS.output,
      quiet: values.get("quiet") === true,
      noColor: values.get("no-color") === true,
      explain: values.get("explain") === true,
      reportFile: values.get("report") as string | undefined,
    };
    if (options.attemptTimeoutMs !== undefined && options.attemptTimeoutMs <= 0) {
      throw new UsageError("--attempt-timeout", "must be longer than 0");
    }
    if (options.intervalMs <= 0 && options.backoff === "exponential") {
      throw new UsageError("--interval", "must be longer than 0 with --backoff exponential");
    }
    if (values.has("max-interval") && options.maxIntervalMs < options.intervalMs) {
      throw new UsageError(
        "--max-interval",
        `must not be shorter than --interval (${formatDuration(options.intervalMs)}), got ${
          formatDuration(options.maxIntervalMs)
        }`,
      );
    }
    if (values.has("max-interval") && options.backoff !== "exponential") {
      throw new UsageError("--max-interval", "only applies with --backoff exponential");
    }
    if (options.reportFile === "") throw new UsageError("--report", "expected a file name");
    return { type: "options", options };
  }

  #timeoutValue(inline: string | undefined, where: string): number {
    let raw = inline;
    if (raw === undefined) {
      raw = this.argv[this.#i];
      if (raw === undefined) throw new UsageError(where, "missing value DURATION");
      this.#i++;
    }
    return timeoutValue(raw, where);
  }

  /**
   * A usage error whose hint may need every kind's declaration: with only some kinds loaded
   * (the CLI's registry of the kinds a line names), the hint is left to `complete`.
   */
  #hinted(
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
  #startsSegment(at: number): boolean {
    const w = this.argv[at];
    return w !== undefined &&
      (STARTERS.has(w) || (w === "]" && this.#depth > 0) || this.registry.lookup(w) !== undefined);
  }

  /** How many groups the parser is inside. */
  #depth = 0;
  /** The leaves parsed so far, in order. */
  readonly #leaves: ConditionPlan[] = [];
  #then: string[] | undefined;
  /** Set when a condition asked for its kind's help instead (`tcp --help`). */
  #helpTopic: string | undefined;

  #conditions(options: RunOptions): Command {
    const children = this.#members("");
    if (this.#helpTopic !== undefined) return { type: "help", topic: this.#helpTopic };
    const conditions = this.#leaves;
    if (conditions.every((c) => c.guard)) {
      throw new UsageError("", "nothing to wait for: every condition is a guard");
    }
    checkCaptureNames(conditions);
    const root: GroupNode = { type: "group", op: options.mode, path: "", name: "", children };
    return {
      type: "run",
      plan: {
        options,
        conditions,
        root,
        then: this.#then,
        secrets: [...new Set(this.#secrets)],
      },
    };
  }

  /**
   * The members of the run (`path` "") or of a group, up to its `]`: conditions and groups
   * (docs/contract.md §1, groups). The run's members end at the end of the line or `then`.
   */
  #members(path: string): PlanNode[] {
    const children: PlanNode[] = [];
    while (this.#i < this.argv.length && this.#helpTopic === undefined) {
      const word = this.argv[this.#i]!;
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
        children.push(this.#group(position));
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
    let at = this.#i;
    while (this.argv[at] === "guard" || this.argv[at] === "not") at++;
    return at === this.#i ? "" : this.argv[at] ?? "";
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
    this.#i++;
    return children;
  }

  /** `any [ … ]` / `all [ … ]` [`--label TEXT`], and the separator after it. */
  #group(position: string): GroupNode {
    const first = this.argv[this.#i]!;
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
    const bracket = this.argv[this.#i + 1];
    if (bracket !== "[") {
      throw new UsageError(
        `group ${path}`,
        bracket?.startsWith("[")
          ? `write [ and ] as words of their own: ${op} [ ${bracket.slice(1)} … ]`
          : `${op} must be followed by [: ${op} [ <condition> -- <condition> ... ]`,
      );
    }
    this.#i += 2;
    const at = this.argv[this.#i];
    if (at === "--mode" || at?.startsWith("--mode=")) {
      throw new UsageError(
        `group ${path}`,
        `--mode applies to the whole run, before the first condition; a group's mode is its word: any [ … ] or all [ … ]`,
      );
    }
    this.#depth++;
    const children = this.#members(path);
    this.#depth--;
    let label: string | undefined;
    if (this.argv[this.#i] === "--label" || this.argv[this.#i]?.startsWith("--label=")) {
      const tok = this.argv[this.#i++]!;
      label = tok.includes("=") ? tok.slice(tok.indexOf("=") + 1) : this.argv[this.#i++];
      if (label === undefined) throw new UsageError(`group ${path}: --label`, "missing value TEXT");
    }
    this.#separator(`group ${path}`);
    return { type: "group", op, path, name: label ?? groupName(op, children), label, children };
  }

  /** After a group's `]`: the end, the enclosing `]`, or `--` before the next member. */
  #separator(where: string): void {
    const next = this.argv[this.#i];
    if (next === undefined || (next === "]" && this.#depth > 0)) return;
    if (next === "--" && this.#startsSegment(this.#i + 1)) {
      this.#i++;
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
    this.#then = this.argv.slice(this.#i + 1);
    if (this.#then.length === 0) {
      throw new UsageError("then", "expected a command: -- then <command> [args...]");
    }
    // Its arguments may carry credentials (a URL's password, a header's token): every output,
    // --explain included, masks them (docs/contract.md §9).
    this.#secrets.push(...commandSecrets(this.#then));
    this.#i = this.argv.length;
  }

  /** `[guard] [not] <kind> [target] [flags]`: one condition; undefined when it asked for help. */
  #leaf(path: string): ConditionPlan | undefined {
    const index = this.#leaves.length + 1;
    let word = this.argv[this.#i]!;
    let guard = false;
    let negate = false;
    if (word === "guard") {
      guard = true;
      this.#i++;
      const next = this.argv[this.#i];
      if (next === undefined) {
        throw new UsageError(`condition ${index}`, "guard must be followed by a condition kind");
      }
      word = next;
    }
    if (word === "not") {
      negate = true;
      this.#i++;
      const next = this.argv[this.#i];
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
      throw this.#hinted(`condition ${index}`, `unknown kind ${q(word)}`, (r) => kindHint(word, r));
    }
    this.#i++;
    const seg = this.#segment(kind, word, index);
    if (seg.type === "help") {
      this.#helpTopic = kind.name;
      return undefined;
    }
    // A command's arguments may carry credentials, like then's (docs/contract.md §9).
    if (seg.command.length > 0) this.#secrets.push(...commandSecrets(seg.command));
    const leaf = this.#build(kind, word, index, guard, negate, seg);
    const placed = path ? { ...leaf, group: path } : leaf;
    this.#leaves.push(placed);
    return placed;
  }

  #segment(kind: ConditionKind, word: string, index: number):
    | { type: "help" }
    | ({ type: "segment" } & Segment) {
    const where = `condition ${index} (${word})`;
    const fail = (msg: string): never => {
      throw new UsageError(where, msg, kind.name);
    };
    const flags = new Map<string, FlagValue[]>();
    const words: string[] = [];
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
      // A group's `]` ends its last member (an exec command's words too).
      if (tok === "]" && this.#depth > 0) break;
      if (tok === "]" && !inCommand) {
        fail(`unexpected "]": no group is open (groups are any [ … ] or all [ … ])`);
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
        throw this.#hinted(
          where,
          `unexpected "--" before ${q(next!)}: a new condition starts with a kind`,
          (r) => kindHint(next!, r),
          kind.name,
        );
      }
      if (tok === "--help" || tok === "-h") return { type: "help" };
      if (tok.startsWith("-") && tok.length > 1 && !/^-\d/.test(tok)) {
        const { name, inline } = splitFlag(tok);
        const long = tok.startsWith("--");
        const spec = long
          ? kind.flags.find((f) => f.name === name) ??
            COMMON_CONDITION_FLAGS.find((f) => f.name === name)
          : kind.flags.find((f) => f.short === name);
        if (!spec) fail(unknownFlag(tok, name, long, kind));
        const list = flags.get(spec!.name) ?? [];
        if (list.length > 0 && !spec!.repeatable) fail(`--${spec!.name}: given more than once`);
        const from = this.#i;
        list.push(
          this.#flagValue(spec!, inline, `${where}: --${spec!.name}`, kind.name, kind.flags),
        );
        flags.set(spec!.name, list);
        if (spec!.name !== "label") words.push(tok, ...this.argv.slice(from, this.#i));
        continue;
      }
      if (kind.target.shape !== "none" && kind.target.shape !== "command" && target === undefined) {
        target = tok;
        continue;
      }
      // A kind without a target says so first: `process postgres` means --name, not a kind.
      if (kind.target.shape === "command") {
        fail(`unexpected argument ${q(tok)}; the command goes after "--": ${word} -- ${tok} ...`);
      }
      if (kind.target.shape === "none") {
        fail(`unexpected argument ${q(tok)}; ${word} takes no target, only flags`);
      }
      if (tok === "then") {
        fail(`unexpected argument "then"; run a command after the wait with: -- then <command>`);
      }
      if (tok === "guard" || tok === "not" || this.registry.lookup(tok) !== undefined) {
        fail(`unexpected argument ${q(tok)}; separate conditions with "--": ... -- ${tok} ...`);
      }
      // A target written KIND/NAME typed as two words: `k8s deployment web`.
      const joined = kind.target.placeholder.includes("/") && !target!.includes("/") &&
          !tok.includes("/")
        ? ` (did you mean ${target}/${tok}?)`
        : "";
      fail(`unexpected argument ${q(tok)} after the target ${q(target!)}${joined}`);
    }
    if (kind.target.shape === "required" && target === undefined) {
      fail(`missing target ${kind.target.placeholder}`);
    }
    if (kind.target.shape === "command" && command.length === 0) {
      fail(`missing command: ${word} [flags] -- <command> [args...]`);
    }
    return { type: "segment", target, command, flags, words };
  }

  /** `siblings`: the other flags of the kind, for a value that belongs to one of them. */
  #flagValue(
    spec: FlagSpec,
    inline: string | undefined,
    where: string,
    topic: string | undefined,
    siblings: readonly FlagSpec[] = [],
  ): FlagValue {
    if (spec.type === "boolean") return typedValue(spec, inline, where, topic);
    let raw = inline;
    if (raw === undefined) {
      raw = this.argv[this.#i];
      if (raw === undefined) {
        throw new UsageError(
          where,
          `missing value${spec.placeholder ? " " + spec.placeholder : ""}`,
          topic,
        );
      }
      this.#i++;
    }
    if (spec.secret) this.#secrets.push(raw);
    return typedValue(spec, raw, where, topic, siblings);
  }

  #build(
    kind: ConditionKind,
    word: string,
    index: number,
    guard: boolean,
    negate: boolean,
    seg: Segment,
  ): ConditionPlan {
    const parsed = kind.parse(new SegmentInput(kind, word, index, seg, this.env, this.#secrets));
    const label = seg.flags.get("label")?.at(-1) as string | undefined;
    return {
      index,
      kind,
      kindWord: word,
      guard,
      negate,
      name: label ?? `${negate ? "not " : ""}${word} ${parsed.target}`.trimEnd(),
      ...(label === undefined ? {} : { label }),
      target: parsed.target,
      options: parsed.options,
      captures: parsed.captures ?? [],
      words: seg.words,
      command: seg.command,
    };
  }
}

/**
 * What a kind's `parse` reads one condition's segment through. One object
 * per condition, its methods on the prototype: a thousand conditions make a
 * thousand of these, not ten thousand closures (docs/performance.md, "Cost
 * per condition").
 */
class SegmentInput implements KindInput {
  readonly kindWord: string;
  readonly target: string | undefined;
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly #kind: ConditionKind;
  readonly #index: number;
  readonly #flags: Map<string, FlagValue[]>;
  readonly #secrets: string[];

  constructor(
    kind: ConditionKind,
    word: string,
    index: number,
    seg: Segment,
    env: Readonly<Record<string, string>>,
    secrets: string[],
  ) {
    this.kindWord = word;
    this.target = seg.target;
    this.command = seg.command;
    this.env = env;
    this.#kind = kind;
    this.#index = index;
    this.#flags = seg.flags;
    this.#secrets = secrets;
  }

  /** The flag's values; throws (a bug in the kind) for a flag it did not declare. */
  #values(flag: string): FlagValue[] | undefined {
    if (!this.#kind.flags.some((f) => f.name === flag)) {
      throw new Error(`Cannot read flag --${flag} of kind '${this.#kind.name}': not declared`);
    }
    return this.#flags.get(flag);
  }

  #last(flag: string): FlagValue | undefined {
    return this.#values(flag)?.at(-1);
  }

  has(flag: string): boolean {
    return this.#values(flag) !== undefined;
  }

  string(flag: string): string | undefined {
    return this.#last(flag) as string | undefined;
  }

  strings(flag: string): string[] {
    return (this.#values(flag) ?? []) as string[];
  }

  bool(flag: string): boolean {
    return this.#last(flag) === true;
  }

  integer(flag: string): number | undefined {
    return this.#last(flag) as number | undefined;
  }

  duration(flag: string): number | undefined {
    return this.#last(flag) as number | undefined;
  }

  fail(flag: string | undefined, message: string): never {
    const where = `condition ${this.#index} (${this.kindWord})`;
    throw new UsageError(flag ? `${where}: --${flag}` : where, message, this.#kind.name);
  }

  secret(value: string): void {
    if (value) this.#secrets.push(value);
  }
}

/**
 * Two conditions that can capture one name would give `then` one variable for two values
 * (docs/contract.md §7, captures): a usage error naming both.
 */
export function checkCaptureNames(conditions: readonly ConditionPlan[]): void {
  const owner = new Map<string, ConditionPlan>();
  for (const c of conditions) {
    for (const name of new Set(c.captures)) {
      const first = owner.get(name);
      if (first) {
        throw new UsageError(
          `condition ${c.index} (${c.kindWord})`,
          `capture group ${
            q(name)
          } is also captured by condition ${first.index} (${first.kindWord}); ` +
            "give each named group its own name",
          c.kind.name,
        );
      }
      owner.set(name, c);
    }
  }
}

/**
 * ` (did you mean …?)` for a word where a kind belongs: the condition a
 * target-shaped word was meant as (`tcp localhost:8080` for
 * `localhost:8080`), else the nearest kind word.
 */
function kindHint(word: string, registry: Registry): string {
  const meant = conditionFor(word, registry.kinds);
  return meant ? ` (did you mean ${meant}?)` : didYouMean(word, registry.words);
}

/**
 * The message for a flag a condition does not take: the nearest flag of the kind, or where a
 * global option belongs (`-t`, `--timeout` after a condition), or how flags are written.
 */
function unknownFlag(tok: string, name: string, long: boolean, kind: ConditionKind): string {
  const all = [...kind.flags, ...COMMON_CONDITION_FLAGS].map((f) => f.name);
  const global = GLOBAL_FLAGS.find((f) => long ? f.name === name : f.short === name);
  let hint = long ? didYouMean(name, all, (s) => `--${s}`) : "";
  if (!hint && global) {
    hint = `; global options such as ${long ? "--" + name : `-${name} (--${global.name})`} go ` +
      "before the first condition";
  }
  if (!long) hint ||= `; flags are written --name`;
  return `unknown flag ${long ? "--" + name : tok}${hint}`;
}

/**
 * A flag's text as its declared type, range-checked; `raw` undefined means
 * a boolean flag given bare. Throws a `UsageError` located at `where`.
 */
function typedValue(
  spec: FlagSpec,
  raw: string | undefined,
  where: string,
  topic: string | undefined,
  siblings: readonly FlagSpec[] = [],
): FlagValue {
  const fail = (msg: string): never => {
    throw new UsageError(where, msg, topic);
  };
  if (spec.type === "boolean") {
    if (raw === undefined || raw === "true") return true;
    if (raw === "false") return false;
    return fail(`expected true or false, got ${q(raw)}`);
  }
  if (raw === undefined) return fail("missing value");
  switch (spec.type) {
    case "string":
      return raw;
    case "enum": {
      const values = spec.values ?? [];
      // Enum values are matched case-insensitively (`--type aaaa`), then given canonically.
      const found = values.find((v) => v.toLowerCase() === raw.toLowerCase());
      if (found === undefined) {
        // A value of another flag of the kind (`docker web --status healthy`) points at that flag.
        const owner = siblings.find((f) =>
          f !== spec && f.type === "enum" &&
          f.values?.some((v) => v.toLowerCase() === raw.toLowerCase())
        );
        const hint = owner ? ` (did you mean --${owner.name} ${raw}?)` : didYouMean(raw, values);
        fail(`expected one of ${values.join(", ")}, got ${q(raw)}${hint}`);
      }
      return found!;
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

/** `--timeout`'s value: a duration, or `0` / `none` for no deadline (Infinity). */
function timeoutValue(raw: string, where: string): number {
  if (raw.toLowerCase() === "none") return Infinity;
  const ms = parseDuration(raw);
  if (ms === undefined) {
    throw new UsageError(
      where,
      `expected a duration like 30s, 2m or 1h30m, got ${q(raw)}`,
    );
  }
  return ms === 0 ? Infinity : ms;
}

/** `--jitter`: `20%` or `0.2`, from 0 to 100% (docs/contract.md §4). */
export function parseJitter(raw: string): number {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(raw.trim());
  const value = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(
      "--jitter",
      `expected a share from 0% to 100% (like 20% or 0.2), got ${q(raw)}`,
    );
  }
  return value;
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
