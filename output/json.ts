/**
 * The machine-readable outputs: the final JSON report (`--output json`) and
 * the event stream (`--output jsonl`), with the fields of docs/contract.md §7
 * (docs/report.schema.json).
 *
 * @module
 */

import type { ConditionReport, Report, RunEvent, StartedReport } from "../engine/report.ts";
import { type Redact, redactDeep, redactOutside } from "./redact.ts";
import { shownOptions } from "../engine/options.ts";

/** One condition in the JSON report. */
export interface JsonCondition {
  name: string;
  kind: string;
  target: string;
  guard: boolean;
  satisfied: boolean;
  attempts: number;
  detail: string;
  last_error: string;
  /** What is likely wrong and how to fix it (docs/contract.md §7); "" when no hint applies. */
  hint: string;
  fatal: boolean;
  exhausted: boolean;
  elapsed_seconds: number | null;
  captures: Readonly<Record<string, string>>;
  /** The path of its groups; absent outside every group. */
  group?: string;
}

/** The JSON report. */
export interface JsonReport {
  status: string;
  elapsed_seconds: number;
  mode: string;
  /** null: no deadline (`--timeout 0` / `none`). */
  timeout_seconds: number | null;
  conditions: JsonCondition[];
  /** What ended a fatal run that no condition decided (a started command's exit). */
  error?: string;
  /** The `--start` commands (docs/contract.md §7); absent without `--start`. */
  started?: JsonStarted[];
}

/** One `--start` command in the JSON report. */
export interface JsonStarted {
  command: string;
  pid: number;
  status: "running" | "exited" | "stopped";
  /** Only for `exited`. */
  exit_code?: number;
  tail: string[];
  /** The file its output went to; null: only waitcmd's stderr had it. */
  log: string | null;
}

const seconds = (ms: number): number => Math.round(ms) / 1000;
/** Seconds of a limit that may be absent (Infinity: none). */
const limitSeconds = (ms: number): number | null => Number.isFinite(ms) ? seconds(ms) : null;

/** The report as the JSON document of docs/contract.md §7 (secrets removed). */
export function jsonReport(report: Report, redact: Redact): JsonReport {
  return redactDeep({
    status: report.status,
    elapsed_seconds: seconds(report.elapsedMs),
    mode: report.mode,
    timeout_seconds: limitSeconds(report.timeoutMs),
    conditions: report.conditions.map((c) => jsonCondition(c, redact)),
    ...(report.failure === undefined ? {} : { error: report.failure }),
    ...(report.started === undefined
      ? {}
      : { started: report.started.map((s) => jsonStarted(s, redact)) }),
  }, redact);
}

/** One started command as JSON; its output's tail is text from outside (docs/contract.md §9). */
function jsonStarted(s: StartedReport, redact: Redact): JsonStarted {
  return {
    command: s.command,
    pid: s.pid,
    status: s.status,
    ...(s.exitCode === undefined ? {} : { exit_code: s.exitCode }),
    tail: s.tail.map((l) => redactOutside(l, redact)),
    log: s.log ?? null,
  };
}

/**
 * One condition of the report as JSON. Its captures are masked by value here: `then` gets them
 * as matched, so they come in unmasked (docs/contract.md §9).
 */
function jsonCondition(c: ConditionReport, redact: Redact): JsonCondition {
  const out: JsonCondition = {
    name: c.name,
    kind: c.kind,
    target: c.target,
    guard: c.guard,
    satisfied: c.satisfied,
    attempts: c.attempts,
    detail: c.detail,
    last_error: c.lastError,
    hint: c.hint ?? "",
    fatal: c.fatal,
    exhausted: c.exhausted,
    elapsed_seconds: c.elapsedMs === null ? null : seconds(c.elapsedMs),
    captures: maskCaptures(c.captures, redact),
  };
  if (c.group !== undefined) out.group = c.group;
  return out;
}

/** Captures with the run's secrets masked by value (`redactOutside`). */
function maskCaptures(
  captures: Readonly<Record<string, string>>,
  redact: Redact,
): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(captures)) out[k] = redactOutside(v, redact);
  return out;
}

/** The report serialised: one document, one trailing newline. */
export function renderJsonReport(report: Report, redact: Redact): string {
  return JSON.stringify(jsonReport(report, redact), null, 2) + "\n";
}

/** One `--output jsonl` line for an event, or undefined for events that stream does not carry. */
export function renderJsonlEvent(event: RunEvent, redact: Redact): string | undefined {
  let obj: Record<string, unknown>;
  switch (event.type) {
    case "start": {
      const o = event.plan.options;
      obj = {
        event: "start",
        conditions: event.plan.conditions.map((c) => ({
          name: c.name,
          kind: c.kind.name,
          target: c.target,
          guard: c.guard,
          ...(c.group === undefined ? {} : { group: c.group }),
        })),
        options: shownOptions(o, true),
      };
      break;
    }
    case "attempt":
      obj = {
        event: "attempt",
        condition: event.condition.name,
        attempt: event.attempt,
        ok: event.result.status === "satisfied",
        detail: event.result.status === "satisfied" ? event.result.detail : "",
        error: event.result.status === "satisfied" ? "" : event.result.error,
        ...(event.result.status !== "satisfied" && event.result.hint !== undefined
          ? { hint: event.result.hint }
          : {}),
        elapsed_seconds: seconds(event.elapsedMs),
      };
      break;
    case "satisfied":
      obj = {
        event: "satisfied",
        condition: event.condition.name,
        elapsed_seconds: seconds(event.elapsedMs),
      };
      break;
    case "guard":
      obj = {
        event: "guard",
        condition: event.condition.name,
        detail: event.detail,
        elapsed_seconds: seconds(event.elapsedMs),
      };
      break;
    case "group":
      obj = {
        event: "group",
        group: event.group.name,
        path: event.group.path,
        held: event.held,
        elapsed_seconds: seconds(event.elapsedMs),
      };
      break;
    case "exhausted":
      obj = {
        event: "exhausted",
        condition: event.condition.name,
        elapsed_seconds: seconds(event.elapsedMs),
      };
      break;
    case "end":
      obj = { event: "end", ...jsonReport(event.report, redact) };
      break;
    case "notice":
      return undefined;
  }
  return JSON.stringify(redactDeep(obj, redact)) + "\n";
}
