/**
 * Human output (docs/contract.md §6): the header, one `[..]`/`[ok]` line per
 * attempt, and the summary. Pure: events in, lines out; the caller writes
 * them to stderr.
 *
 * @module
 */

import type { Clock } from "../engine/clock.ts";
import { formatDuration, formatElapsed } from "../engine/duration.ts";
import { cutText, GROUP_NAME_SHOWN, groupsOf, type Plan } from "../engine/plan.ts";
import type { ConditionReport, Report, RunEvent, Streak } from "../engine/report.ts";
import type { ProbeResult } from "../engine/types.ts";
import type { LineRedact, Redact } from "./redact.ts";

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

/** `3 conditions`, `1 guard`: a count and its noun, plural unless it is one. */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * What the header counts (docs/contract.md §6): the run's own members that are not guards, a
 * group counted once as the summary counts it, and the guards apart (wherever they stand).
 */
function planCounts(plan: Pick<Plan, "root" | "conditions">): {
  conditions: number;
  guards: number;
} {
  const conditions = plan.root.children.filter((n) => n.type === "group" || !n.condition.guard);
  return {
    conditions: conditions.length,
    guards: plan.conditions.filter((c) => c.guard).length,
  };
}

/**
 * The run's own members in the report that are not guards: a condition outside every group, or a
 * top-level group (all of whose members share the first step of their path, `2.any`), once.
 */
function reportMembers(report: Report): number {
  const members = new Set<string>();
  for (const c of report.conditions) {
    if (c.guard) continue;
    const top = c.group === undefined ? undefined : c.group.split(".", 2).join(".");
    members.add(top === undefined ? `#${c.index}` : top);
  }
  return members.size;
}

/** `waitcmd: waiting for 3 conditions (timeout 5m, interval 2s)`, `… 1 condition and 1 guard (…)`. */
export function headerLine(plan: Plan): string {
  const o = plan.options;
  const n = planCounts(plan);
  const parts = [
    Number.isFinite(o.timeoutMs) ? `timeout ${formatDuration(o.timeoutMs)}` : "no timeout",
    `interval ${formatDuration(o.intervalMs)}`,
  ];
  if (o.backoff === "exponential") {
    const factor = o.backoffFactor === 2 ? "" : ` ×${o.backoffFactor}`;
    parts.push(`exponential backoff${factor} to ${formatDuration(o.maxIntervalMs)}`);
  }
  if (o.jitter > 0) parts.push(`jitter ${Math.round(o.jitter * 100)}%`);
  if (o.delayMs > 0) parts.push(`delay ${formatDuration(o.delayMs)}`);
  if (o.mode === "any") parts.push("mode any");
  if (o.successes > 1) parts.push(`${o.successes} successes`);
  if (o.stableForMs > 0) parts.push(`stable for ${formatDuration(o.stableForMs)}`);
  const what = counted(n.conditions, "condition") +
    (n.guards > 0 ? ` and ${counted(n.guards, "guard")}` : "");
  return `waitcmd: waiting for ${what} (${parts.join(", ")})`;
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

/** `connection refused (hint: …)`: a failure's text and, when there is one, its hint. */
export function withHint(text: string, hint: string | undefined): string {
  return hint === undefined ? text : `${text} (hint: ${hint})`;
}

/** The line for one attempt, or undefined when the summary says it better. */
export function attemptLine(
  e: Extract<RunEvent, { type: "attempt" }>,
  style: Style = plainStyle,
): string | undefined {
  // A guard's line says so: its success ends the run as a failure (docs/contract.md §6).
  const name = e.condition.guard ? `guard ${e.condition.name}` : e.condition.name;
  const head = `${name} attempt ${e.attempt} (${formatElapsed(e.elapsedMs)})`;
  if (e.result.status === "fatal") return undefined;
  if (e.decisive) {
    if (e.condition.guard) return undefined;
    const shown = e.result.status === "satisfied" ? e.result.summary ?? e.result.detail : "";
    const detail = shown ? `: ${shown}` : "";
    return `${style.ok("[ok]")} ${head}${detail}`;
  }
  return `${style.wait("[..]")} ${head}: ${attemptText(e.result, e.streak)}`;
}

/**
 * `any[…]: tcp a:1` for a condition inside a group, its name alone outside. A group's label is
 * cut here as its natural name is (engine/plan.ts): every member's line repeats it.
 */
function placed(c: ConditionReport): string {
  return c.groupName === undefined
    ? c.name
    : `${cutText(c.groupName, GROUP_NAME_SHOWN)}: ${c.name}`;
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
  const elapsed = formatElapsed(report.elapsedMs);
  const decider = report.conditions.find((c) => c.index === report.decidedBy);
  const why = (c: ConditionReport) => withHint(c.lastError || "no attempt finished", c.hint);
  switch (report.status) {
    case "satisfied": {
      if (report.mode === "any" && decider) {
        return [style.ok(`waitcmd: satisfied in ${elapsed} (mode any: ${decider.name})`)];
      }
      // Satisfied under `all`: each of the run's own members held, a group counted once, as the
      // header counts them.
      const n = reportMembers(report);
      return [style.ok(`waitcmd: satisfied in ${elapsed} (${n}/${n} conditions)`)];
    }
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
      if (decider) return [style.bad(`waitcmd: fatal: ${decider.name}: ${why(decider)}`)];
      if (report.failure !== undefined) return [style.bad(`waitcmd: fatal: ${report.failure}`)];
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

/** How often `--progress changes` names what is still pending (docs/contract.md §6). */
export const HEARTBEAT_MS = 30_000;

/**
 * What folds the progress lines in a CI system's log (output/ci.ts): the lines that open the
 * fold (the header its title), close it, and the annotation after a failed run's summary.
 */
export interface Fold {
  open(header: string): string;
  close(): string;
  /** The annotation after the summary (`lines`: the summary, plain and redacted), if any. */
  annotation(report: Report, lines: readonly string[]): string | undefined;
}

/** What the line renderer is asked for besides its output. */
export interface LineOptions {
  readonly quiet: boolean;
  readonly style: Style;
  /** `--progress` (default `attempts`). */
  readonly progress?: "attempts" | "changes";
  /** The run's clock: the heartbeat of `--progress changes` sleeps on it. */
  readonly clock?: Clock;
  /** The CI system's fold, when the log is one's (output/ci.ts). */
  readonly fold?: Fold;
}

/** What the renderer last knew of a condition. */
interface Seen {
  /** Number of its latest finished attempt. */
  attempt: number;
  /** Text of its latest attempt that did not decide it (error or streak). */
  text: string;
  /** The hint of that attempt. */
  hint: string | undefined;
  /** The hint shown last (a hint is shown when it first appears or changes). */
  shownHint: string | undefined;
  /** `--progress attempts`: when the last pending line was printed, and its text. */
  printed: { text: string; at: number } | undefined;
  /** `--progress changes`: the state and error last printed. */
  state: string | undefined;
  /** It holds, gave up, or its group was decided: no longer waited for. */
  done: boolean;
}

/**
 * Renders events as scrolling lines (the non-terminal human mode).
 *
 * Event-driven kinds may attempt many times per second on a busy target; a
 * pending line that says the same as the last one printed for its condition
 * less than an interval ago is therefore dropped. Polled attempts are at
 * least an interval apart, so each of them is still printed. With
 * `--progress changes`, a condition's line is printed only when its state or
 * its error changes, and every 30 s a heartbeat repeats the line of each
 * condition still waited for (docs/contract.md §6). A hint is shown on the
 * first line that has it, and in every heartbeat.
 */
export class LineRenderer {
  #intervalMs = 0;
  #plan: Plan | undefined;
  #seen = new Map<number, Seen>();
  #start = 0;
  #beating: AbortController | undefined;
  #folded = false;

  /**
   * `write` gets a line, or, from a redactor with `lines` (output/redact.ts), the summary's
   * lines joined by newlines.
   */
  constructor(
    private readonly write: (line: string) => void,
    private readonly redact: Redact,
    private readonly opts: LineOptions,
  ) {}

  #out(line: string | undefined): void {
    if (line !== undefined) this.write(this.redact(line));
  }

  /**
   * A CI system's own marker line, whose control bytes (GitLab's ESC and CR) are the point: it
   * is written as it is, made from texts already redacted.
   */
  #marker(line: string | undefined): void {
    if (line !== undefined) this.write(line);
  }

  #of(index: number): Seen {
    let s = this.#seen.get(index);
    if (s === undefined) {
      s = {
        attempt: 0,
        text: "",
        hint: undefined,
        shownHint: undefined,
        printed: undefined,
        state: undefined,
        done: false,
      };
      this.#seen.set(index, s);
    }
    return s;
  }

  /** Consumes one run event. */
  onEvent(e: RunEvent): void {
    if (e.type === "end") return this.#end(e.report);
    if (e.type === "start") {
      this.#plan = e.plan;
      this.#intervalMs = e.plan.options.intervalMs;
      this.#start = this.opts.clock?.now() ?? 0;
    }
    if (this.opts.quiet) return;
    switch (e.type) {
      case "start": {
        const header = headerLine(e.plan);
        if (this.opts.fold) {
          this.#folded = true;
          this.#marker(this.opts.fold.open(this.redact(header)));
        } else this.#out(header);
        if (this.opts.progress === "changes" && this.opts.clock) this.#beat(this.opts.clock);
        return;
      }
      case "attempt":
        return this.#attempt(e);
      case "group":
        for (const g of groupsOf(e.group)) {
          for (const n of g.children) {
            if (n.type === "leaf") this.#of(n.condition.index).done = true;
          }
        }
        return this.#out(groupLine(e, this.opts.style));
      case "exhausted":
        this.#of(e.condition.index).done = true;
        return;
      case "notice":
        return this.#out(`waitcmd: ${e.condition.name}: ${e.message}`);
    }
  }

  #attempt(e: Extract<RunEvent, { type: "attempt" }>): void {
    const s = this.#of(e.condition.index);
    s.attempt = e.attempt;
    if (e.decisive || e.result.status === "fatal") {
      s.done = true;
      return this.#out(attemptLine(e, this.opts.style));
    }
    const text = attemptText(e.result, e.streak);
    const hint = e.result.status === "pending" ? e.result.hint : undefined;
    s.text = text;
    s.hint = hint;
    if (this.opts.progress === "changes") {
      // A streak's count changes at every success: its state is that it succeeds.
      const state = e.result.status === "pending" ? `pending: ${text}` : "succeeding";
      if (state === s.state && hint === s.shownHint) return;
      s.state = state;
    } else {
      const last = s.printed;
      // 10% slack: timers and clocks may round a full interval down a little.
      if (
        last && last.text === text && hint === s.shownHint &&
        e.elapsedMs - last.at < this.#intervalMs * 0.9
      ) return;
      s.printed = { text, at: e.elapsedMs };
    }
    const line = attemptLine(e, this.opts.style)!;
    this.#out(hint !== undefined && hint !== s.shownHint ? `${line} (hint: ${hint})` : line);
    s.shownHint = hint;
  }

  /** Every 30 s of the run's clock, the line of each condition still waited for. */
  async #beat(clock: Clock): Promise<void> {
    const ctl = this.#beating = new AbortController();
    try {
      while (true) {
        await clock.sleep(HEARTBEAT_MS, ctl.signal);
        if (ctl.signal.aborted) return;
        this.#heartbeat(clock.now() - this.#start);
      }
    } catch {
      // A renderer that cannot write stops beating; the run goes on (docs/contract.md §8).
    }
  }

  /** `[..] tcp db:5432 attempt 15 (30.0s): connection refused` for each condition waited for. */
  #heartbeat(elapsedMs: number): void {
    const at = formatElapsed(elapsedMs);
    for (const c of this.#plan?.conditions ?? []) {
      const s = this.#seen.get(c.index);
      if (c.guard || s?.done) continue;
      const text = s === undefined ? "no attempt finished yet" : withHint(s.text, s.hint);
      this.#out(
        `${this.opts.style.wait("[..]")} ${c.name} attempt ${
          Math.max(1, s?.attempt ?? 0)
        } (${at}): ${text}`,
      );
    }
  }

  #end(report: Report): void {
    this.#beating?.abort();
    if (this.#folded) this.#marker(this.opts.fold!.close());
    const summary = summaryLines(report, this.opts.style);
    // A line each for tens of thousands of conditions: redacted at once where the redactor can.
    const many = (this.redact as LineRedact).lines;
    if (many !== undefined && summary.length > 1) this.write(many(summary));
    else summary.forEach((l) => this.#out(l));
    const fold = this.opts.fold;
    if (fold) this.#marker(fold.annotation(report, summaryLines(report).map(this.redact)));
  }
}
