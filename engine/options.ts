/**
 * Global options and the flags every condition takes, declared like a kind's
 * flags so that help and completions derive from them too.
 *
 * @module
 */

import type { FlagSpec } from "./types.ts";

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

/** One `--start` command: its text as given and its words (engine/words.ts). */
export interface StartCommand {
  /** As given. */
  readonly text: string;
  readonly argv: readonly string[];
  /** As shown: its words quoted, its secrets masked where they stand (docs/contract.md §9). */
  readonly shown: string;
}

/** Defaults of the spec (§2.3, §8). */
export const DEFAULT_OPTIONS: RunOptions = {
  timeoutMs: 5 * 60_000,
  intervalMs: 2000,
  backoff: "constant",
  maxIntervalMs: 30_000,
  backoffFactor: 2,
  jitter: 0,
  delayMs: 0,
  attemptTimeoutMs: undefined,
  mode: "all",
  successes: 1,
  stableForMs: 0,
  maxAttempts: undefined,
  timeoutExitCode: 1,
  progress: "attempts",
  output: "text",
  quiet: false,
  noColor: false,
  explain: false,
  reportFile: undefined,
  start: [],
  startLog: undefined,
  stopGraceMs: 5000,
};

/** Global options a variable of the environment may supply (a flag wins; docs/contract.md §1). */
export const ENV_DEFAULTS: Readonly<Record<string, string>> = {
  WAITCMD_TIMEOUT: "timeout",
  WAITCMD_INTERVAL: "interval",
  WAITCMD_ATTEMPT_TIMEOUT: "attempt-timeout",
  WAITCMD_OUTPUT: "output",
  WAITCMD_MODE: "mode",
  WAITCMD_MAX_ATTEMPTS: "max-attempts",
  WAITCMD_TIMEOUT_EXIT_CODE: "timeout-exit-code",
  WAITCMD_PROGRESS: "progress",
  WAITCMD_START_LOG: "start-log",
  WAITCMD_STOP_GRACE: "stop-grace",
};

/** Options that go before the first condition. */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  {
    name: "timeout",
    short: "t",
    type: "duration",
    placeholder: "DURATION",
    description:
      "Deadline for the whole run (default 5m; 0 or none: no deadline); exit 1 when it passes",
  },
  {
    name: "interval",
    short: "i",
    type: "duration",
    placeholder: "DURATION",
    description: "Pause between attempts of a condition (default 2s)",
  },
  {
    name: "attempt-timeout",
    type: "duration",
    placeholder: "DURATION",
    description: "Abort one attempt after this long and retry (default: no limit)",
  },
  {
    name: "backoff",
    type: "enum",
    values: ["constant", "exponential"],
    placeholder: "constant|exponential",
    description:
      "exponential: double the pause (or multiply it by --backoff-factor) after each failed attempt, up to --max-interval",
  },
  {
    name: "backoff-factor",
    type: "string",
    placeholder: "F",
    description:
      "What each pause is multiplied by under exponential backoff (default 2; a number of at least 1, like 1.5)",
  },
  {
    name: "max-interval",
    type: "duration",
    placeholder: "DURATION",
    description: "Longest pause under exponential backoff (default 30s)",
  },
  {
    name: "jitter",
    type: "string",
    placeholder: "PERCENT",
    description: "Spread each pause by up to ± this much (20% or 0.2), so runs do not poll in step",
  },
  {
    name: "delay",
    type: "duration",
    placeholder: "DURATION",
    description: "Wait this long before the first attempts (default 0)",
  },
  {
    name: "mode",
    type: "enum",
    values: ["all", "any"],
    placeholder: "all|any",
    description: "all: every condition must hold (default); any: one is enough",
  },
  {
    name: "successes",
    type: "integer",
    min: 1,
    placeholder: "N",
    description: "Consecutive successful attempts required per condition (default 1)",
  },
  {
    name: "stable-for",
    type: "duration",
    placeholder: "DURATION",
    description:
      "How long a condition must keep succeeding before it counts, sampled at least 5 times (default 0)",
  },
  {
    name: "max-attempts",
    type: "integer",
    min: 1,
    placeholder: "N",
    description:
      "Give up on a condition after N failed attempts: the run ends with status exhausted (exit 1)",
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
  },
  {
    name: "progress",
    type: "enum",
    values: ["attempts", "changes"],
    placeholder: "attempts|changes",
    description:
      "attempts: a line per attempt (default); changes: a line when a condition's state or error changes, a heartbeat every 30s",
  },
  {
    name: "output",
    short: "o",
    type: "enum",
    values: ["text", "json", "jsonl"],
    placeholder: "text|json|jsonl",
    description: "text: progress on stderr (default); json: one report on stdout; jsonl: events",
  },
  {
    name: "report",
    type: "string",
    placeholder: "FILE",
    complete: "file",
    description: "Also write the JSON report to FILE (atomically), whatever --output is",
  },
  {
    name: "start",
    type: "string",
    repeatable: true,
    placeholder: "CMD",
    description:
      "Start CMD (split as a shell would, no shell) before the first probe; its exit before the conditions hold is fatal (waitcmd help start)",
  },
  {
    name: "start-log",
    type: "string",
    placeholder: "FILE",
    complete: "file",
    description: "Append the started commands' output to FILE (default: [start N] lines on stderr)",
  },
  {
    name: "stop-grace",
    type: "duration",
    placeholder: "DURATION",
    description: "How long a started command has to stop after SIGTERM before SIGKILL (default 5s)",
  },
  {
    name: "config",
    short: "f",
    type: "string",
    placeholder: "FILE",
    complete: "file",
    description: "Read options and conditions from a YAML or JSON recipe (- for stdin)",
  },
  {
    name: "explain",
    type: "boolean",
    description: "Validate and print the plan (--dry-run); probe nothing, exit 0",
  },
  {
    name: "quiet",
    short: "q",
    type: "boolean",
    description: "Print only the final summary line",
  },
  {
    name: "no-color",
    type: "boolean",
    description: "Never colour the output (NO_COLOR is honoured too)",
  },
];

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
