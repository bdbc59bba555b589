/**
 * One condition's life in a run (docs/contract.md §4): its attempts, the
 * pauses between them, its watcher's wake-ups, the streak that
 * `--successes` and `--stable-for` ask for, and what it tells the run. The
 * run (engine/runner.ts) decides what the outcomes mean together.
 *
 * @module
 */

import { Aborter, onAbort } from "./abort.ts";
import { attempt } from "./attempt.ts";
import type { AttemptSlots } from "./slots.ts";
import type { Clock } from "./clock.ts";
import { formatDuration } from "./duration.ts";
import { errorText } from "./errors.ts";
import { follow } from "./follow.ts";
import type { RunOptions } from "./options.ts";
import type { ReadyCondition } from "./prepare.ts";
import type { ConditionReport, RunEvent, Streak } from "./report.ts";
import { redactText, type SecretRegistry } from "./masking.ts";
import type { ProbeResult, WatchContext } from "./types.ts";

/** Fewest attempts a `--stable-for` window is sampled with (docs/contract.md §4). */
export const STABLE_SAMPLES = 5;

/**
 * The reason every abort of the runner's own controllers carries: one shared
 * object, since `abort()` without a reason builds a DOMException each time
 * (measurable with a thousand conditions).
 */
export const RUN_ENDED = new Error("run ended");

/** What a condition's loop waits on. */
const Phase = {
  Idle: 0,
  /** `--delay`. */
  Delay: 1,
  /** A slot for its attempt. */
  Slot: 2,
  /** Its attempt's result. */
  Attempt: 3,
  /** The pause before its next attempt. */
  Pause: 4,
} as const;
type Phase = typeof Phase[keyof typeof Phase];

/**
 * The pause before a condition's next attempt (docs/contract.md §4):
 * `--interval`, multiplied by `--backoff-factor` (2 by default) per consecutive
 * failure under exponential backoff up to `--max-interval`, then spread by
 * ± `--jitter` with `random()` in [0, 1).
 */
export function pauseMs(
  opts: Pick<RunOptions, "intervalMs" | "backoff" | "maxIntervalMs" | "backoffFactor" | "jitter">,
  failures: number,
  random: () => number,
): number {
  let base = opts.intervalMs;
  if (opts.backoff === "exponential" && failures > 1) {
    // A power past the largest double is Infinity, which the cap brings back: no overflow.
    base = Math.min(opts.intervalMs * opts.backoffFactor ** (failures - 1), opts.maxIntervalMs);
  }
  if (opts.jitter === 0) return base;
  return Math.max(0, base * (1 + opts.jitter * (2 * random() - 1)));
}

/** What a condition needs from its run, and tells it. */
export interface RunHost {
  readonly clock: Clock;
  readonly options: RunOptions;
  readonly random: () => number;
  /** Aborted when the run ends. */
  readonly ended: AbortSignal;
  /** Run time, in ms. */
  elapsed(): number;
  /** The run's secrets, masked by value in what comes from outside (docs/contract.md §9). */
  readonly secrets?: SecretRegistry;
  /** Where events go; undefined when nothing listens (the runner then makes none). */
  readonly emit: ((e: RunEvent) => void) | undefined;
  /** A non-guard condition holds. */
  held(c: ConditionRun): void;
  /** A non-guard condition used up `--max-attempts`. */
  gaveUp(c: ConditionRun): void;
  /** A fatal result, or a guard that matched: the run ends with exit 3. */
  fatal(c: ConditionRun): void;
  /** Whether the run timed out (an attempt cut short then says so). */
  timedOut(): boolean;
  /**
   * Whether the deadline has passed; it then ends the run, as its timer would. Asked at each
   * attempt's end and start: a turn of the event loop that ends thousands of attempts at once
   * would hold the timer until the turn is over (docs/reliability.md).
   */
  pastDeadline(): boolean;
  /** The run's attempts under way at once (engine/slots.ts). */
  readonly slots: AttemptSlots;
  /** A condition's loop ended: done, stopped or the run's end; `error` when it threw. */
  polled(c: ConditionRun, error?: unknown): void;
}

/** One condition of a run, from its first attempt to its last. */
export class ConditionRun {
  attempts = 0;
  satisfied = false;
  detail = "";
  lastError = "";
  /** The hint of the last failed attempt (docs/contract.md §6, hints). */
  hint: string | undefined;
  fatal = false;
  exhausted = false;
  captures: Readonly<Record<string, string>> = NO_CAPTURES;
  satisfiedAt: number | null = null;
  /** Consecutive successful attempts, and when the first of them ended. */
  #streak = 0;
  /**
   * A time, so a double from the start: V8 lays a field first stored as a small integer out as
   * one, and a time stored there later moves every condition's state to another layout, one
   * by one (about 2 ms of a 1,000-condition run; docs/performance.md).
   */
  #streakStart = NaN;
  /** Consecutive failed attempts, for exponential backoff. */
  #failures = 0;
  /** Its own controller (its watcher's and its pauses' signal), made when first needed. */
  #ctl: Aborter | undefined;
  /** The controller of the attempt under way. */
  #attemptCtl: Aborter | undefined;
  /** The `--attempt-timeout` timer of the attempt under way. */
  #timer: Aborter | undefined;
  /** What ends its pauses early, made at its first pause. */
  #waker: Waker | undefined;
  /** Its watcher's loop, when it has one. */
  watching: Promise<void> | undefined;

  constructor(readonly c: ReadyCondition, readonly host: RunHost) {}

  /** What its loop waits on now: what the promise it waits on settles into (`#step`). */
  #phase: Phase = Phase.Idle;
  /** Its loop's next step and its failure, bound once: what each promise it waits on calls. */
  #onStep: ((value: unknown) => void) | undefined;
  #onFail: ((e: unknown) => void) | undefined;
  /** Whether its loop ended. */
  #over = false;
  /** Settles once its loop ended, made by `end` when the run's end found it busy. */
  #ending: Promise<void> | undefined;
  #ended: (() => void) | undefined;

  /**
   * Starts its attempts; it tells the run (`RunHost.polled`) once it is done, stopped or sees
   * the end. Its loop is a step per settled promise, not an async function: a frame suspended
   * per condition costs more than the step (docs/reliability.md, large manifests).
   */
  start(): void {
    const probe = this.c.probe;
    if (probe.watch !== undefined || probe.listen !== undefined) this.#startWatching();
    const { clock, options } = this.host;
    // `--delay`: no attempt starts before it ends, watcher-triggered or not.
    if (options.delayMs > 0) this.#wait(Phase.Delay, clock.sleep(options.delayMs, this.#signal()));
    else this.#stepped(undefined);
  }

  /** Waits for `p` in `phase`; `#step` goes on from there. */
  #wait(phase: Phase, p: Promise<unknown>): void {
    this.#phase = phase;
    p.then(this.#onStep ??= this.#stepped.bind(this), this.#onFail ??= this.#threw.bind(this));
  }

  #stepped(value: unknown): void {
    try {
      this.#step(value);
    } catch (e) {
      this.#finish(e);
    }
  }

  /**
   * The promise waited on in `#phase` gave `value` (the loop's top, in `Idle`); an error it
   * throws ends the loop, as an async function's would reject.
   */
  #step(value: unknown): void {
    const phase = this.#phase;
    this.#phase = Phase.Idle;
    if (phase === Phase.Attempt) return this.#answered(value as ProbeResult | undefined);
    if (phase === Phase.Pause) this.#waker!.slept();
    if (phase !== Phase.Slot) return this.#next();
    // A slot waited for (engine/slots.ts) is given back when no longer wanted.
    if (value !== true) return this.#finish();
    if (this.#goesOn()) return this.#run();
    this.host.slots.give();
    this.#finish();
  }

  /** Whether it makes another attempt: the run goes on, it was not stopped. */
  #goesOn(): boolean {
    return !this.host.ended.aborted && !this.stopped && !this.host.pastDeadline();
  }

  /** The top of its loop: an attempt, once it has a slot, unless it is over. */
  #next(): void {
    if (!this.#goesOn()) return this.#finish();
    this.#waker?.clear();
    const slot = this.host.slots.take();
    if (slot === true) this.#run();
    else this.#wait(Phase.Slot, slot);
  }

  /** Makes its next attempt, holding a slot. */
  #run(): void {
    const n = ++this.attempts;
    let answer: Promise<ProbeResult | undefined>;
    try {
      answer = this.#attempt(n);
    } catch (e) {
      this.#released();
      this.host.slots.give();
      throw e;
    }
    this.#wait(Phase.Attempt, answer);
  }

  /** Its attempt under way ended with `result` (undefined: the run ended, or it stopped). */
  #answered(result: ProbeResult | undefined): void {
    this.#released();
    this.host.slots.give();
    const n = this.attempts;
    if (result === undefined || this.host.ended.aborted || this.stopped) {
      this.#noAnswer(n);
      return this.#finish();
    }
    const waitMs = this.#record(n, result);
    if (waitMs === undefined || this.host.pastDeadline()) return this.#finish();
    this.#wait(Phase.Pause, this.#wakerOf().sleep(this.host.clock, waitMs));
  }

  /** A promise it waited on rejected: its attempt's slot is given back, and its loop ends. */
  #threw(e: unknown): void {
    if (this.#phase === Phase.Attempt) {
      this.#released();
      this.host.slots.give();
    }
    this.#phase = Phase.Idle;
    this.#finish(e);
  }

  /** Its loop ended (with `error` when something threw): its watcher stops; the run hears. */
  #finish(error?: unknown): void {
    if (this.#over) return;
    this.#over = true;
    // Stops the watcher. Without one nothing listens any more, and an abort dispatches an
    // event (measurable with a thousand conditions).
    if (this.watching !== undefined) this.#ctl?.abort(RUN_ENDED);
    this.#ctl = undefined;
    this.#ended?.();
    this.host.polled(this, error);
  }

  /** Set once it should make no more attempts (its group was decided). */
  stopped = false;

  /** Ends its attempt under way and its pauses: its group no longer needs it. */
  stop(): void {
    this.stopped = true;
    this.#attemptCtl?.abort(RUN_ENDED);
    this.#ctl?.abort(RUN_ENDED);
  }

  /**
   * The run ended: the attempt under way is aborted now (what it started ends with it: a
   * command's process group, a `ping`) and its watcher stops. A pause is not woken: the
   * condition sees the end when its pause is over, and the process has usually exited by then,
   * so a run of tens of thousands of sleeping conditions ends without a step each
   * (docs/contract.md §4, end of run). Returns what settles once the aborted work has, or
   * undefined when nothing was under way.
   */
  end(): Promise<void> | undefined {
    const busy = this.#attemptCtl !== undefined || this.watching !== undefined;
    if (!busy) return undefined;
    this.#ending ??= this.#over
      ? Promise.resolve()
      : new Promise<void>((resolve) => this.#ended = resolve);
    this.#attemptCtl?.abort(RUN_ENDED);
    if (this.watching !== undefined) this.#ctl?.abort(RUN_ENDED);
    return this.#ending;
  }

  /**
   * Its line in the report. Made as soon as the run ended, perhaps before an aborted attempt
   * has unwound: its state was fixed when the run ended (an attempt that ends after that is not
   * recorded), and an attempt still under way at the deadline reads as `poll` words it.
   */
  report(): ConditionReport {
    const c = this.c;
    if (this.#attemptCtl !== undefined) this.#noAnswer(this.attempts);
    const r: ConditionReport = {
      index: c.index,
      name: c.name,
      kind: c.kind.name,
      target: c.target,
      guard: c.guard,
      satisfied: this.satisfied,
      attempts: this.attempts,
      detail: this.detail,
      lastError: this.lastError,
      fatal: this.fatal,
      exhausted: this.exhausted,
      stopped: this.stopped,
      elapsedMs: this.satisfiedAt,
      captures: this.captures,
      group: c.group,
      groupName: undefined,
    };
    // No spread for the many conditions without a hint: it builds an object for each.
    return this.hint === undefined ? r : { ...r, hint: this.hint };
  }

  /** Attempt `n` was under way when the run timed out: said so, when nothing else was. */
  #noAnswer(n: number): void {
    if (this.host.timedOut() && this.lastError === "" && !this.satisfied) {
      this.lastError = `no answer before the deadline (attempt ${n} still running)`;
    }
  }

  /**
   * The condition's own signal: its watcher and its sleeps listen there, not on the run's.
   * Made when first needed: a condition satisfied at its first attempt never pays for it.
   */
  #signal(): AbortSignal {
    if (this.#ctl === undefined) {
      this.#ctl = new Aborter();
      if (this.host.ended.aborted || this.stopped) this.#ctl.abort(RUN_ENDED);
    }
    return this.#ctl.signal;
  }

  #wakerOf(): Waker {
    return this.#waker ??= new Waker(this.#signal());
  }

  /**
   * One attempt; undefined when the run ended (or the condition stopped) while it was under
   * way. Its controller and `--attempt-timeout` timer are released by `poll` when it ends.
   */
  #attempt(n: number): Promise<ProbeResult | undefined> {
    if (this.host.ended.aborted) return Promise.resolve(undefined);
    const ctl = this.#attemptCtl = new Aborter();
    // A condition's own --attempt-timeout wins over the global one (docs/contract.md §1).
    const limitMs = this.c.attemptTimeoutMs ?? this.host.options.attemptTimeoutMs;
    const secrets = this.host.secrets;
    if (limitMs === undefined) return attempt(this.c.probe, ctl, n, noResult, secrets);
    const timer = this.#timer = new Aborter();
    let timedOut = false;
    this.host.clock.sleep(limitMs, timer.signal).then(() => {
      if (timer.signal.aborted) return;
      timedOut = true;
      ctl.abort(new Error(`attempt timed out after ${formatDuration(limitMs)}`));
    });
    return attempt(
      this.c.probe,
      ctl,
      n,
      (): ProbeResult | undefined =>
        timedOut
          ? { status: "pending", error: `attempt timed out after ${formatDuration(limitMs)}` }
          : undefined,
      secrets,
    );
  }

  /** The attempt under way ended: its controller and timer are done with. */
  #released(): void {
    this.#attemptCtl = undefined;
    this.#timer?.abort(RUN_ENDED);
    this.#timer = undefined;
  }

  #emitAttempt(n: number, result: ProbeResult, now: number, decisive: boolean, streak?: Streak) {
    // Without a listener, no event is made: a run of a thousand conditions makes two each.
    this.host.emit?.({
      type: "attempt",
      condition: this.c,
      attempt: n,
      result,
      elapsedMs: now,
      decisive,
      streak,
    });
  }

  /**
   * Records an attempt's result and tells the run. Returns the pause before the next
   * attempt, or undefined when the condition is done (satisfied, fatal, gave up, a guard that
   * matched).
   */
  #record(n: number, result: ProbeResult): number | undefined {
    const host = this.host;
    const now = host.elapsed();
    this.#failures = result.status === "pending" ? this.#failures + 1 : 0;
    if (result.status === "fatal") {
      this.lastError = result.error;
      this.hint = result.hint;
      this.fatal = true;
      this.#emitAttempt(n, result, now, false);
      host.fatal(this);
      return undefined;
    }
    if (result.status === "pending") return this.#failed(n, result, now);
    if (this.c.guard) {
      this.#hold(result, now);
      this.fatal = true;
      this.#emitAttempt(n, result, now, true);
      host.emit?.({ type: "guard", condition: this.c, detail: result.detail, elapsedMs: now });
      host.fatal(this);
      return undefined;
    }
    return this.#succeeded(n, result, now);
  }

  #failed(n: number, result: ProbeResult & { status: "pending" }, now: number) {
    this.#streak = 0;
    this.lastError = result.error;
    this.hint = result.hint;
    this.#emitAttempt(n, result, now, false);
    const max = this.host.options.maxAttempts;
    if (!this.c.guard && max !== undefined && n >= max) {
      this.exhausted = true;
      this.host.emit?.({ type: "exhausted", condition: this.c, elapsedMs: now });
      this.host.gaveUp(this);
      return undefined;
    }
    return pauseMs(this.host.options, this.#failures, this.host.random);
  }

  #succeeded(n: number, result: ProbeResult & { status: "satisfied" }, now: number) {
    const opts = this.host.options;
    if (this.#streak === 0) this.#streakStart = now;
    this.#streak++;
    this.detail = result.detail;
    const stableMs = now - this.#streakStart;
    if (this.#streak >= opts.successes && stableMs >= opts.stableForMs) {
      this.#hold(result, now);
      this.#emitAttempt(n, result, now, true);
      this.host.emit?.({ type: "satisfied", condition: this.c, elapsedMs: now });
      this.host.held(this);
      return undefined;
    }
    this.#emitAttempt(n, result, now, false, {
      successes: this.#streak,
      required: opts.successes,
      stableMs,
      requiredMs: opts.stableForMs,
    });
    let waitMs = pauseMs(opts, this.#failures, this.host.random);
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
    return waitMs;
  }

  #hold(result: ProbeResult & { status: "satisfied" }, now: number): void {
    this.satisfied = true;
    this.satisfiedAt = now;
    this.detail = result.detail;
    if (result.captures) this.captures = result.captures;
  }

  /**
   * Starts the probe's watcher: each change it reports cuts the current pause short. A
   * watcher that pushes its changes (`listen`: an isolated kind's) leaves nothing suspended
   * while it waits (docs/reliability.md, large manifests).
   */
  #startWatching(): void {
    const ctx = new RunWatch(this.#signal(), this);
    this.watching = follow(this.c.probe, ctx, this.#wakerOf().trigger)?.then(undefined, ctx.failed);
  }
}

const NO_CAPTURES: Readonly<Record<string, string>> = Object.freeze({});

/** An attempt ended by the run's end (or the condition's) has no result. */
const noResult = (): undefined => undefined;

/**
 * A condition's watcher's context: its signal, and its notices, each told once (human mode
 * only). Bound methods, not closures: a manifest's every object has one (docs/reliability.md,
 * large manifests).
 */
class RunWatch implements WatchContext {
  /** Notices already emitted; made at the first (most conditions have none). */
  #said: Set<string> | undefined;
  /** Bound: a kind's watcher may take it out of its context. */
  readonly notice: (text: string) => void;
  /** What the watcher's failure calls: the condition polls on, and says so. */
  readonly failed: (e: unknown) => void;

  readonly #run: ConditionRun;

  constructor(readonly signal: AbortSignal, run: ConditionRun) {
    this.#run = run;
    this.notice = this.#say.bind(this);
    this.failed = this.#failed.bind(this);
  }

  #say(text: string): void {
    // A watcher's error is text from outside: it may quote a URL or a secret (docs/contract.md §9).
    const host = this.#run.host;
    const message = redactText(text, host.secrets);
    this.#said ??= new Set();
    if (this.#said.has(message)) return;
    this.#said.add(message);
    host.emit?.({ type: "notice", condition: this.#run.c, message });
  }

  #failed(e: unknown): void {
    if (!this.signal.aborted) this.#say(`watching failed, polling: ${errorText(e)}`);
  }
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

  /** Cuts the current pause short (or the next one): a change came. Bound: a watcher calls it. */
  readonly trigger: () => void;

  /** `ended` (the condition's signal) cuts the current pause short, like a change. */
  constructor(ended: AbortSignal) {
    this.#ended = ended;
    this.trigger = this.#triggered.bind(this);
  }

  #triggered(): void {
    this.#pending = true;
    this.#sleeping?.abort(RUN_ENDED);
  }

  clear(): void {
    this.#pending = false;
  }

  /**
   * A pause of `ms`, unless a change came since `clear`. Not an async function: a frame
   * suspended per sleeping condition costs more than the promise (docs/reliability.md, large
   * manifests).
   */
  sleep(clock: Clock, ms: number): Promise<void> {
    // Listened to from the first pause on: a condition satisfied at once never pays for it.
    if (!this.#listening) {
      this.#listening = true;
      onAbort(this.#ended, this.trigger);
    }
    if (this.#pending) return Promise.resolve();
    const ctl = this.#spare ?? new Aborter();
    this.#spare = undefined;
    this.#sleeping = ctl;
    return clock.sleep(ms, ctl.signal);
  }

  /**
   * The pause `sleep` gave ended (its owner says so): its controller serves the next one
   * unless something aborted it.
   */
  slept(): void {
    const ctl = this.#sleeping;
    this.#sleeping = undefined;
    if (ctl !== undefined && !ctl.signal.aborted) this.#spare = ctl;
  }
}
