/**
 * Polls a plan's conditions concurrently until the run is decided
 * (DECISIONS §5). Time comes from an injected clock; outcomes go out as
 * events and a final report. Nothing here prints or exits.
 *
 * @module
 */

import type { Clock } from "./clock.ts";
import { formatDuration } from "./duration.ts";
import { errorText } from "./errors.ts";
import type { ConditionPlan, Plan } from "./grammar.ts";
import type { ProbeResult } from "./types.ts";

/** How a run ended. */
export type RunStatus = "satisfied" | "timeout" | "fatal" | "cancelled";

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
  /** This condition ended the run with exit 3. */
  readonly fatal: boolean;
  /** Run time at which it became satisfied, if it did. */
  readonly elapsedMs: number | null;
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
  | { readonly type: "notice"; readonly condition: ConditionPlan; readonly message: string }
  | { readonly type: "end"; readonly report: Report };

/** What `run` needs besides the plan. */
export interface RunContext {
  readonly clock: Clock;
  /** Aborting it cancels the run; its reason (e.g. "SIGINT") is reported. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RunEvent) => void;
  /** How long to let aborted attempts clean up (kill children) before reporting. Default 3s. */
  readonly graceMs?: number;
}

class ConditionState {
  attempts = 0;
  satisfied = false;
  detail = "";
  lastError = "";
  fatal = false;
  streak = 0;
  streakStart = 0;
  satisfiedAt: number | null = null;
  notices = new Set<string>();
}

/** Wakes a sleeping poll loop early when a watcher reports a change. */
class Waker {
  #pending = false;
  #wake: (() => void) | undefined;

  trigger(): void {
    this.#pending = true;
    this.#wake?.();
  }

  clear(): void {
    this.#pending = false;
  }

  async sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
    if (this.#pending || signal.aborted) return;
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const woken = new Promise<void>((resolve) => (this.#wake = resolve));
    try {
      await Promise.race([clock.sleep(ms, ctl.signal), woken]);
    } finally {
      this.#wake = undefined;
      ctl.abort();
      signal.removeEventListener("abort", onAbort);
    }
  }
}

/** Runs the plan to its end and returns the report. Never throws for a target's failure. */
export async function run(plan: Plan, ctx: RunContext): Promise<Report> {
  const { clock, onEvent = () => {} } = ctx;
  const opts = plan.options;
  const start = clock.now();
  const elapsed = () => clock.now() - start;
  const runCtl = new AbortController();
  const states = plan.conditions.map(() => new ConditionState());
  const inflight = new Set<Promise<unknown>>();
  const watchers: Promise<void>[] = [];

  let outcome: { status: RunStatus; decidedBy?: number; at: number } | undefined;
  const finish = (status: RunStatus, decidedBy?: number) => {
    if (outcome) return;
    outcome = { status, decidedBy, at: elapsed() };
    runCtl.abort();
  };

  const emit = (e: RunEvent) => {
    try {
      onEvent(e);
    } catch (err) {
      // A broken renderer must not decide the run; report it once on stderr.
      console.error(`waitcmd: output failed: ${errorText(err)}`);
    }
  };

  emit({ type: "start", plan });
  const onCancel = () => finish("cancelled");
  if (ctx.signal?.aborted) onCancel();
  ctx.signal?.addEventListener("abort", onCancel, { once: true });
  const deadline = clock.sleep(opts.timeoutMs, runCtl.signal).then(() => finish("timeout"));

  const checkDone = (index: number) => {
    const wanted = plan.conditions.filter((c) => !c.guard);
    if (opts.mode === "any") return finish("satisfied", index);
    if (wanted.every((c) => states[c.index - 1]!.satisfied)) finish("satisfied");
  };

  /** One attempt; undefined when the run ended while it was under way. */
  const attemptOnce = async (
    c: ConditionPlan,
    attempt: number,
  ): Promise<ProbeResult | undefined> => {
    const ctl = new AbortController();
    const onRunEnd = () => ctl.abort(new Error("run ended"));
    runCtl.signal.addEventListener("abort", onRunEnd, { once: true });
    const timerCtl = new AbortController();
    let timedOut = false;
    if (opts.attemptTimeoutMs !== undefined) {
      clock.sleep(opts.attemptTimeoutMs, timerCtl.signal).then(() => {
        if (timerCtl.signal.aborted) return;
        timedOut = true;
        ctl.abort(new Error(`attempt timed out after ${formatDuration(opts.attemptTimeoutMs!)}`));
      });
    }
    const aborted = new Promise<"aborted">((resolve) => {
      if (ctl.signal.aborted) resolve("aborted");
      ctl.signal.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    // A probe that throws has a bug; the run goes on and the message is shown.
    const probing: Promise<ProbeResult> = Promise.resolve()
      .then(() => c.probe.check({ signal: ctl.signal, attempt }))
      .catch((e: unknown): ProbeResult => ({ status: "pending", error: errorText(e) }));
    inflight.add(probing);
    probing.finally(() => inflight.delete(probing));
    try {
      const r = await Promise.race([probing, aborted]);
      if (r !== "aborted") return r;
      if (timedOut) {
        return {
          status: "pending",
          error: `attempt timed out after ${formatDuration(opts.attemptTimeoutMs!)}`,
        };
      }
      return undefined;
    } finally {
      timerCtl.abort();
      runCtl.signal.removeEventListener("abort", onRunEnd);
    }
  };

  const poll = async (c: ConditionPlan, s: ConditionState) => {
    const waker = new Waker();
    const condCtl = new AbortController();
    const stopWatch = () => condCtl.abort();
    runCtl.signal.addEventListener("abort", stopWatch, { once: true });
    if (c.probe.watch) {
      const iterable = c.probe.watch({
        signal: condCtl.signal,
        notice: (message) => {
          if (s.notices.has(message)) return;
          s.notices.add(message);
          emit({ type: "notice", condition: c, message });
        },
      });
      watchers.push((async () => {
        try {
          for await (const _ of iterable) {
            if (condCtl.signal.aborted) break;
            waker.trigger();
          }
        } catch (e) {
          if (!condCtl.signal.aborted) {
            emit({
              type: "notice",
              condition: c,
              message: `watching failed, polling: ${errorText(e)}`,
            });
          }
        }
      })());
    }
    try {
      while (!runCtl.signal.aborted) {
        waker.clear();
        const attempt = ++s.attempts;
        const result = await attemptOnce(c, attempt);
        if (result === undefined || outcome) {
          if (outcome?.status === "timeout" && s.lastError === "" && !s.satisfied) {
            s.lastError = `no answer before the deadline (attempt ${attempt} still running)`;
          }
          break;
        }
        const now = elapsed();
        let waitMs = opts.intervalMs;
        if (result.status === "fatal") {
          s.lastError = result.error;
          s.fatal = true;
          emit({
            type: "attempt",
            condition: c,
            attempt,
            result,
            elapsedMs: now,
            decisive: false,
            streak: undefined,
          });
          finish("fatal", c.index);
          break;
        }
        if (c.guard) {
          if (result.status === "satisfied") {
            s.satisfied = true;
            s.fatal = true;
            s.detail = result.detail;
            s.satisfiedAt = now;
            emit({
              type: "attempt",
              condition: c,
              attempt,
              result,
              elapsedMs: now,
              decisive: true,
              streak: undefined,
            });
            emit({ type: "guard", condition: c, detail: result.detail, elapsedMs: now });
            finish("fatal", c.index);
            break;
          }
          s.lastError = result.error;
          emit({
            type: "attempt",
            condition: c,
            attempt,
            result,
            elapsedMs: now,
            decisive: false,
            streak: undefined,
          });
        } else if (result.status === "pending") {
          s.streak = 0;
          s.lastError = result.error;
          emit({
            type: "attempt",
            condition: c,
            attempt,
            result,
            elapsedMs: now,
            decisive: false,
            streak: undefined,
          });
        } else {
          if (s.streak === 0) s.streakStart = now;
          s.streak++;
          s.detail = result.detail;
          const stableMs = now - s.streakStart;
          if (s.streak >= opts.successes && stableMs >= opts.stableForMs) {
            s.satisfied = true;
            s.satisfiedAt = now;
            emit({
              type: "attempt",
              condition: c,
              attempt,
              result,
              elapsedMs: now,
              decisive: true,
              streak: undefined,
            });
            emit({ type: "satisfied", condition: c, elapsedMs: now });
            checkDone(c.index);
            break;
          }
          const streak: Streak = {
            successes: s.streak,
            required: opts.successes,
            stableMs,
            requiredMs: opts.stableForMs,
          };
          emit({
            type: "attempt",
            condition: c,
            attempt,
            result,
            elapsedMs: now,
            decisive: false,
            streak,
          });
          // Do not oversleep the moment the streak becomes old enough.
          if (opts.stableForMs > stableMs) waitMs = Math.min(waitMs, opts.stableForMs - stableMs);
        }
        await waker.sleep(clock, waitMs, runCtl.signal);
      }
    } finally {
      condCtl.abort();
      runCtl.signal.removeEventListener("abort", stopWatch);
    }
  };

  await Promise.all(plan.conditions.map((c) => poll(c, states[c.index - 1]!)));
  await deadline;
  ctx.signal?.removeEventListener("abort", onCancel);

  // Aborted attempts get a bounded grace period to clean up (kill exec children).
  if (inflight.size > 0) {
    const graceCtl = new AbortController();
    await Promise.race([
      Promise.allSettled([...inflight]),
      clock.sleep(ctx.graceMs ?? 3000, graceCtl.signal),
    ]);
    graceCtl.abort();
  }
  await Promise.allSettled(watchers);
  await Promise.allSettled(plan.conditions.map(async (c) => await c.probe.close?.()));

  const o = outcome ?? { status: "cancelled" as const, at: elapsed() };
  const reason = ctx.signal?.reason;
  const report: Report = {
    status: o.status,
    elapsedMs: o.at,
    mode: opts.mode,
    timeoutMs: opts.timeoutMs,
    decidedBy: o.decidedBy,
    signal: o.status === "cancelled" && typeof reason === "string" ? reason : undefined,
    conditions: plan.conditions.map((c) => {
      const s = states[c.index - 1]!;
      return {
        index: c.index,
        name: c.name,
        kind: c.kind.name,
        target: c.target,
        guard: c.guard,
        satisfied: s.satisfied,
        attempts: s.attempts,
        detail: s.detail,
        lastError: s.lastError,
        fatal: s.fatal,
        elapsedMs: s.satisfiedAt,
      };
    }),
  };
  emit({ type: "end", report });
  return report;
}
