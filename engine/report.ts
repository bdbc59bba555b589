/**
 * What a run tells the outside: its events as they happen and its final
 * report (docs/contract.md §6, §7). The output renderers consume these; the
 * runner makes them.
 *
 * @module
 */

import type { ConditionPlan, GroupNode, Plan } from "./plan.ts";
import type { ProbeResult } from "./types.ts";

/** How a run ended. */
export type RunStatus = "satisfied" | "timeout" | "exhausted" | "fatal" | "cancelled";

/** One condition in the final report. */
export interface ConditionReport {
  readonly index: number;
  readonly name: string;
  readonly kind: string;
  readonly target: string;
  readonly guard: boolean;
  /** Held at the end (for a guard: it matched). */
  readonly satisfied: boolean;
  readonly attempts: number;
  /** Outcome text of the last successful attempt (for log: the matched line). */
  readonly detail: string;
  /** Text of the last failed attempt; "" when there was none. */
  readonly lastError: string;
  /** What is likely wrong and how to fix it, for the last failed attempt; absent: no hint. */
  readonly hint?: string;
  /** This condition ended the run with exit 3. */
  readonly fatal: boolean;
  /** It used up `--max-attempts` without holding. */
  readonly exhausted: boolean;
  /** It made no more attempts once its group was decided. */
  readonly stopped: boolean;
  /** Run time at which it became satisfied, if it did. */
  readonly elapsedMs: number | null;
  /** What its satisfying attempt captured (docs/contract.md §7, captures); {} when nothing. */
  readonly captures: Readonly<Record<string, string>>;
  /** The path of its groups (`2.any`), undefined outside every group. */
  readonly group: string | undefined;
  /** The name of its innermost group, undefined outside every group. */
  readonly groupName: string | undefined;
}

/** The outcome of a run. */
export interface Report {
  readonly status: RunStatus;
  readonly elapsedMs: number;
  readonly mode: "all" | "any";
  readonly timeoutMs: number;
  readonly conditions: readonly ConditionReport[];
  /** The condition that decided a `fatal` run, or the first satisfied one in mode any. */
  readonly decidedBy: number | undefined;
  /** Why the run was cancelled (`SIGINT`, `SIGTERM`), if it was. */
  readonly signal: string | undefined;
  /** What ended a `fatal` run that no condition decided (a started command's exit). */
  readonly failure?: string;
  /** The commands `--start` started; absent without `--start` (docs/contract.md §7). */
  readonly started?: readonly StartedReport[];
}

/** One `--start` command in the report. */
export interface StartedReport {
  /** 1-based, as in `[start N]`. */
  readonly index: number;
  /** The command as given (the output masks its secrets). */
  readonly command: string;
  readonly pid: number;
  /** `running`: left running (or handed to `then`); `exited` on its own; `stopped` by waitcmd. */
  readonly status: "running" | "exited" | "stopped";
  /** The exit code of an `exited` command (128 + n when a signal ended it). */
  readonly exitCode?: number;
  /** Its last output lines (at most 20), oldest first. */
  readonly tail: readonly string[];
  /** The file its output went to, if any. */
  readonly log?: string;
}

/** Progress of a stability streak that is not complete yet. */
export interface Streak {
  readonly successes: number;
  readonly required: number;
  readonly stableMs: number;
  readonly requiredMs: number;
}

/** What happens during a run, in order. Output renderers consume these. */
export type RunEvent =
  | { readonly type: "start"; readonly plan: Plan }
  | {
    readonly type: "attempt";
    readonly condition: ConditionPlan;
    readonly attempt: number;
    readonly result: ProbeResult;
    readonly elapsedMs: number;
    /** This attempt made the condition satisfied (or, for a guard, matched). */
    readonly decisive: boolean;
    /** Set when the attempt succeeded but `--successes`/`--stable-for` are not met yet. */
    readonly streak: Streak | undefined;
  }
  | { readonly type: "satisfied"; readonly condition: ConditionPlan; readonly elapsedMs: number }
  | {
    readonly type: "guard";
    readonly condition: ConditionPlan;
    readonly detail: string;
    readonly elapsedMs: number;
  }
  /** A group (not the run itself) was decided: it holds, or can no longer hold. */
  | {
    readonly type: "group";
    readonly group: GroupNode;
    readonly held: boolean;
    readonly elapsedMs: number;
  }
  /** A condition used up `--max-attempts`. */
  | { readonly type: "exhausted"; readonly condition: ConditionPlan; readonly elapsedMs: number }
  | { readonly type: "notice"; readonly condition: ConditionPlan; readonly message: string }
  | { readonly type: "end"; readonly report: Report };
