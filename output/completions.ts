/**
 * Shell completion scripts. The scripts are shell files of their own
 * (`output/completions/waitcmd.bash`, `.zsh`, `.fish`), imported as text so
 * that `deno compile` embeds them; this module writes the tables the
 * registry decides (kind words, each kind's flags and how their values
 * complete, how its target completes, the global options, `doctor`'s) in
 * place of the `# {{tables}}` line. zsh runs the bash function through
 * `bashcompinit`: its file takes the bash script in place of `# {{bash}}`.
 *
 * The scripts read the words before the cursor the way the grammar does
 * (docs/contract.md §1): global options first (a value-taking option skips
 * its value), then members, each opened by a kind word, `guard`, `not` or a
 * group (`any [` … `]`, `--label` after its `]`), separated by `--`; then
 * `then`. A value-taking flag's value is never read as a kind, and a flag's
 * values come from the kind of the condition the cursor is in
 * (`http --status` and `docker --status` are different flags).
 *
 * @module
 */

import { GROUP_OPERATORS, HELP_TOPIC_NAMES, PREFIX_WORDS, SHELLS } from "../engine/grammar.ts";
import type { Registry } from "../engine/registry.ts";
import {
  contexts,
  FIRST_WORDS,
  type OptionSpec,
  targetOf,
  type ValueAction,
} from "./completion_model.ts";
import bashFile from "./completions/waitcmd.bash" with { type: "text" };
import zshFile from "./completions/waitcmd.zsh" with { type: "text" };
import fishFile from "./completions/waitcmd.fish" with { type: "text" };

/** The completion script for `shell` (bash, zsh or fish). */
export function completionScript(shell: string, registry: Registry): string {
  switch (shell) {
    case "bash":
      return fill(bashFile, "tables", bashTables(registry));
    case "zsh": {
      // The bash script from its first line of code: its own header comment is bash's.
      const bash = fill(bashFile, "tables", bashTables(registry));
      return fill(zshFile, "bash", bash.slice(bash.indexOf("\n\n") + 2).trimEnd());
    }
    case "fish":
      return fill(fishFile, "tables", fishTables(registry));
  }
  throw new Error(`Cannot complete for shell '${shell}': expected one of ${SHELLS.join(", ")}`);
}

/** `file` with its `# {{name}} …` line replaced by `text`. */
function fill(file: string, name: string, text: string): string {
  const marker = new RegExp(`^# \\{\\{${name}\\}\\}.*$`, "m");
  if (!marker.test(file)) throw new Error(`Cannot fill the completion script: no {{${name}}}`);
  return file.replace(marker, () => text);
}

/** A single-quoted POSIX shell word. */
const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** A single-quoted fish word. */
const fq = (s: string) => `'${s.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

/** One line of a description, as fish shows it after a tab. */
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

/** The options of `@` (global) as typed, with the words every command line takes. */
const GLOBAL_EXTRA: readonly (readonly [string, string])[] = [
  ["--help", "Show help"],
  ["-h", "Show help"],
  ["--version", "Show the version"],
  ["-V", "Show the version"],
];

/** The kind of each word, for the `case` of bash and fish. */
function kindsByTarget(registry: Registry): Map<string, string[]> {
  const byTarget = new Map<string, string[]>();
  for (const k of registry.kinds) {
    const t = targetOf(k);
    if (t) byTarget.set(t, [...(byTarget.get(t) ?? []), k.name]);
  }
  return byTarget;
}

function bashAction(a: ValueAction): string {
  switch (a.type) {
    case "words":
      return `__waitcmd_a=w __waitcmd_v=${sq(a.values.join(" "))}`;
    case "files":
      return "__waitcmd_a=f";
    case "directories":
      return "__waitcmd_a=d";
    case "kinds":
      return "__waitcmd_a=k";
  }
}

/** The bash tables: word lists and the `case` functions the script asks. */
export function bashTables(registry: Registry): string {
  const ctxs = contexts(registry);
  const pattern = (ctx: string, o: OptionSpec) =>
    o.spellings.map((s) => sq(`${ctx} ${s}`)).join(" | ");
  const out = [
    `__waitcmd_kindwords=${sq(registry.words.join(" "))}`,
    `__waitcmd_first=${sq(FIRST_WORDS.join(" "))}`,
    `__waitcmd_shells=${sq(SHELLS.join(" "))}`,
    `__waitcmd_topics=${sq(HELP_TOPIC_NAMES.join(" "))}`,
    `__waitcmd_groups=${sq(GROUP_OPERATORS.join(" "))}`,
    `__waitcmd_prefixes=${sq(PREFIX_WORDS.join(" "))}`,
    "",
    "# The kind named by $1 (a name or an alias) -> __waitcmd_k; fails for any other word.",
    "__waitcmd_kind() {",
    '  case "$1" in',
    ...registry.kinds.map((k) =>
      `    ${[k.name, ...k.aliases].map(sq).join(" | ")}) __waitcmd_k=${sq(k.name)} ;;`
    ),
    "    *) return 1 ;;",
    "  esac",
    "}",
    "",
    '# Succeeds when "$1" ("<context> <option>") takes a separate value.',
    "__waitcmd_takes() {",
    '  case "$1" in',
    ...ctxs.flatMap((c) =>
      c.options.filter((o) => o.takesValue).map((o) => `    ${pattern(c.key, o)}) return 0 ;;`)
    ),
    "  esac",
    "  return 1",
    "}",
    "",
    '# How the value of "$1" ("<context> <option>") completes -> __waitcmd_a',
    "# (w: the words in __waitcmd_v, f: files, d: directories, k: kinds, empty: nothing).",
    "__waitcmd_values() {",
    "  __waitcmd_a='' __waitcmd_v=''",
    '  case "$1" in',
    ...ctxs.flatMap((c) =>
      c.options.filter((o) => o.action).map((o) =>
        `    ${pattern(c.key, o)}) ${bashAction(o.action!)} ;;`
      )
    ),
    "  esac",
    "}",
    "",
    "# The options of context $1 -> __waitcmd_v.",
    "__waitcmd_flags() {",
    '  case "$1" in',
    ...ctxs.map((c) => {
      const words = c.options.flatMap((o) => o.spellings);
      if (c.key === "@") words.push(...GLOBAL_EXTRA.map(([w]) => w));
      return `    ${sq(c.key)}) __waitcmd_v=${sq(words.join(" "))} ;;`;
    }),
    "    *) __waitcmd_v='' ;;",
    "  esac",
    "}",
    "",
    "# How kind $1's target completes -> __waitcmd_a",
    "# (f: files, d: directories, c: a command after --, n: no target, empty: free text).",
    "__waitcmd_target() {",
    '  case "$1" in',
    ...[...kindsByTarget(registry)].map(([t, names]) =>
      `    ${names.map(sq).join(" | ")}) __waitcmd_a=${t} ;;`
    ),
    "    *) __waitcmd_a='' ;;",
    "  esac",
    "}",
  ];
  return out.join("\n");
}

function fishAction(a: ValueAction): string {
  switch (a.type) {
    case "words":
      return `printf '%s\\n' w ${a.values.map(fq).join(" ")}`;
    case "files":
      return "echo f";
    case "directories":
      return "echo d";
    case "kinds":
      return "echo k";
  }
}

/** The fish tables: word lists and the `switch` functions the script asks. */
export function fishTables(registry: Registry): string {
  const ctxs = contexts(registry);
  const cases = (ctx: string, o: OptionSpec) => o.spellings.map((s) => fq(`${ctx} ${s}`)).join(" ");
  const out = [
    `set -g __waitcmd_first ${FIRST_WORDS.join(" ")}`,
    `set -g __waitcmd_shells ${SHELLS.join(" ")}`,
    `set -g __waitcmd_topics ${HELP_TOPIC_NAMES.join(" ")}`,
    `set -g __waitcmd_groups ${GROUP_OPERATORS.join(" ")}`,
    `set -g __waitcmd_prefixes ${PREFIX_WORDS.join(" ")}`,
    "",
    "# The kind named by $argv[1] (a name or an alias); fails for any other word.",
    "function __waitcmd_kind",
    "    switch $argv[1]",
    ...registry.kinds.flatMap((k) => [
      `        case ${[k.name, ...k.aliases].map(fq).join(" ")}`,
      `            echo ${k.name}`,
      "            return 0",
    ]),
    "    end",
    "    return 1",
    "end",
    "",
    "# Kind words with their summaries.",
    "function __waitcmd_kinds",
    ...registry.kinds.flatMap((k) =>
      [k.name, ...k.aliases].map((w) =>
        `    printf '%s\\t%s\\n' ${fq(w)} ${fq(oneLine(k.summary))}`
      )
    ),
    "end",
    "",
    '# Succeeds when $argv[1] ("<context> <option>") takes a separate value.',
    "function __waitcmd_takes",
    "    switch $argv[1]",
    ...ctxs.flatMap((c) =>
      c.options.filter((o) => o.takesValue).flatMap((o) => [
        `        case ${cases(c.key, o)}`,
        "            return 0",
      ])
    ),
    "    end",
    "    return 1",
    "end",
    "",
    '# How the value of $argv[1] ("<context> <option>") completes: prints w and the words,',
    "# or f (files), d (directories), k (kinds); nothing for free text.",
    "function __waitcmd_values",
    "    switch $argv[1]",
    ...ctxs.flatMap((c) =>
      c.options.filter((o) => o.action).flatMap((o) => [
        `        case ${cases(c.key, o)}`,
        `            ${fishAction(o.action!)}`,
      ])
    ),
    "    end",
    "end",
    "",
    "# The options of context $argv[1], with their descriptions.",
    "function __waitcmd_flags",
    "    switch $argv[1]",
    ...ctxs.flatMap((c) => {
      const rows = c.options.flatMap((o) => o.spellings.map((s) => [s, oneLine(o.description)]));
      if (c.key === "@") rows.push(...GLOBAL_EXTRA.map(([w, d]) => [w, d]));
      return [
        `        case ${fq(c.key)}`,
        ...rows.map(([s, d]) => `            printf '%s\\t%s\\n' ${fq(s!)} ${fq(d!)}`),
      ];
    }),
    "    end",
    "end",
    "",
    "# How kind $argv[1]'s target completes: f, d, c (a command after --), n (none) or nothing.",
    "function __waitcmd_target",
    "    switch $argv[1]",
    ...[...kindsByTarget(registry)].flatMap(([t, names]) => [
      `        case ${names.map(fq).join(" ")}`,
      `            echo ${t}`,
    ]),
    "    end",
    "end",
  ];
  return out.join("\n");
}
