/**
 * What the completion scripts know, derived from the registry: the options
 * of each context (global options, `doctor`, each kind) with how their
 * values complete, and how each kind's target completes. The scripts
 * themselves are the shell files of output/completions/.
 *
 * @module
 */

import { COMMON_CONDITION_FLAGS, GLOBAL_FLAGS } from "../engine/options.ts";
import type { Registry } from "../engine/registry.ts";
import type { ConditionKind, FlagSpec } from "../engine/types.ts";

/** How a value is completed: listed words, files, directories or kind words. */
export type ValueAction = { type: "words"; values: readonly string[] } | {
  type: "files" | "directories" | "kinds";
};

/** One option as the scripts see it: the words that spell it and how its value completes. */
export interface OptionSpec {
  /** `--name`, and `-x` when it has a short form. */
  readonly spellings: readonly string[];
  readonly description: string;
  /** Takes a separate value (everything but a boolean). */
  readonly takesValue: boolean;
  readonly action: ValueAction | undefined;
}

/**
 * Where the cursor's word belongs: `@` (global options), `@doctor`, `@closed` (after a group's
 * `]`), or a kind's name.
 */
export interface Context {
  readonly key: string;
  readonly options: readonly OptionSpec[];
}

/** Words that are only special as the first word. */
export const FIRST_WORDS = ["help", "completions", "version", "doctor"] as const;

function optionOf(f: FlagSpec): OptionSpec {
  const action: ValueAction | undefined = f.type === "boolean"
    ? { type: "words", values: ["true", "false"] }
    : f.type === "enum" && f.values
    ? { type: "words", values: f.values }
    : f.complete === "file"
    ? { type: "files" }
    : f.complete === "directory"
    ? { type: "directories" }
    : undefined;
  return {
    spellings: [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])],
    description: f.description,
    takesValue: f.type !== "boolean",
    action,
  };
}

/** Every context with its options: `@` first, then `@doctor`, `@closed`, then each kind. */
export function contexts(registry: Registry): Context[] {
  const doctor: OptionSpec[] = [
    {
      spellings: ["--output", "-o"],
      description: "text (default) or json",
      takesValue: true,
      action: { type: "words", values: ["text", "json"] },
    },
    {
      spellings: ["--require"],
      description: "Exit 1 when this kind cannot work here",
      takesValue: true,
      action: { type: "kinds" },
    },
  ];
  const help: OptionSpec = {
    spellings: ["--help"],
    description: "Show this kind's help",
    takesValue: false,
    action: undefined,
  };
  return [
    { key: "@", options: GLOBAL_FLAGS.map(optionOf) },
    { key: "@doctor", options: doctor },
    // A group's `]` takes `--label TEXT` (docs/contract.md §1, groups).
    {
      key: "@closed",
      options: COMMON_CONDITION_FLAGS.filter((f) => f.name === "label").map(optionOf),
    },
    ...registry.kinds.map((k) => ({
      key: k.name,
      options: [...k.flags, ...COMMON_CONDITION_FLAGS].map(optionOf).concat(help),
    })),
  ];
}

/** How a kind's target completes: a file, a directory, a command after `--`, none, or free text. */
export function targetOf(k: ConditionKind): "f" | "d" | "c" | "n" | "" {
  if (k.target.shape === "command") return "c";
  if (k.target.shape === "none") return "n";
  return k.target.complete === "file" ? "f" : k.target.complete === "directory" ? "d" : "";
}
