/**
 * `waitcmd --help` and `waitcmd help <kind>`, generated from the registry
 * and each kind's declared flags.
 *
 * @module
 */

import { COMMON_CONDITION_FLAGS, GLOBAL_FLAGS } from "../engine/options.ts";
import type { Registry } from "../engine/registry.ts";
import type { ConditionKind, FlagSpec } from "../engine/types.ts";

function flagRows(flags: readonly FlagSpec[]): string[] {
  const left = flags.map((f) =>
    `${f.short ? `-${f.short}, ` : ""}--${f.name}${
      f.type === "boolean" ? "" : " " + (f.placeholder ?? "VALUE")
    }`
  );
  const width = Math.max(...left.map((l) => l.length));
  return flags.map((f, i) => {
    const extra = [
      f.repeatable ? "repeatable" : "",
      f.type === "enum" && f.values && !f.values.every((v) => f.placeholder?.includes(v))
        ? f.values.join("|")
        : "",
    ].filter(Boolean);
    return `  ${left[i]!.padEnd(width)}  ${f.description}${
      extra.length ? ` (${extra.join("; ")})` : ""
    }`;
  });
}

/** The text of `waitcmd --help`. */
export function mainHelp(registry: Registry): string {
  const width = Math.max(...registry.kinds.map((k) => k.name.length));
  const kinds = registry.kinds.map((k) => {
    const aliases = k.aliases.length ? ` (alias: ${k.aliases.join(", ")})` : "";
    return `  ${k.name.padEnd(width)}  ${k.summary}${aliases}`;
  });
  return [
    "waitcmd - wait until conditions hold, then let the next step go on",
    "",
    "Usage:",
    "  waitcmd [global options] [guard] [not] <kind> [target] [flags]",
    "          [-- [guard] [not] <kind> [target] [flags]]... [-- then <command> [args...]]",
    "  waitcmd -f recipe.yaml [global options] [-- more conditions]",
    "  waitcmd doctor [-o json] [--require KIND]",
    "",
    "Condition kinds:",
    ...kinds,
    "",
    "Global options (before the first condition):",
    ...flagRows(GLOBAL_FLAGS),
    "",
    "Every condition also takes:",
    ...flagRows(COMMON_CONDITION_FLAGS),
    "",
    "Combining:",
    "  --                 separates conditions (only before a kind word, guard, not or then)",
    "  guard <kind> ...   exits 3 as soon as this condition holds (e.g. a fatal error line)",
    "  not <kind> ...     holds while the condition does not: a port closed, a file gone",
    "  -- then CMD ARGS   runs CMD once the wait succeeds and exits with its code",
    "",
    "Environment (a flag wins): WAITCMD_TIMEOUT, WAITCMD_INTERVAL, WAITCMD_ATTEMPT_TIMEOUT,",
    "  WAITCMD_OUTPUT, WAITCMD_MODE; NO_COLOR.",
    "",
    "Durations: 500ms, 30s, 2m, 6h, 30d, 1h30m; a bare number is seconds.",
    "",
    "Exit codes:",
    "  0    satisfied",
    "  1    timed out",
    "  2    usage error (nothing was probed)",
    "  3    fatal: a guard matched, a job failed, a command does not exist",
    "  129  cancelled by SIGHUP;  130  by SIGINT;  143  by SIGTERM",
    "",
    "Examples:",
    ...registry.kinds.slice(0, 4).map((k) => `  waitcmd ${k.examples[0]?.args ?? k.name}`),
    "  waitcmd <condition> -- guard <condition> -- then ./start.sh",
    "",
    "More: waitcmd help <kind>; waitcmd doctor; waitcmd completions bash|zsh|fish; waitcmd -V",
    "",
  ].join("\n");
}

/** The text of `waitcmd help <kind>`. */
export function kindHelp(kind: ConditionKind): string {
  const target = kind.target.shape === "required" ? ` ${kind.target.placeholder}` : "";
  const tail = kind.target.shape === "command" ? ` -- ${kind.target.placeholder}` : "";
  const lines = [
    `waitcmd ${kind.name} - ${kind.summary}`,
    "",
    "Usage:",
    `  waitcmd [global options] ${kind.name}${target} [flags]${tail}`,
    "",
    kind.description,
    "",
  ];
  if (kind.target.shape !== "none") {
    lines.push("Target:", `  ${kind.target.placeholder}  ${kind.target.description}`, "");
  }
  if (kind.aliases.length) lines.push(`Aliases: ${kind.aliases.join(", ")}`, "");
  const flags = [...kind.flags, ...COMMON_CONDITION_FLAGS];
  lines.push("Flags:", ...flagRows(flags), "");
  lines.push("Examples:");
  for (const ex of kind.examples) lines.push(`  waitcmd ${ex.args}`, `      ${ex.description}`);
  lines.push("");
  return lines.join("\n");
}
