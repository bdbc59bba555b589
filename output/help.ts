/**
 * `waitcmd --help` and `waitcmd help <kind>`, generated from the registry
 * and each kind's declared flags.
 *
 * @module
 */

import { HELP_TOPIC_NAMES } from "../engine/grammar.ts";
import { COMMON_CONDITION_FLAGS, ENV_DEFAULTS, GLOBAL_FLAGS } from "../engine/options.ts";
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
      f.secret ? "secret: never shown" : "",
      f.type === "enum" && f.values && !f.values.every((v) => f.placeholder?.includes(v))
        ? f.values.join("|")
        : "",
    ].filter(Boolean);
    return `  ${left[i]!.padEnd(width)}  ${f.description}${
      extra.length ? ` (${extra.join("; ")})` : ""
    }`;
  });
}

/** The text of `waitcmd help [topic]`: the main help, a kind's, or a topic's. */
export function helpText(topic: string | undefined, registry: Registry): string {
  if (topic === undefined) return mainHelp(registry);
  const kind = registry.lookup(topic);
  return kind ? kindHelp(kind) : TOPICS[topic as HelpTopic] ?? mainHelp(registry);
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
    "          [-- <condition or group>]... [-- then <command> [args...]]",
    "  waitcmd -f recipe.yaml [global options] [-- more conditions]",
    "  waitcmd doctor [-o json] [--require KIND[,KIND…]]",
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
    "  --                 separates conditions (only before a kind word, guard, not, any, all or then)",
    "  guard <kind> ...   exits 3 as soon as this condition holds (e.g. a fatal error line)",
    "  not <kind> ...     holds while the condition does not: a port closed, a file gone",
    "  any [ A -- B ]     one of A, B is enough; all [ A -- B ] needs both; groups nest",
    "  -- then CMD ARGS   runs CMD once the wait succeeds and exits with its code",
    "",
    "Durations: 500ms, 30s, 2m, 6h, 30d, 1h30m; a bare number is seconds.",
    "",
    "Exit codes: 0 satisfied, 1 timed out or gave up, 2 usage error, 3 fatal,",
    "  129/130/131/143 cancelled by SIGHUP/SIGINT/SIGQUIT/SIGTERM (waitcmd help exit-codes)",
    "",
    "Examples:",
    "  waitcmd -t 2m tcp db:5432 -- http http://localhost:8080/health --status 200",
    "  waitcmd tcp db:5432 -- any [ http http://a/health -- http http://b/health ]",
    "  waitcmd log server.log --matches 'listening on port (?P<port>\\d+)' \\",
    "    -- then sh -c 'curl http://localhost:$WAITCMD_CAPTURE_PORT/'",
    "  waitcmd -t 5m k8s -f manifests/",
    "  waitcmd --start 'npm run start:api' http http://localhost:8080/health -- then npm test",
    "",
    `Help topics: waitcmd help <kind>, or ${HELP_TOPIC_NAMES.join(", ")}.`,
    "More: waitcmd doctor; waitcmd completions bash|zsh|fish; waitcmd -V",
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

/** The topics of `waitcmd help <topic>`, besides the kinds. */
type HelpTopic = (typeof HELP_TOPIC_NAMES)[number];

const ENV_ROWS = Object.entries(ENV_DEFAULTS).map(([v, flag]) => `  ${v.padEnd(27)} --${flag}`);

const TOPICS: Readonly<Record<HelpTopic, string>> = {
  then: [
    "waitcmd help then - run a command once the wait succeeds",
    "",
    "  waitcmd <conditions> -- then <command> [args...]",
    "",
    "The command runs with waitcmd's stdin, stdout and stderr once every condition held, gets",
    "the signals waitcmd receives (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2), and",
    "waitcmd exits with its exit code. It never runs when the wait fails. It is the last",
    "segment: every word after `-- then` is the command's, so conditions go before it.",
    'No shell is involved: write the words separately (-- then npm test, not "npm test");',
    "for a shell, say so: -- then sh -c 'npm test && npm run lint'.",
    "",
    "Its environment adds WAITCMD_CAPTURE_<NAME> for each named group a --matches captured",
    "(waitcmd help captures) and WAITCMD_REPORT, the --report file, when one is given.",
    "A command that does not exist is a usage error (exit 2) before anything is probed.",
    "",
  ].join("\n"),
  recipe: [
    "waitcmd help recipe - waits written in a YAML or JSON file",
    "",
    "  waitcmd -f waits.yaml [global options] [-- more conditions]    (-f - reads stdin)",
    "",
    "  timeout: 2m                    # global options by their long names",
    "  conditions:",
    "    - kind: tcp",
    "      target: db:5432",
    "      label: database",
    "    - any:                       # a group in place of a condition",
    "        - kind: http",
    "          target: http://a:8080/health",
    "          flags: { status: 200 }",
    "        - kind: http",
    "          target: http://b:8080/health",
    "  guards:",
    "    - kind: log",
    "      target: /var/log/app.log",
    "      flags: { contains: FATAL }",
    "  then: [npm, test]              # a list of words, never one text",
    "",
    "Options on the command line win over the file's; its conditions come first. A mistake",
    "names the file and the line. Schema: docs/recipe.schema.json.",
    "",
  ].join("\n"),
  "exit-codes": [
    "waitcmd help exit-codes - what the exit code says",
    "",
    "  0    satisfied: every condition held (one with --mode any; as groups say)",
    "  1    timeout: the deadline passed, or exhausted: a condition used up --max-attempts",
    "       (--timeout-exit-code N replaces 1, e.g. 124 as timeout(1))",
    "  2    usage error: a bad option, flag, value, target or then; nothing was probed",
    "  3    fatal: a guard matched, a job or container failed, a command does not exist",
    "  129  cancelled by SIGHUP, 130 by SIGINT, 131 by SIGQUIT, 143 by SIGTERM",
    "  With -- then, waitcmd exits with the command's exit code.",
    "",
  ].join("\n"),
  environment: [
    "waitcmd help environment - defaults from the environment (a flag wins)",
    "",
    ...ENV_ROWS,
    "",
    "  NO_COLOR                    no colour on a terminal",
    "  GITHUB_ACTIONS=true         fold the progress lines, add an ::error line, and append",
    "                              a table to $GITHUB_STEP_SUMMARY",
    "  GITLAB_CI=true              fold the progress lines in a collapsed section",
    "  WAITCMD_CI=off              none of the CI folding",
    "  WAITCMD_MEMORY_CAP=512M     memory cap while drivers and parsers run in their workers:",
    "                              near it, the workers at work are stopped (pending attempts)",
    "  WAITCMD_DEBUG=1             an internal error prints its stack trace too",
    "  WAITCMD_TRACE_STARTUP=1     time marks of the start-up on stderr (docs/performance.md)",
    "  A bad value is a usage error naming the variable.",
    "",
    "  waitcmd sets WAITCMD_CAPTURE_<NAME> and WAITCMD_REPORT for the command of then",
    "  (waitcmd help then, waitcmd help captures).",
    "",
  ].join("\n"),
  output: [
    "waitcmd help output - what waitcmd prints",
    "",
    "  --output text   (default) progress on stderr, stdout empty: waitcmd ... && next",
    "                  a line per attempt; --progress changes: a line when a condition's state",
    "                  or error changes and a heartbeat every 30s; --quiet: the summary only;",
    "                  on a terminal, a live view",
    "  --output json   one JSON report on stdout at the end (docs/report.schema.json);",
    "                  stderr stays empty",
    "  --output jsonl  one JSON event per line on stdout as the run goes",
    "  --report FILE   also write the JSON report to FILE, whatever --output is",
    "  --explain       print the plan, probe nothing",
    "",
    "A failure users often meet (a name that does not resolve, a server on the other IP family,",
    "a certificate for another name, 401/403, a missing kubeconfig context, socket or bus) gets",
    '"(hint: …)" after its error: what to fix. The JSON report has it as "hint".',
    "In GitHub Actions and GitLab CI the progress lines fold (waitcmd help environment).",
    "",
  ].join("\n"),
  groups: [
    "waitcmd help groups - any [ … ] and all [ … ]",
    "",
    "  waitcmd tcp db:5432 -- any [ http http://a/health -- http http://b/health ]",
    "",
    "A group takes the place of one condition: any needs one member, all needs every member;",
    "groups nest, up to 100 deep. [ and ] are words of their own; --label TEXT after ] names",
    "the group.",
    "guard inside a group still ends the whole run; not before a group is not allowed",
    "(not any [ A -- B ] is all [ not A -- not B ]). --mode is the run's own group.",
    'The JSON report lists the conditions with "group": the path of their groups (2.any).',
    "",
  ].join("\n"),
  captures: [
    "waitcmd help captures - pass what a condition matched to then",
    "",
    "  waitcmd log app.log --matches 'listening on :(?P<port>\\d+)' \\",
    "    -- then sh -c 'echo \"up on $WAITCMD_CAPTURE_PORT\"'",
    "",
    "--matches (log, http, websocket, udp) captures its groups, named (?P<name>…) or",
    '(?<name>…); --jsonpath (http, orch) captures the value it compared as "value".',
    "The JSON report has them all in conditions[].captures; then gets each named group as",
    "WAITCMD_CAPTURE_<NAME> (upper case, other characters as _). Two named groups that give",
    "one variable (the same name, or port and PORT) are a usage error. A value no environment",
    "can hold (a NUL byte, over 128 KiB), or that holds bytes that are not UTF-8, is not passed:",
    "the run stays satisfied, then is not started, and waitcmd exits 3 naming the variable.",
    "",
  ].join("\n"),
  start: [
    "waitcmd help start - start the services the wait is for, stop them at the end",
    "",
    "  # CI: start the API, wait for it and the database, run the tests, stop the API",
    "  waitcmd --start 'npm run start:api' http http://localhost:8080/health \\",
    '    -- postgres "$DATABASE_URL" -- then npm test',
    "  # compose's up --wait for any command: returns once it answers, leaves it running",
    "  waitcmd --start './bin/server --port 9000' --start-log server.log tcp localhost:9000",
    "  # capture where it listens from its own log",
    "  waitcmd --start 'python3 -m http.server 0' --start-log srv.log \\",
    "    log srv.log --matches 'port (?P<port>\\d+)' \\",
    "    -- then sh -c 'curl localhost:$WAITCMD_CAPTURE_PORT'",
    "",
    "--start CMD (repeatable; recipe key start, a list) is split into words as a shell would",
    "(quotes and backslashes; no variables, no globs, no shell): write sh -c '...' for a shell.",
    "Each command starts once every condition took its starting point (a log's end of file),",
    "before the first attempt, in a session of its own, stdin from /dev/null. Its output goes",
    "to --start-log FILE (appended to), else to stderr as [start N] lines (text mode; in JSON",
    "mode only the report's tail has it). Secrets are masked in every line shown.",
    "The commands get PYTHONUNBUFFERED=1 (unless set), so Python's lines are not held back.",
    "",
    "  A command that exits before the conditions hold ends the run at once: exit 3,",
    "    start N (<command>) exited with code C before the conditions held",
    "  With -- then: the commands are stopped once then ends; waitcmd exits with then's code.",
    "  Without then: on success they keep running on their own; their output goes to",
    "    --start-log, else to waitcmd-start-N.log in the temporary directory (path printed).",
    "  On a timeout, a fatal end or a signal: they are stopped before waitcmd exits.",
    "  Stopping: SIGTERM to the command's process group (what it forked too), then SIGKILL",
    "    after --stop-grace (default 5s; WAITCMD_STOP_GRACE).",
    "",
    'The JSON report lists them in "started": command, pid, status (running, exited with',
    "exit_code, stopped), the last 20 output lines as tail, and log, the file of the output.",
    "",
  ].join("\n"),
};
