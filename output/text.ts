/**
 * Human output (DECISIONS §6): the header, one `[..]`/`[ok]` line per
 * attempt, and the summary. Pure: events in, lines out; the caller writes
 * them to stderr.
 *
 * @module
 */

import { formatDuration, formatElapsed } from "../engine/duration.ts";
import type { Plan } from "../engine/plan.ts";
import type { ConditionReport, Report, RunEvent, Streak } from "../engine/report.ts";
import type { ProbeResult } from "../engine/types.ts";
import type { Redact } from "./redact.ts";

/** Colour functions; identity when colour is off. */
export interface Style {
  ok(s: string): string;
  wait(s: string): string;
  bad(s: string): string;
  bold(s: string): string;
}

/** No colour. */
export const plainStyle: Style = { ok: (s) => s, wait: (s) => s, bad: (s) => s, bold: (s) => s };

/** ANSI colours for a terminal. */
export const ansiStyle: Style = {
  ok: (s) => `\x1b[32m${s}\x1b[39m`,
  wait: (s) => `\x1b[33m${s}\x1b[39m`,
  bad: (s) => `\x1b[31m${s}\x1b[39m`,
  bold: (s) => `\x1b[1m${s}\x1b[22m`,
};

/** `waitcmd: waiting for 3 conditions (timeout 5m, interval 2s)`. */
export function headerLine(plan: Plan): string {
  const o = plan.options;
  const n = plan.conditions.length;
  const parts = [
    Number.isFinite(o.timeoutMs) ? `timeout ${formatDuration(o.timeoutMs)}` : "no timeout",
    `interval ${formatDuration(o.intervalMs)}`,
  ];
  if (o.backoff === "exponential") {
    parts.push(`exponential backoff to ${formatDuration(o.maxIntervalMs)}`);
  }
  if (o.jitter > 0) parts.push(`jitter ${Math.round(o.jitter * 100)}%`);
  if (o.delayMs > 0) parts.push(`delay ${formatDuration(o.delayMs)}`);
  if (o.mode === "any") parts.push("mode any");
  if (o.successes > 1) parts.push(`${o.successes} successes`);
  if (o.stableForMs > 0) parts.push(`stable for ${formatDuration(o.stableForMs)}`);
  return `waitcmd: waiting for ${n} condition${n === 1 ? "" : "s"} (${parts.join(", ")})`;
}

/** `ok, 1/3 successes, stable 2.0s/10s` for a success that does not count yet. */
export function streakText(s: Streak): string {
  const parts: string[] = [];
  if (s.required > 1) parts.push(`${s.successes}/${s.required} successes`);
  if (s.requiredMs > 0) {
    parts.push(`stable ${formatElapsed(s.stableMs)}/${formatDuration(s.requiredMs)}`);
  }
  return ["ok", ...parts].join(", ");
}

/** The text after `name attempt N (Xs): ` for a non-decisive attempt. */
export function attemptText(result: ProbeResult, streak: Streak | undefined): string {
  if (result.status === "satisfied") return streak ? streakText(streak) : "ok";
  return result.error;
}

/** The line for one attempt, or undefined when the summary says it better. */
export function attemptLine(
  e: Extract<RunEvent, { type: "attempt" }>,
  style: Style = plainStyle,
): string | undefined {
  const head = `${e.condition.name} attempt ${e.attempt} (${formatElapsed(e.elapsedMs)})`;
  if (e.result.status === "fatal") return undefined;
  if (e.decisive) {
    if (e.condition.guard) return undefined;
    const shown = e.result.status === "satisfied" ? e.result.summary ?? e.result.detail : "";
    const detail = shown ? `: ${shown}` : "";
    return `${style.ok("[ok]")} ${head}${detail}`;
  }
  return `${style.wait("[..]")} ${head}: ${attemptText(e.result, e.streak)}`;
}

/** `any[…]: tcp a:1` for a condition inside a group, its name alone outside. */
function placed(c: ConditionReport): string {
  return c.groupName === undefined ? c.name : `${c.groupName}: ${c.name}`;
}

/**
 * The conditions a run that ended undecided still waited for: the non-guard ones not
 * satisfied, and not stopped because their group held.
 */
function waitedFor(report: Report): ConditionReport[] {
  return report.conditions.filter((c) => !c.guard && !c.satisfied && !c.stopped);
}

/** The final summary, one or more lines. */
export function summaryLines(report: Report, style: Style = plainStyle): string[] {
  const wanted = report.conditions.filter((c) => !c.guard);
  const elapsed = formatElapsed(report.elapsedMs);
  const decider = report.conditions.find((c) => c.index === report.decidedBy);
  const why = (c: ConditionReport) => c.lastError || "no attempt finished";
  switch (report.status) {
    case "satisfied":
      if (report.mode === "any" && decider) {
        return [style.ok(`waitcmd: satisfied in ${elapsed} (mode any: ${decider.name})`)];
      }
      return [
        style.ok(
          `waitcmd: satisfied in ${elapsed} (${
            wanted.filter((c) => c.satisfied).length
          }/${wanted.length} conditions)`,
        ),
      ];
    case "timeout": {
      const pending = waitedFor(report);
      const head = `waitcmd: timed out after ${formatDuration(report.timeoutMs)}`;
      if (pending.length === 0) return [style.bad(head)];
      return pending.map((c) => style.bad(`${head}; not satisfied: ${placed(c)}: ${why(c)}`));
    }
    case "exhausted":
      return report.conditions.filter((c) => c.exhausted).map((c) =>
        style.bad(
          `waitcmd: gave up on ${placed(c)} after ${c.attempts} attempt${
            c.attempts === 1 ? "" : "s"
          }: ${why(c)}`,
        )
      );
    case "fatal": {
      if (decider?.guard) {
        return [style.bad(`waitcmd: guard ${decider.name} matched: ${decider.detail}`)];
      }
      if (decider) return [style.bad(`waitcmd: fatal: ${decider.name}: ${decider.lastError}`)];
      return [style.bad("waitcmd: fatal")];
    }
    case "cancelled": {
      const by = report.signal ? ` by ${report.signal}` : "";
      const pending = waitedFor(report).map(placed);
      const rest = pending.length ? `; not satisfied: ${pending.join(", ")}` : "";
      return [style.bad(`waitcmd: cancelled${by} after ${elapsed}${rest}`)];
    }
  }
}

/** `[ok] any[tcp a:1, tcp b:2] (1.2s)`: a group that holds. */
export function groupLine(e: Extract<RunEvent, { type: "group" }>, style: Style = plainStyle) {
  return e.held ? `${style.ok("[ok]")} ${e.group.name} (${formatElapsed(e.elapsedMs)})` : undefined;
}

/**
 * Renders events as scrolling lines (the non-terminal human mode).
 *
 * Event-driven kinds may attempt many times per second on a busy target; a
 * pending line that says the same as the last one printed for its condition
 * less than an interval ago is therefore dropped. Polled attempts are at
 * least an interval apart, so each of them is still printed.
 */
export class LineRenderer {
  #intervalMs = 0;
  #lastPending = new Map<number, { text: string; at: number }>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly redact: Redact,
    private readonly opts: { quiet: boolean; style: Style },
  ) {}

  /** Consumes one run event. */
  onEvent(e: RunEvent): void {
    const out = (line: string | undefined) => {
      if (line !== undefined) this.write(this.redact(line));
    };
    if (e.type === "end") return summaryLines(e.report, this.opts.style).forEach(out);
    if (this.opts.quiet) return;
    switch (e.type) {
      case "start":
        this.#intervalMs = e.plan.options.intervalMs;
        return out(headerLine(e.plan));
      case "attempt": {
        if (!e.decisive && e.result.status !== "fatal") {
          const text = attemptText(e.result, e.streak);
          const last = this.#lastPending.get(e.condition.index);
          // 10% slack: timers and clocks may round a full interval down a little.
          if (last && last.text === text && e.elapsedMs - last.at < this.#intervalMs * 0.9) return;
          this.#lastPending.set(e.condition.index, { text, at: e.elapsedMs });
        }
        return out(attemptLine(e, this.opts.style));
      }
      case "group":
        return out(groupLine(e, this.opts.style));
      case "notice":
        return out(`waitcmd: ${e.condition.name}: ${e.message}`);
    }
  }
}
