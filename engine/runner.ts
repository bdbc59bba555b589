/**
 * Polls a plan's conditions concurrently until the run is decided
 * (docs/contract.md §4). Each condition lives in its own
 * `ConditionRun` (engine/condition.ts); the groups' tally is a `Verdict`
 * (engine/verdict.ts); this module only orchestrates: the deadline, the
 * signal, the end of the run and its report. Time comes from an injected
 * clock; nothing here prints or exits.
 *
 * @module
 */

import type { Clock } from "./clock.ts";
import { onAbort } from "./abort.ts";
import { ConditionRun, RUN_ENDED, type RunHost } from "./condition.ts";
import { AttemptSlots } from "./slots.ts";
import { errorText } from "./errors.ts";
import type { RunOptions } from "./options.ts";
import { Pacer } from "./pace.ts";
import { groupsOf } from "./plan.ts";
import type { ReadyPlan } from "./prepare.ts";
import type { Report, RunEvent, RunStatus } from "./report.ts";
import type { SecretRegistry } from "./masking.ts";
import { Verdict } from "./verdict.ts";

export { pauseMs, STABLE_SAMPLES } from "./condition.ts";
export type { ConditionReport, Report, RunEvent, RunStatus, Streak } from "./report.ts";

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
  /**
   * Aborting it ends the run as `fatal`, its reason (a text) the report's `failure`: a started
   * command that exited before the conditions held (docs/contract.md §4, `--start`).
   */
  readonly failure?: AbortSignal;
  /**
   * Called once the run is decided and its probes released, before the report is made: what
   * the run started is stopped or left running there, and reported.
   */
  readonly finishing?: (status: RunStatus) => Promise<Pick<Report, "started">>;
  /**
   * The run's secrets: masked by value in the texts attempts and watchers bring in from outside
   * (docs/contract.md §9). Without it, only URL passwords are.
   */
  readonly secrets?: SecretRegistry;
}

/** Runs the plan to its end and returns the report. Never throws for a target's failure. */
export async function run(plan: ReadyPlan, ctx: RunContext): Promise<Report> {
  const r = new Run(plan, ctx);
  r.emit?.({ type: "start", plan });
  const onCancel = () => r.finish("cancelled");
  if (ctx.signal?.aborted) onCancel();
  ctx.signal?.addEventListener("abort", onCancel, { once: true });
  const onFailure = () => r.fail(String(ctx.failure!.reason));
  if (ctx.failure?.aborted) onFailure();
  ctx.failure?.addEventListener("abort", onFailure, { once: true });
  // `--timeout 0`/`none`: no deadline; the run ends on a verdict or a signal.
  const deadline = Number.isFinite(r.options.timeoutMs)
    ? r.clock.sleep(r.options.timeoutMs, r.ended).then(() => r.finish("timeout"))
    : Promise.resolve();
  // The conditions start in slices with turns of the event loop between them: the first
  // attempts of tens of thousands of conditions would hold the deadline and a signal.
  const decided = new Promise<void>((resolve) => onAbort(r.ended, resolve));
  const pacer = new Pacer();
  for (const c of r.conditions) {
    if (r.ended.aborted) break; // a condition never started reports no attempt
    r.started++;
    c.start();
    await pacer.step();
  }
  // The run is over once it is decided: a condition asleep between two attempts is not waited
  // for (engine/condition.ts, `end`). Conditions that all ended undecided wait for the deadline.
  await Promise.race([decided, r.allPolled().then(() => deadline)]);
  ctx.signal?.removeEventListener("abort", onCancel);
  ctx.failure?.removeEventListener("abort", onFailure);
  await r.release(ctx.graceMs ?? 3000);
  const base = r.report(ctx.signal?.reason);
  const report = ctx.finishing ? { ...base, ...await ctx.finishing(base.status) } : base;
  r.emit?.({ type: "end", report });
  return report;
}

/** One run's shared state: what its conditions tell it, and how it ends. */
class Run implements RunHost {
  readonly clock: Clock;
  readonly options: RunOptions;
  readonly random: () => number;
  readonly emit: ((e: RunEvent) => void) | undefined;
  readonly secrets: SecretRegistry | undefined;
  readonly conditions: readonly ConditionRun[];
  readonly slots = new AttemptSlots();
  readonly #ctl = new AbortController();
  readonly #verdict: Verdict;
  readonly #start: number;
  #outcome: { status: RunStatus; decidedBy?: number; at: number } | undefined;
  /** Conditions started, and those whose loops ended (`polled`). */
  started = 0;
  #polled = 0;
  /** Whether every condition that will start has (`allPolled` was asked). */
  #startedAll = false;
  /** Settles once every condition started has ended its loop (rejects when one threw). */
  readonly #allPolled = Promise.withResolvers<void>();
  /** The conditions whose attempt or watcher the end aborted, and what settles each. */
  readonly #settling = new Map<ConditionRun, Promise<void>>();
  #failure: string | undefined;

  constructor(readonly plan: ReadyPlan, ctx: RunContext) {
    this.clock = ctx.clock;
    this.options = plan.options;
    this.random = ctx.random ?? Math.random;
    this.secrets = ctx.secrets;
    this.emit = ctx.onEvent && guarded(ctx.onEvent);
    this.#start = this.clock.now();
    this.#verdict = new Verdict(plan.root);
    this.conditions = plan.conditions.map((c) => new ConditionRun(c, this));
    // Handled by `allPolled`'s awaiter; a loop may throw before it is asked.
    this.#allPolled.promise.catch(() => {});
    // The conditions' attempts are aborted by one listener when the run ends: a listener
    // each on the run's signal would make a run of n conditions cost O(n²).
    this.#ctl.signal.addEventListener("abort", () => {
      for (const c of this.conditions) {
        const settling = c.end();
        if (settling !== undefined) this.#settling.set(c, settling);
      }
    }, { once: true });
  }

  get ended(): AbortSignal {
    return this.#ctl.signal;
  }

  elapsed(): number {
    return this.clock.now() - this.#start;
  }

  timedOut(): boolean {
    return this.#outcome?.status === "timeout";
  }

  pastDeadline(): boolean {
    if (this.#outcome !== undefined || this.elapsed() < this.options.timeoutMs) return false;
    this.finish("timeout");
    return true;
  }

  finish(status: RunStatus, decidedBy?: number): void {
    if (this.#outcome) return;
    this.#outcome = { status, decidedBy, at: this.elapsed() };
    this.#ctl.abort(RUN_ENDED);
    this.slots.close();
  }

  /** Ends the run as `fatal` for a reason outside every condition. */
  fail(failure: string): void {
    if (this.#outcome) return;
    this.#failure = failure;
    this.finish("fatal");
  }

  polled(_c: ConditionRun, error?: unknown): void {
    if (error !== undefined) return this.#allPolled.reject(error);
    this.#polled++;
    this.#checkPolled();
  }

  /**
   * What settles once the loops of all the conditions started have ended (asked after the
   * last started): a count, not a promise per condition (docs/reliability.md, large manifests).
   */
  allPolled(): Promise<void> {
    this.#startedAll = true;
    this.#checkPolled();
    return this.#allPolled.promise;
  }

  #checkPolled(): void {
    if (this.#startedAll && this.#polled >= this.started) this.#allPolled.resolve();
  }

  held(c: ConditionRun): void {
    this.#decide(c, true);
  }

  gaveUp(c: ConditionRun): void {
    this.#decide(c, false);
  }

  fatal(c: ConditionRun): void {
    this.finish("fatal", c.c.index);
  }

  /** Tallies a leaf's outcome; a decided group stops its members, a decided root ends the run. */
  #decide(c: ConditionRun, held: boolean): void {
    for (const group of this.#verdict.leaf(c.c.index, held)) {
      if (group === this.plan.root) {
        const first = held && this.options.mode === "any" ? c.c.index : undefined;
        return this.finish(held ? "satisfied" : "exhausted", held ? first : c.c.index);
      }
      this.emit?.({ type: "group", group, held, elapsedMs: this.elapsed() });
      for (const leaf of groupsOf(group).flatMap((g) => g.children)) {
        if (leaf.type === "leaf" && !leaf.condition.guard) {
          this.conditions[leaf.condition.index - 1]!.stop();
        }
      }
    }
  }

  /**
   * Aborted attempts settle at once (docs/contract.md §8); closing the probes (killing exec
   * children, closing clients) gets a bounded grace period, so no probe can hold the exit. A
   * probe is closed once its aborted attempt has settled; the watchers are awaited; nothing
   * else is: an attempt that holds nothing outside the process ends with it.
   */
  async release(graceMs: number): Promise<void> {
    const grace = new AbortController();
    const watchers: Promise<void>[] = [];
    const closing: Promise<void>[] = [];
    // Only the probes that hold something: an async closer each would cost a frame and a
    // promise per condition (docs/performance.md, "Cost per condition").
    for (const c of this.conditions) {
      if (c.watching !== undefined) watchers.push(c.watching);
      if (c.c.probe.close) closing.push(closeProbe(c.c.probe, this.#settling.get(c)));
    }
    if (watchers.length + closing.length === 0) return;
    await Promise.race([
      Promise.allSettled([...watchers, ...closing]),
      this.clock.sleep(graceMs, grace.signal),
    ]);
    grace.abort();
  }

  report(reason: unknown): Report {
    const o = this.#outcome ?? { status: "cancelled" as const, at: this.elapsed() };
    const groupNames = new Map(groupsOf(this.plan.root).map((g) => [g.path, g.name]));
    return {
      status: o.status,
      elapsedMs: o.at,
      mode: this.options.mode,
      timeoutMs: this.options.timeoutMs,
      decidedBy: o.decidedBy,
      signal: o.status === "cancelled" && typeof reason === "string" ? reason : undefined,
      ...(this.#failure === undefined ? {} : { failure: this.#failure }),
      conditions: this.conditions.map((c) => {
        const r = c.report();
        return r.group === undefined ? r : { ...r, groupName: groupNames.get(r.group) };
      }),
    };
  }
}

/**
 * `probe.close()` once `settling` (its aborted attempt) has settled, awaited; what it throws is
 * settled by `Promise.allSettled`.
 */
async function closeProbe(
  probe: { close?(): void | Promise<void> },
  settling: Promise<void> | undefined,
): Promise<void> {
  await settling?.catch(() => {}); // a poll that failed leaves the probe to close all the same
  await probe.close?.();
}

/** The listener, guarded: a broken renderer must not decide the run; it is reported once. */
function guarded(onEvent: (e: RunEvent) => void): (e: RunEvent) => void {
  let failed = false;
  return (e) => {
    try {
      onEvent(e);
    } catch (err) {
      if (failed) return;
      failed = true;
      console.error(`waitcmd: output failed: ${errorText(err)}`);
    }
  };
}
