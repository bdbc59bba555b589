/**
 * One condition's segment of the command line, sorted, and the `KindInput` a kind's `parse`
 * reads it through (docs/contract.md §2).
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import type { FlagValue } from "./flag_values.ts";
import type { ConditionKind, KindInput } from "./types.ts";

/** One condition's words, sorted: its target, its command (a command-shaped kind's) and its flags. */
export interface Segment {
  readonly target: string | undefined;
  readonly command: string[];
  readonly flags: Map<string, FlagValue[]>;
  /** The flags' words as typed, `--label` left out (for --explain). */
  readonly words: string[];
}

/**
 * What a kind's `parse` reads one condition's segment through. One object
 * per condition, its methods on the prototype: a thousand conditions make a
 * thousand of these, not ten thousand closures (docs/performance.md, "Cost
 * per condition").
 */
export class SegmentInput implements KindInput {
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
