/**
 * Polls a plan's conditions concurrently until the run is decided
 * (DECISIONS §5). Time comes from an injected clock; outcomes go out as
 * events and a final report. Nothing here prints or exits.
 *
 * @module
 */

import type { Clock } from "./clock.ts";
import { Aborter, onAbort } from "./abort.ts";
import { formatDuration } from "./duration.ts";
import { errorText } from "./errors.ts";
import { guardAttempt, resultOf } from "./settle.ts";
import type { ConditionPlan, Plan } from "./grammar.ts";
import type { RunOptions } from "./options.ts";
import type { ReadyCondition, ReadyPlan } from "./prepare.ts";
import type { Probe, ProbeResult } from "./types.ts";

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
  /** Where the run's events go; without it, the runner makes none. */
  readonly onEvent?: (event: RunEvent) => void;
  /** How long to let aborted attempts clean up (kill children) before reporting. Default 3s. */
  readonly graceMs?: number;
  /** Source of `--jitter`'s randomness, in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
}

/**
 * The pause before a condition's next attempt (docs/contract.md §4):
 * `--interval`, doubled per consecutive failure under exponential backoff up
 * to `--max-interval`, then spread by ± `--jitter` with `random()` in [0, 1).
 */
export function pauseMs(
  opts: Pick<RunOptions, "intervalMs" | "backoff" | "maxIntervalMs" | "jitter">,
  failures: number,
  random: () => number,
): number {
  let base = opts.intervalMs;
  if (opts.backoff === "exponential" && failures > 1) {
    base = Math.min(opts.intervalMs * 2 ** Math.min(failures - 1, 52), opts.maxIntervalMs);
  }
  if (opts.jitter === 0) return base;
  return Math.max(0, base * (1 + opts.jitter * (2 * random() - 1)));
}

/**
 * The reason every abort of the runner's own controllers carries: one shared
 * object, since `abort()` without a reason builds a DOMException each time
 * (measurable with a thousand conditions).
 */
const RUN_ENDED = new Error("run ended");

/** Fewest attempts a `--stable-for` window is sampled with (docs/contract.md §4). */
export const STABLE_SAMPLES = 5;

class ConditionState {
  attempts = 0;
  satisfied = false;
  detail = "";
  lastError = "";
  fatal = false;
  streak = 0;
  /**
   * A time, so a double from the start: V8 lays a field first stored as a small integer out as
   * one, and a time stored there later moves every condition's state to another layout, one
   * by one (about 2 ms of a 1,000-condition run; docs/performance.md).
   */
  streakStart = NaN;
  /** Consecutive failed attempts, for exponential backoff. */
  failures = 0;
  satisfiedAt: number | null = null;
  /** Notices already emitted; made at the first (most conditions have none). */
  notices: Set<string> | undefined;
  /** The condition's controller (its watcher's and its pauses' signal), made when first needed. */
  ctl: Aborter | undefined;
  /** The controller of the attempt under way. */
  attemptCtl: Aborter | undefined;
  /** What ends the condition's pauses early, made at its first pause. */
  waker: Waker | undefined;
}

/**
 * The pause between a condition's attempts, which a watcher's change (or the
 * condition's end) cuts short. A pause that ran its full length leaves its
 * controller unaborted, and the next pause reuses it: a condition that is
 * never woken early sleeps on one controller for the whole run
 * (docs/performance.md, "Cost per condition").
 */
class Waker {
  #pending = false;
  #sleeping: Aborter | undefined;
  #spare: Aborter | undefined;

  readonly #ended: AbortSignal;
  #listening = false;

  /** `ended` (the condition's signal) cuts the current pause short, like a change. */
  constructor(ended: AbortSignal) {
    this.#ended = ended;
  }

  trigger(): void {
    this.#pending = true;
    this.#sleeping?.abort(RUN_ENDED);
  }

  clear(): void {
    this.#pending = false;
  }

  async sleep(clock: Clock, ms: number): Promise<void> {
    // Listened to from the first pause on: a condition satisfied at once never pays for it.
    if (!this.#listening) {
      this.#listening = true;
      onAbort(this.#ended, () => this.trigger());
    }
    if (this.#pending) return;
    const ctl = this.#spare ?? new Aborter();
    this.#spare = undefined;
    this.#sleeping = ctl;
    try {
      await clock.sleep(ms, ctl.signal);
    } finally {
      this.#sleeping = undefined;
      if (!ctl.signal.aborted) this.#spare = ctl;
    }
  }
}

/** `probe.close()`, awaited; what it throws is settled by `Promise.allSettled` in `run`. */
async function closeProbe(probe: Probe): Promise<void> {
  await probe.close?.();
}

/** Runs the plan to its end and returns the report. Never throws for a target's failure. */
export async function run(plan: ReadyPlan, ctx: RunContext): Promise<Report> {
  const { clock, onEvent } = ctx;
  const opts = plan.options;
  const start = clock.now();
  const elapsed = () => clock.now() - start;
  const runCtl = new AbortController();
  const states = plan.conditions.map(() => new ConditionState());
  // The controllers of attempts and conditions under way are aborted by one listener when the
  // run ends: a listener each on the run's signal would make a run of n conditions cost O(n²).
  runCtl.signal.addEventListener("abort", () => {
    for (const s of states) {
      s.attemptCtl?.abort(RUN_ENDED);
      s.ctl?.abort(RUN_ENDED);
    }
  }, { once: true });
  let unsatisfied = plan.conditions.filter((c) => !c.guard).length;
  const watchers: Promise<void>[] = [];

  let outcome: { status: RunStatus; decidedBy?: number; at: number } | undefined;
  const finish = (status: RunStatus, decidedBy?: number) => {
    if (outcome) return;
    outcome = { status, decidedBy, at: elapsed() };
    runCtl.abort(RUN_ENDED);
  };

  const emit = (e: RunEvent) => {
    if (onEvent === undefined) return;
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
  // `--timeout 0`/`none`: no deadline; the run ends on a verdict or a signal.
  const deadline = Number.isFinite(opts.timeoutMs)
    ? clock.sleep(opts.timeoutMs, runCtl.signal).then(() => finish("timeout"))
    : Promise.resolve();
  const random = ctx.random ?? Math.random;

  const emitAttempt = (
    condition: ConditionPlan,
    attempt: number,
    result: ProbeResult,
    elapsedMs: number,
    decisive: boolean,
    streak: Streak | undefined,
  ) => {
    // Without a listener, no event is made: a run of a thousand conditions makes two each.
    if (onEvent !== undefined) {
      emit({ type: "attempt", condition, attempt, result, elapsedMs, decisive, streak });
    }
  };

  /** A non-guard condition just became satisfied. */
  const checkDone = (index: number) => {
    unsatisfied--;
    if (opts.mode === "any") return finish("satisfied", index);
    if (unsatisfied === 0) finish("satisfied");
  };

  /**
   * One attempt; undefined when the run ended while it was under way. Not an
   * async function, and no race of promises: with a thousand attempts in
   * flight, each suspended frame and promise is held a thousand times
   * (docs/performance.md, "Cost per condition").
   */
  const attemptOnce = (
    c: ReadyCondition,
    s: ConditionState,
    attempt: number,
  ): Promise<ProbeResult | undefined> => {
    if (runCtl.signal.aborted) return Promise.resolve(undefined);
    const ctl = s.attemptCtl = new Aborter();
    // This function ends the attempt on abort and applies the error rule: the probe's
    // `settle` need not do either again.
    guardAttempt(ctl.signal);
    let timedOut = false;
    let timerCtl: Aborter | undefined;
    if (opts.attemptTimeoutMs !== undefined) {
      const timer = timerCtl = new Aborter();
      clock.sleep(opts.attemptTimeoutMs, timer.signal).then(() => {
        if (timer.signal.aborted) return;
        timedOut = true;
        ctl.abort(new Error(`attempt timed out after ${formatDuration(opts.attemptTimeoutMs!)}`));
      });
    }
    let started: Promise<ProbeResult>;
    try {
      started = Promise.resolve(c.probe.check({ signal: ctl.signal, attempt }));
    } catch (e) {
      started = Promise.reject(e);
    }
    return new Promise((resolve) => {
      let settled = false;
      const end = (r: ProbeResult | undefined) => {
        if (settled) return;
        settled = true;
        timerCtl?.abort(RUN_ENDED);
        s.attemptCtl = undefined;
        resolve(r);
      };
      // An abort (the run's end, the attempt's timeout) ends the attempt whatever the probe does.
      ctl.whenAborted = () => {
        end(
          timedOut
            ? {
              status: "pending",
              error: `attempt timed out after ${formatDuration(opts.attemptTimeoutMs!)}`,
            }
            : undefined,
        );
      };
      // The attempt's boundary (docs/contract.md §8): a thrown value gets its result here.
      started.then(end, (e: unknown) => end(resultOf(e)));
    });
  };

  /**
   * The condition's own signal: its watcher and its sleeps listen there, not on the run's.
   * Made when first needed: a condition satisfied at its first attempt never pays for it.
   */
  const condSignal = (s: ConditionState) => {
    if (s.ctl === undefined) {
      s.ctl = new Aborter();
      if (runCtl.signal.aborted) s.ctl.abort(RUN_ENDED);
    }
    return s.ctl.signal;
  };
  const wakerOf = (s: ConditionState) => (s.waker ??= new Waker(condSignal(s)));

  /** Starts the probe's watcher: each change it yields cuts the current pause short. */
  const startWatching = (
    c: ReadyCondition,
    s: ConditionState,
    watch: NonNullable<Probe["watch"]>,
  ) => {
    const signal = condSignal(s);
    const w = wakerOf(s);
    const iterable = watch({
      signal,
      notice: (message) => {
        s.notices ??= new Set();
        if (s.notices.has(message)) return;
        s.notices.add(message);
        emit({ type: "notice", condition: c, message });
      },
    });
    watchers.push((async () => {
      try {
        for await (const _ of iterable) {
          if (signal.aborted) break;
          w.trigger();
        }
      } catch (e) {
        if (!signal.aborted) {
          emit({
            type: "notice",
            condition: c,
            message: `watching failed, polling: ${errorText(e)}`,
          });
        }
      }
    })());
  };

  /**
   * Records an attempt's result and emits its events. Returns the pause before the next
   * attempt, or undefined when the condition is done (satisfied, fatal, a guard that matched).
   */
  const record = (
    c: ReadyCondition,
    s: ConditionState,
    attempt: number,
    result: ProbeResult,
  ): number | undefined => {
    const now = elapsed();
    s.failures = result.status === "pending" ? s.failures + 1 : 0;
    let waitMs = pauseMs(opts, s.failures, random);
    if (result.status === "fatal") {
      s.lastError = result.error;
      s.fatal = true;
      emitAttempt(c, attempt, result, now, false, undefined);
      finish("fatal", c.index);
      return undefined;
    }
    if (c.guard) {
      if (result.status === "satisfied") {
        s.satisfied = true;
        s.fatal = true;
        s.detail = result.detail;
        s.satisfiedAt = now;
        emitAttempt(c, attempt, result, now, true, undefined);
        emit({ type: "guard", condition: c, detail: result.detail, elapsedMs: now });
        finish("fatal", c.index);
        return undefined;
      }
      s.lastError = result.error;
      emitAttempt(c, attempt, result, now, false, undefined);
    } else if (result.status === "pending") {
      s.streak = 0;
      s.lastError = result.error;
      emitAttempt(c, attempt, result, now, false, undefined);
    } else {
      if (s.streak === 0) s.streakStart = now;
      s.streak++;
      s.detail = result.detail;
      const stableMs = now - s.streakStart;
      if (s.streak >= opts.successes && stableMs >= opts.stableForMs) {
        s.satisfied = true;
        s.satisfiedAt = now;
        emitAttempt(c, attempt, result, now, true, undefined);
        if (onEvent !== undefined) emit({ type: "satisfied", condition: c, elapsedMs: now });
        checkDone(c.index);
        return undefined;
      }
      const streak: Streak = {
        successes: s.streak,
        required: opts.successes,
        stableMs,
        requiredMs: opts.stableForMs,
      };
      emitAttempt(c, attempt, result, now, false, streak);
      // Sample densely inside the stability window (at least STABLE_SAMPLES attempts
      // across it), so a target that flaps between two samples cannot pass unseen,
      // and do not oversleep the moment the streak becomes old enough (docs §4).
      if (opts.stableForMs > stableMs) {
        waitMs = Math.min(
          waitMs,
          Math.max(1, opts.stableForMs / STABLE_SAMPLES),
          opts.stableForMs - stableMs,
        );
      }
    }
    return waitMs;
  };

  /**
   * One condition's attempts until it is done or the run ends. Small on purpose: with a
   * thousand conditions, this frame is held a thousand times (docs/performance.md).
   */
  const poll = async (c: ReadyCondition, s: ConditionState) => {
    if (c.probe.watch) startWatching(c, s, c.probe.watch);
    try {
      // `--delay`: no attempt starts before it ends, watcher-triggered or not.
      if (opts.delayMs > 0) await clock.sleep(opts.delayMs, condSignal(s));
      while (!runCtl.signal.aborted) {
        s.waker?.clear();
        const attempt = ++s.attempts;
        const result = await attemptOnce(c, s, attempt);
        if (result === undefined || outcome) {
          if (outcome?.status === "timeout" && s.lastError === "" && !s.satisfied) {
            s.lastError = `no answer before the deadline (attempt ${attempt} still running)`;
          }
          break;
        }
        const waitMs = record(c, s, attempt, result);
        if (waitMs === undefined) break;
        await wakerOf(s).sleep(clock, waitMs);
      }
    } finally {
      // Stops the watcher. Without one nothing listens any more, and an abort dispatches an
      // event (measurable with a thousand conditions).
      if (c.probe.watch) s.ctl?.abort(RUN_ENDED);
      s.ctl = undefined;
    }
  };

  await Promise.all(plan.conditions.map((c) => poll(c, states[c.index - 1]!)));
  await deadline;
  ctx.signal?.removeEventListener("abort", onCancel);

  // Aborted attempts settle at once (docs/contract.md §8); closing the probes (killing exec
  // children, closing clients) gets a bounded grace period, so no probe can hold the exit.
  const graceCtl = new AbortController();
  await Promise.race([
    Promise.allSettled([
      ...watchers,
      // Only the probes that hold something: an async closer each would cost a frame and a
      // promise per condition (docs/performance.md, "Cost per condition").
      ...plan.conditions.flatMap((c) => c.probe.close ? [closeProbe(c.probe)] : []),
    ]),
    clock.sleep(ctx.graceMs ?? 3000, graceCtl.signal),
  ]);
  graceCtl.abort();

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
