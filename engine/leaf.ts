/**
 * One condition's words (docs/contract.md §1): the segment after its kind word read from the
 * command line, the flags' values, and the condition's plan from its kind's `parse`. The walk
 * over the whole line is engine/grammar.ts's; it hands this module its cursor.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { type FlagValue, q, splitFlag, typedValue, unknownFlag } from "./flag_values.ts";
import { COMMON_CONDITION_FLAGS } from "./options.ts";
import type { ConditionPlan } from "./plan.ts";
import type { Registry } from "./registry.ts";
import { type Segment, SegmentInput } from "./segment_input.ts";
import { conditionFor, didYouMean } from "./suggest.ts";
import type { ConditionKind, FlagSpec } from "./types.ts";

/** Where the grammar is in the command line, and what reading a segment needs of it. */
export interface WordCursor {
  readonly argv: readonly string[];
  /** The index of the next word; reading moves it. */
  i: number;
  readonly registry: Registry;
  /** Every secret the line holds: a secret flag's value is added. */
  readonly secrets: string[];
  /** Inside a group: a `]` ends the segment. */
  readonly inGroup: boolean;
  /** True when argv[at] may start a new segment after a `--`. */
  startsSegment(at: number): boolean;
  /** A usage error whose hint may need every kind's declaration. */
  hinted(
    where: string,
    message: string,
    hint: (registry: Registry) => string,
    topic?: string,
  ): UsageError;
}

/**
 * Reads one condition's segment from `c`'s next word (the kind word read): its target, command
 * and flags, up to the `--` that starts another condition, a group's `]` or the end; or `help`
 * for `<kind> --help`.
 */
export function readSegment(c: WordCursor, kind: ConditionKind, word: string, index: number):
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
  while (c.i < c.argv.length) {
    const tok = c.argv[c.i]!;
    // exec's own first "--" always starts its command, even `exec -- docker ps`.
    const opensCommand = tok === "--" && kind.target.shape === "command" && !inCommand;
    if (tok === "--" && !opensCommand && c.startsSegment(c.i + 1)) {
      c.i++;
      break;
    }
    // A group's `]` ends its last member (an exec command's words too).
    if (tok === "]" && c.inGroup) break;
    if (tok === "]" && !inCommand) {
      fail(`unexpected "]": no group is open (groups are any [ … ] or all [ … ])`);
    }
    c.i++;
    if (inCommand) {
      command.push(tok);
      continue;
    }
    if (opensCommand) {
      inCommand = true;
      continue;
    }
    if (tok === "--") {
      const next = c.argv[c.i];
      if (next === undefined) fail(`nothing after "--"; expected a condition kind`);
      throw c.hinted(
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
      const from = c.i;
      list.push(
        flagValue(c, spec!, inline, `${where}: --${spec!.name}`, kind.name, kind.flags),
      );
      flags.set(spec!.name, list);
      if (spec!.name !== "label") words.push(tok, ...c.argv.slice(from, c.i));
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
    if (tok === "guard" || tok === "not" || c.registry.lookup(tok) !== undefined) {
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

/**
 * The value of flag `spec` given as `inline` (`--flag=value`) or as the next word; a secret
 * flag's value is noted. `siblings`: the other flags of the kind, for a value that belongs to
 * one of them.
 */
export function flagValue(
  c: WordCursor,
  spec: FlagSpec,
  inline: string | undefined,
  where: string,
  topic: string | undefined,
  siblings: readonly FlagSpec[] = [],
): FlagValue {
  if (spec.type === "boolean") return typedValue(spec, inline, where, topic);
  let raw = inline;
  if (raw === undefined) {
    raw = c.argv[c.i];
    if (raw === undefined) {
      throw new UsageError(
        where,
        `missing value${spec.placeholder ? " " + spec.placeholder : ""}`,
        topic,
      );
    }
    c.i++;
  }
  if (spec.secret) c.secrets.push(raw);
  return typedValue(spec, raw, where, topic, siblings);
}

/** The plan of one condition: its kind's `parse` of the segment, and its name. */
export function buildLeaf(
  kind: ConditionKind,
  word: string,
  index: number,
  guard: boolean,
  negate: boolean,
  seg: Segment,
  env: Readonly<Record<string, string>>,
  secrets: string[],
): ConditionPlan {
  const parsed = kind.parse(new SegmentInput(kind, word, index, seg, env, secrets));
  const label = seg.flags.get("label")?.at(-1) as string | undefined;
  const attemptTimeoutMs = seg.flags.get("attempt-timeout")?.at(-1) as number | undefined;
  if (attemptTimeoutMs !== undefined && attemptTimeoutMs <= 0) {
    throw new UsageError(
      `condition ${index} (${word}): --attempt-timeout`,
      "must be longer than 0",
      kind.name,
    );
  }
  return {
    index,
    kind,
    kindWord: word,
    guard,
    negate,
    name: label ?? `${negate ? "not " : ""}${word} ${parsed.target}`.trimEnd(),
    ...(label === undefined ? {} : { label }),
    ...(attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs }),
    target: parsed.target,
    options: parsed.options,
    captures: parsed.captures ?? [],
    words: seg.words,
    command: seg.command,
  };
}

/**
 * ` (did you mean …?)` for a word where a kind belongs: the condition a
 * target-shaped word was meant as (`tcp localhost:8080` for
 * `localhost:8080`), else the nearest kind word.
 */
export function kindHint(word: string, registry: Registry): string {
  const meant = conditionFor(word, registry.kinds);
  return meant ? ` (did you mean ${meant}?)` : didYouMean(word, registry.words);
}
