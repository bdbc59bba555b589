/**
 * Shell completion scripts, generated from the registry: kind words, each
 * kind's flags and enum values, the global options.
 *
 * @module
 */

import { COMMON_CONDITION_FLAGS, GLOBAL_FLAGS } from "../engine/options.ts";
import type { Registry } from "../engine/registry.ts";
import type { FlagSpec } from "../engine/types.ts";

const words = (flags: readonly FlagSpec[]) => flags.map((f) => `--${f.name}`).join(" ");
const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The completion script for `shell` (bash, zsh or fish). */
export function completionScript(shell: string, registry: Registry): string {
  switch (shell) {
    case "bash":
    case "zsh":
      return bashScript(registry, shell === "zsh");
    case "fish":
      return fishScript(registry);
  }
  throw new Error(`Cannot complete for shell '${shell}': unsupported`);
}

function bashScript(registry: Registry, zsh: boolean): string {
  const kindCases = registry.kinds.map((k) => {
    const flags = words([...k.flags, ...COMMON_CONDITION_FLAGS]);
    return `    ${[k.name, ...k.aliases].join("|")}) flags=${sq(flags)} ;;`;
  });
  const valueCases: string[] = [];
  for (const f of [...GLOBAL_FLAGS, ...registry.kinds.flatMap((k) => k.flags)]) {
    if (f.type === "enum" && f.values) {
      valueCases.push(
        `    --${f.name}) COMPREPLY=($(compgen -W ${sq(f.values.join(" "))} -- "$cur")); return ;;`,
      );
    } else if (f.complete === "file") {
      valueCases.push(`    --${f.name}) COMPREPLY=($(compgen -f -- "$cur")); return ;;`);
    }
  }
  return [
    zsh
      ? "#compdef waitcmd\nautoload -U +X bashcompinit && bashcompinit"
      : "# bash completion for waitcmd",
    "_waitcmd() {",
    '  local cur prev kind="" i flags',
    '  cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"',
    '  case "$prev" in',
    ...[...new Set(valueCases)],
    "  esac",
    "  for ((i=1; i<COMP_CWORD; i++)); do",
    '    case "${COMP_WORDS[i]}" in',
    `      ${registry.words.join("|")}) kind="\${COMP_WORDS[i]}" ;;`,
    "    esac",
    "  done",
    '  if [[ -z "$kind" ]]; then',
    `    COMPREPLY=($(compgen -W ${
      sq(
        `${registry.words.join(" ")} guard help completions ${
          words(GLOBAL_FLAGS)
        } --help --version`,
      )
    } -- "$cur"))`,
    "    return",
    "  fi",
    '  case "$kind" in',
    ...kindCases,
    "  esac",
    `  COMPREPLY=($(compgen -W "$flags -- guard then ${registry.words.join(" ")}" -- "$cur"))`,
    '  [[ "$cur" != -* ]] && COMPREPLY+=($(compgen -f -- "$cur"))',
    "}",
    "complete -F _waitcmd waitcmd",
    "",
  ].join("\n");
}

function fishScript(registry: Registry): string {
  const lines = [
    "# fish completion for waitcmd",
    `set -l __waitcmd_kinds ${registry.words.join(" ")}`,
    `complete -c waitcmd -n "not __fish_seen_subcommand_from $__waitcmd_kinds" -a "$__waitcmd_kinds guard help completions"`,
  ];
  const flagLine = (cond: string, f: FlagSpec) => {
    const values = f.type === "enum" && f.values
      ? ` -x -a ${sq(f.values.join(" "))}`
      : f.type === "boolean"
      ? ""
      : f.complete === "file"
      ? " -r -F"
      : " -x";
    return `complete -c waitcmd -n ${sq(cond)} -l ${f.name}${values} -d ${sq(f.description)}`;
  };
  for (const f of GLOBAL_FLAGS) {
    lines.push(flagLine("not __fish_seen_subcommand_from $__waitcmd_kinds", f));
  }
  for (const k of registry.kinds) {
    const cond = `__fish_seen_subcommand_from ${[k.name, ...k.aliases].join(" ")}`;
    for (const f of [...k.flags, ...COMMON_CONDITION_FLAGS]) lines.push(flagLine(cond, f));
  }
  lines.push("");
  return lines.join("\n");
}
