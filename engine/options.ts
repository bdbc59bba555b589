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
  readonly timeoutMs: number;
  readonly intervalMs: number;
  /** Undefined: no per-attempt limit. */
  readonly attemptTimeoutMs: number | undefined;
  readonly mode: "all" | "any";
  readonly successes: number;
  readonly stableForMs: number;
  readonly output: OutputFormat;
  readonly quiet: boolean;
  /** `--no-color` given. */
  readonly noColor: boolean;
}

/** Defaults of the spec (§2.3, §8). */
export const DEFAULT_OPTIONS: RunOptions = {
  timeoutMs: 5 * 60_000,
  intervalMs: 2000,
  attemptTimeoutMs: undefined,
  mode: "all",
  successes: 1,
  stableForMs: 0,
  output: "text",
  quiet: false,
  noColor: false,
};

/** Options that go before the first condition. */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  {
    name: "timeout",
    type: "duration",
    placeholder: "DURATION",
    description: "Deadline for the whole run (default 5m); exit 1 when it passes",
  },
  {
    name: "interval",
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
    description: "How long a condition must keep succeeding before it counts (default 0)",
  },
  {
    name: "output",
    type: "enum",
    values: ["text", "json", "jsonl"],
    placeholder: "text|json|jsonl",
    description: "text: progress on stderr (default); json: one report on stdout; jsonl: events",
  },
  {
    name: "quiet",
    type: "boolean",
    description: "Print only the final summary line",
  },
  {
    name: "no-color",
    type: "boolean",
    description: "Never colour the output (NO_COLOR is honoured too)",
  },
];

/** Flags that every condition accepts, whatever its kind. */
export const COMMON_CONDITION_FLAGS: readonly FlagSpec[] = [
  {
    name: "label",
    type: "string",
    placeholder: "TEXT",
    description: "Display name of this condition in every output",
  },
];
