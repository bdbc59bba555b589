/**
 * Looks kinds up by name or alias. The list of kinds itself lives only in
 * conditions/mod.ts.
 *
 * @module
 */

import type { ConditionKind } from "./types.ts";

/** Every kind, and a lookup by any word that names one. */
export interface Registry {
  readonly kinds: readonly ConditionKind[];
  /** The kind named by `word` (canonical name or alias), if any. */
  lookup(word: string): ConditionKind | undefined;
  /** Every word that names a kind. */
  readonly words: readonly string[];
  /** Made from some kinds only (those a command line names): hints about others need more. */
  readonly partial: boolean;
}

/** Words the grammar reserves; no kind may be named like them. */
export const RESERVED_WORDS: readonly string[] = [
  "guard",
  "not",
  "any",
  "all",
  "then",
  "help",
  "completions",
  "version",
  "doctor",
];

/**
 * Builds the registry; a duplicate name or alias is a bug of ours and throws
 * at start-up.
 */
export function createRegistry(kinds: readonly ConditionKind[], partial = false): Registry {
  const byWord = new Map<string, ConditionKind>();
  for (const kind of kinds) {
    for (const word of [kind.name, ...kind.aliases]) {
      if (byWord.has(word) || RESERVED_WORDS.includes(word)) {
        throw new Error(`Cannot register kind '${kind.name}': the word '${word}' is already taken`);
      }
      byWord.set(word, kind);
    }
    const seen = new Set<string>();
    for (const flag of kind.flags) {
      if (seen.has(flag.name)) {
        throw new Error(`Cannot register kind '${kind.name}': flag --${flag.name} declared twice`);
      }
      seen.add(flag.name);
    }
  }
  return {
    kinds,
    lookup: (word) => byWord.get(word),
    words: [...byWord.keys()],
    partial,
  };
}
