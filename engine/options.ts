/**
 * The run-level flags, each declared once (`RUN_FLAGS`): its flag (name,
 * short form, type, help), the option it sets and that option's default, the
 * `WAITCMD_*` variable that may supply it, whether a recipe may set it (its
 * key is the flag's name), and how `--explain` and the jsonl start event show
 * it. Parsing, environment defaults, recipes, help, completions and those
 * outputs all read the declarations (docs/development.md, "Adding a
 * run-level flag"). Also the flags every condition takes.
 *
 * @module
 */

import type { FlagValue } from "./flag_values.ts";
import type { FlagSpec } from "./types.ts";
import { parseBackoffFactor, parseJitter, type StartCommand, startCommand } from "./run_values.ts";

export type { StartCommand } from "./run_values.ts";

/** Output formats of `--output`. */
export type OutputFormat = "text" | "json" | "jsonl";

/** The run's settings, after validation and defaults. */
export interface RunOptions {
  /** `Infinity` with `--timeout 0` / `none`: no global deadline. */
  readonly timeoutMs: number;
  readonly intervalMs: number;
  /** How pauses grow after failed attempts of a condition (docs/contract.md §4). */
  readonly backoff: "constant" | "exponential";
  /** Longest pause under exponential backoff. */
  readonly maxIntervalMs: number;
  /** What each pause is multiplied by after a failed attempt, under exponential backoff (≥ 1). */
  readonly backoffFactor: number;
  /** Each pause is spread by up to ± this fraction (0 to 1). */
  readonly jitter: number;
  /** No attempt starts before this much time has passed. */
  readonly delayMs: number;
  /** Undefined: no per-attempt limit. */
  readonly attemptTimeoutMs: number | undefined;
  readonly mode: "all" | "any";
  readonly successes: number;
  readonly stableForMs: number;
  /** `--max-attempts`: a condition that fails this many attempts gives up; undefined: no limit. */
  readonly maxAttempts: number | undefined;
  /** The exit code of a timeout or an exhausted run (`--timeout-exit-code`, default 1). */
  readonly timeoutExitCode: number;
  /** `--progress`: a line per attempt, or only when a condition's state or error changes. */
  readonly progress: "attempts" | "changes";
  readonly output: OutputFormat;
  readonly quiet: boolean;
  /** `--no-color` given. */
  readonly noColor: boolean;
  /** `--explain`: print the plan and probe nothing. */
  readonly explain: boolean;
  /** `--report FILE`: the JSON report is also written there. */
  readonly reportFile: string | undefined;
  /** `--start CMD` (repeatable): the commands the run starts, in order (docs/contract.md §4). */
  readonly start: readonly StartCommand[];
  /** `--start-log FILE`: where the started commands' output goes; undefined: stderr / a temp file. */
  readonly startLog: string | undefined;
  /** `--stop-grace`: how long a started command has between SIGTERM and SIGKILL. */
  readonly stopGraceMs: number;
}

/** How an option shows in `--explain`'s JSON (and, with `event`, the jsonl start event). */
export interface OptionShown {
  /** The JSON key (`interval_seconds`). */
  readonly key: string;
  readonly value: (o: RunOptions) => unknown;
  /** Also in the jsonl `start` event's options. */
  readonly event?: boolean;
}

/** A run-level flag and everything that follows from it. */
export interface RunFlag extends FlagSpec {
  /** The option it sets; none for a flag that only steers the command line (`--config`). */
  readonly option?: keyof RunOptions;
  /** The option's value when neither the flag nor its variable is given. */
  readonly default?: unknown;
  /** The `WAITCMD_*` variable that supplies it when the flag is not given (a flag wins). */
  readonly env?: string;
  /** The option from the flag's typed value (every value of a repeatable flag), if not that value. */
  readonly read?: (value: FlagValue | readonly string[]) => unknown;
  /** Not a recipe key: only the command line may give it. */
  readonly cliOnly?: boolean;
  /**
   * The recipe key's JSON Schema where the flag's type does not say it all (a text read by
   * `read`, `none`); docs/recipe.schema.json is made from the declarations.
   */
  readonly recipeSchema?: Readonly<Record<string, unknown>>;
  readonly shown?: OptionShown;
}

/** The option a flag sets and its default, type-checked against `RunOptions`. */
function sets<K extends keyof RunOptions>(option: K, value: RunOptions[K]) {
  return { option, default: value };
}

/** Milliseconds as the JSON outputs give them: seconds, null for no limit. */
const secs = (ms: number): number | null => Number.isFinite(ms) ? Math.round(ms) / 1000 : null;

/** Every run-level flag, in the order help lists them. */
export const RUN_FLAGS: readonly RunFlag[] = [
  {
    name: "timeout",
    short: "t",
    type: "duration",
    placeholder: "DURATION",
    description:
      "Deadline for the whole run (default 5m; 0 or none: no deadline); exit 1 when it passes",
    ...sets("timeoutMs", 5 * 60_000),
    env: "WAITCMD_TIMEOUT",
    recipeSchema: { anyOf: [{ $ref: "#/$defs/duration" }, { const: "none" }] },
    shown: { key: "timeout_seconds", value: (o) => secs(o.timeoutMs), event: true },
  },
  {
    name: "interval",
    short: "i",
    type: "duration",
    placeholder: "DURATION",
    description: "Pause between attempts of a condition (default 2s)",
    ...sets("intervalMs", 2000),
    env: "WAITCMD_INTERVAL",
    shown: { key: "interval_seconds", value: (o) => secs(o.intervalMs), event: true },
  },
  {
    name: "attempt-timeout",
    type: "duration",
    placeholder: "DURATION",
    description: "Abort one attempt after this long and retry (default: no limit)",
    ...sets("attemptTimeoutMs", undefined),
    env: "WAITCMD_ATTEMPT_TIMEOUT",
    shown: {
      key: "attempt_timeout_seconds",
      value: (o) => o.attemptTimeoutMs === undefined ? null : secs(o.attemptTimeoutMs),
      event: true,
    },
  },
  {
    name: "backoff",
    type: "enum",
    values: ["constant", "exponential"],
    placeholder: "constant|exponential",
    description:
      "exponential: double the pause (or multiply it by --backoff-factor) after each failed attempt, up to --max-interval",
    ...sets("backoff", "constant"),
    shown: { key: "backoff", value: (o) => o.backoff, event: true },
  },
  {
    name: "backoff-factor",
    type: "string",
    placeholder: "F",
    description:
      "What each pause is multiplied by under exponential backoff (default 2; a number of at least 1, like 1.5)",
    ...sets("backoffFactor", 2),
    read: (v) => parseBackoffFactor(v as string),
    recipeSchema: {
      anyOf: [{ type: "number", minimum: 1 }, { type: "string", pattern: "^[0-9]*\\.?[0-9]+$" }],
    },
    shown: { key: "backoff_factor", value: (o) => o.backoffFactor, event: true },
  },
  {
    name: "max-interval",
    type: "duration",
    placeholder: "DURATION",
    description: "Longest pause under exponential backoff (default 30s)",
    ...sets("maxIntervalMs", 30_000),
    shown: { key: "max_interval_seconds", value: (o) => secs(o.maxIntervalMs), event: true },
  },
  {
    name: "jitter",
    type: "string",
    placeholder: "PERCENT",
    description: "Spread each pause by up to ± this much (20% or 0.2), so runs do not poll in step",
    ...sets("jitter", 0),
    read: (v) => parseJitter(v as string),
    recipeSchema: { type: ["string", "number"], pattern: "^([0-9]+(\\.[0-9]+)?|\\.[0-9]+)%?$" },
    shown: { key: "jitter", value: (o) => o.jitter, event: true },
  },
  {
    name: "delay",
    type: "duration",
    placeholder: "DURATION",
    description: "Wait this long before the first attempts (default 0)",
    ...sets("delayMs", 0),
    shown: { key: "delay_seconds", value: (o) => secs(o.delayMs), event: true },
  },
  {
    name: "mode",
    type: "enum",
    values: ["all", "any"],
    placeholder: "all|any",
    description: "all: every condition must hold (default); any: one is enough",
    ...sets("mode", "all"),
    env: "WAITCMD_MODE",
    shown: { key: "mode", value: (o) => o.mode, event: true },
  },
  {
    name: "successes",
    type: "integer",
    min: 1,
    placeholder: "N",
    description: "Consecutive successful attempts required per condition (default 1)",
    ...sets("successes", 1),
    shown: { key: "successes", value: (o) => o.successes, event: true },
  },
  {
    name: "stable-for",
    type: "duration",
    placeholder: "DURATION",
    description:
      "How long a condition must keep succeeding before it counts, sampled at least 5 times (default 0)",
    ...sets("stableForMs", 0),
    shown: { key: "stable_for_seconds", value: (o) => secs(o.stableForMs), event: true },
  },
  {
    name: "max-attempts",
    type: "integer",
    min: 1,
    placeholder: "N",
    description:
      "Give up on a condition after N failed attempts: the run ends with status exhausted (exit 1)",
    ...sets("maxAttempts", undefined),
    env: "WAITCMD_MAX_ATTEMPTS",
    shown: { key: "max_attempts", value: (o) => o.maxAttempts ?? null, event: true },
  },
  {
    name: "timeout-exit-code",
    type: "integer",
    min: 1,
    max: 125,
    // A timeout must not read as another outcome (docs/contract.md §3).
    reserved: { 2: "the exit code of a usage error", 3: "the exit code of a fatal run" },
    placeholder: "N",
    description:
      "Exit code of a timeout or an exhausted run (default 1; 124 as timeout(1); not 2 or 3)",
    ...sets("timeoutExitCode", 1),
    env: "WAITCMD_TIMEOUT_EXIT_CODE",
    shown: { key: "timeout_exit_code", value: (o) => o.timeoutExitCode },
  },
  {
    name: "progress",
    type: "enum",
    values: ["attempts", "changes"],
    placeholder: "attempts|changes",
    description:
      "attempts: a line per attempt (default); changes: a line when a condition's state or error changes, a heartbeat every 30s",
    ...sets("progress", "attempts"),
    env: "WAITCMD_PROGRESS",
    shown: { key: "progress", value: (o) => o.progress },
  },
  {
    name: "output",
    short: "o",
    type: "enum",
    values: ["text", "json", "jsonl"],
    placeholder: "text|json|jsonl",
    description: "text: progress on stderr (default); json: one report on stdout; jsonl: events",
    ...sets("output", "text"),
    env: "WAITCMD_OUTPUT",
    shown: { key: "output", value: (o) => o.output },
  },
  {
    name: "report",
    type: "string",
    placeholder: "FILE",
    complete: "file",
    description: "Also write the JSON report to FILE (atomically), whatever --output is",
    ...sets("reportFile", undefined),
    shown: { key: "report", value: (o) => o.reportFile ?? null },
  },
  {
    name: "start",
    type: "string",
    repeatable: true,
    placeholder: "CMD",
    description:
      "Start CMD (split as a shell would, no shell) before the first probe; its exit before the conditions hold is fatal (waitcmd help start)",
    ...sets("start", []),
    read: (v) => (v as readonly string[]).map(startCommand),
    shown: { key: "start", value: (o) => o.start.map((c) => c.shown) },
  },
  {
    name: "start-log",
    type: "string",
    placeholder: "FILE",
    complete: "file",
    description: "Append the started commands' output to FILE (default: [start N] lines on stderr)",
    ...sets("startLog", undefined),
    env: "WAITCMD_START_LOG",
    shown: { key: "start_log", value: (o) => o.startLog ?? null },
  },
  {
    name: "stop-grace",
    type: "duration",
    placeholder: "DURATION",
    description: "How long a started command has to stop after SIGTERM before SIGKILL (default 5s)",
    ...sets("stopGraceMs", 5000),
    env: "WAITCMD_STOP_GRACE",
    shown: { key: "stop_grace_seconds", value: (o) => secs(o.stopGraceMs) },
  },
  {
    name: "config",
    short: "f",
    type: "string",
    placeholder: "FILE",
    complete: "file",
    description: "Read options and conditions from a YAML or JSON recipe (- for stdin)",
    cliOnly: true,
  },
  {
    name: "explain",
    type: "boolean",
    description: "Validate and print the plan (--dry-run); probe nothing, exit 0",
    ...sets("explain", false),
    cliOnly: true,
  },
  {
    name: "quiet",
    short: "q",
    type: "boolean",
    description: "Print only the final summary line",
    ...sets("quiet", false),
  },
  {
    name: "no-color",
    type: "boolean",
    description: "Never colour the output (NO_COLOR is honoured too)",
    ...sets("noColor", false),
  },
];

/** Options that go before the first condition: the run-level flags. */
export const GLOBAL_FLAGS: readonly RunFlag[] = RUN_FLAGS;

/** Defaults of the spec (§2.3, §8), from the declarations. */
export const DEFAULT_OPTIONS: RunOptions = Object.fromEntries(
  RUN_FLAGS.filter((f) => f.option !== undefined).map((f) => [f.option, f.default]),
) as unknown as RunOptions;

/** Global options a variable of the environment may supply (a flag wins; docs/contract.md §1). */
export const ENV_DEFAULTS: Readonly<Record<string, string>> = Object.fromEntries(
  RUN_FLAGS.filter((f) => f.env !== undefined).map((f) => [f.env, f.name]),
);

/**
 * The options as `--explain`'s JSON shows them, or (`event`) as the jsonl start event does: the
 * declarations' keys, in their order.
 */
export function shownOptions(o: RunOptions, event = false): Record<string, unknown> {
  return Object.fromEntries(
    RUN_FLAGS.flatMap((f) =>
      f.shown === undefined || (event && !f.shown.event) ? [] : [[f.shown.key, f.shown.value(o)]]
    ),
  );
}

/** Other spellings of global options. */
export const GLOBAL_ALIASES: Readonly<Record<string, string>> = { "dry-run": "explain" };

/** Flags that every condition accepts, whatever its kind. */
export const COMMON_CONDITION_FLAGS: readonly FlagSpec[] = [
  {
    name: "label",
    type: "string",
    placeholder: "TEXT",
    description: "Display name of this condition in every output",
  },
  {
    name: "attempt-timeout",
    type: "duration",
    placeholder: "DURATION",
    description: "Abort one attempt of this condition after this long; wins over the global one",
  },
];
