/**
 * Shell completion scripts, generated from the registry: kind words, each
 * kind's flags and enum values, the global options, `doctor`'s options.
 *
 * Both scripts read the words before the cursor the way the grammar does
 * (docs/contract.md §1): global options first (a value-taking option skips
 * its value), then conditions, each opened by a kind word and separated by a
 * `--` followed by a kind, `guard`, `not` or `then`. A value-taking flag's
 * value is never read as a kind, and a flag's values come from the kind of
 * the condition the cursor is in (`http --status` and `docker --status` are
 * different flags). bash and zsh share one function (zsh runs it through
 * `bashcompinit`); fish gets the same logic in its own language.
 *
 * @module
 */

import type { Registry } from "../engine/registry.ts";
import { bashScript } from "./completion_bash.ts";
import { fishScript } from "./completion_fish.ts";
import { SHELLS } from "./completion_model.ts";

/** The completion script for `shell` (bash, zsh or fish). */
export function completionScript(shell: string, registry: Registry): string {
  switch (shell) {
    case "bash":
    case "zsh":
      return bashScript(registry, shell === "zsh");
    case "fish":
      return fishScript(registry);
  }
  throw new Error(
    `Cannot complete for shell '${shell}': expected one of ${SHELLS.join(", ")}`,
  );
}
