/**
 * Between parsing and running: the validation that needs a library, and the
 * loading of each kind's probe module (docs/contract.md §2). Both happen
 * before the run's clock starts, so a slow first import never eats into
 * `--timeout`, and a failed validation is still a usage error (exit 2) with
 * nothing probed.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { checkCaptureNames } from "./plan.ts";
import { type ConditionPlan, mapLeaves, type Plan } from "./plan.ts";
import { resultOf } from "./attempt.ts";
import { Pacer } from "./pace.ts";
import type { Invalid } from "./isolate_messages.ts";
import type {
  ConditionKind,
  ExpandContext,
  Fail,
  Probe,
  ProbeEnv,
  ProbeFactory,
  ProbeResult,
} from "./types.ts";

/** A condition with its probe, ready to be polled. */
export interface ReadyCondition extends ConditionPlan {
  readonly probe: Probe;
}

/** A plan whose conditions have their probes. */
export interface ReadyPlan extends Plan {
  readonly conditions: readonly ReadyCondition[];
}

/** How `validatePlan` runs. */
export interface ValidateOptions {
  /**
   * The process environment: the settings that only a run reads are checked as well
   * (`WAITCMD_MEMORY_CAP`, engine/isolate.ts).
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Validate the conditions of isolated kinds in their workers, which then serve the run's
   * probes: the libraries a validation needs load there (the CLI).
   */
  readonly isolate?: boolean;
  /** Once it aborts, the validation is not waited for (the run is cancelled anyway). */
  readonly signal?: AbortSignal;
  /** Takes turns of the event loop between conditions (engine/pace.ts). */
  readonly pacer?: Pacer;
}

/**
 * Runs every kind's library validation, in condition order; throws the first `UsageError`.
 */
export async function validatePlan(plan: Plan, opts: ValidateOptions = {}): Promise<void> {
  const env = opts.env ?? {};
  if (env.WAITCMD_MEMORY_CAP !== undefined) (await import("./memory.ts")).memoryCap(env);
  const validating = validateConditions(plan, opts.isolate === true, env, opts.pacer);
  if (opts.signal === undefined) return await validating;
  validating.catch(() => {}); // after a signal, of no interest
  await Promise.race([
    validating,
    new Promise<void>((resolve) => {
      if (opts.signal!.aborted) resolve();
      opts.signal!.addEventListener("abort", () => resolve(), { once: true });
    }),
  ]);
}

/** The validation itself: isolated kinds' in their workers (all at once), the others here. */
async function validateConditions(
  plan: Plan,
  isolate: boolean,
  env: Readonly<Record<string, string>>,
  pacer = new Pacer(),
): Promise<void> {
  const inWorkers = isolate
    ? [...new Set(plan.conditions.map((c) => c.kind))].filter((k) => k.isolate && k.validate)
    : [];
  const found = new Map<ConditionPlan, Invalid | undefined>();
  if (inWorkers.length > 0) {
    const { kindIsolate } = await import("./isolate.ts");
    await Promise.all(inWorkers.map(async (kind) => {
      const conditions = plan.conditions.filter((c) => c.kind === kind);
      const failures = await kindIsolate(kind.name, { env })
        .validate(conditions.map((c) => c.options));
      conditions.forEach((c, i) => found.set(c, failures[i]));
    }));
  }
  for (const c of plan.conditions) {
    await pacer.step();
    if (!c.kind.validate) continue;
    const where = `condition ${c.index} (${c.kindWord})`;
    const fail: Fail = (flag, message) => {
      throw new UsageError(flag ? `${where}: --${flag}` : where, message, c.kind.name);
    };
    if (!found.has(c)) await c.kind.validate(c.options, fail);
    else if (found.get(c) !== undefined) fail(found.get(c)!.flag, found.get(c)!.message);
  }
}

/** What expanding a plan reads files with (`ExpandContext` without the per-condition `fail`). */
export type ExpandIo = Omit<ExpandContext, "fail">;

/**
 * Replaces each condition whose kind expands it (`orch -f manifests/`) by the leaf conditions
 * it stands for, in its place, and numbers the conditions anew (docs/contract.md §1). A file
 * that cannot be read or parsed is a usage error naming the condition and flag.
 */
export async function expandPlan(
  plan: Plan,
  io: ExpandIo,
  pacer = new Pacer(io.signal),
): Promise<Plan> {
  if (!plan.conditions.some((c) => c.kind.expand)) return plan;
  const parts = new Map<ConditionPlan, readonly ConditionPlan[]>();
  for (const c of plan.conditions) {
    await pacer.step();
    const where = `condition ${c.index} (${c.kindWord})`;
    const leaves = await c.kind.expand?.(c.options, {
      ...io,
      fail: (flag, message) => {
        throw new UsageError(flag ? `${where}: --${flag}` : where, message, c.kind.name);
      },
    });
    if (leaves === undefined) continue;
    if (c.label !== undefined) {
      throw new UsageError(
        `${where}: --label`,
        "names one condition, and this one stands for one condition per object; label a group " +
          "instead: all [ ... ] --label TEXT",
        c.kind.name,
      );
    }
    parts.set(
      c,
      leaves.map((p) => ({
        ...c,
        name: `${c.negate ? "not " : ""}${c.kindWord} ${p.target}`,
        target: p.target,
        options: p.options,
        captures: p.captures ?? [],
      })),
    );
  }
  const expanded = mapLeaves(plan, (c) => parts.get(c) ?? [c]);
  checkCaptureNames(expanded.conditions);
  return { ...plan, ...expanded };
}

/** How `preparePlan` makes the probes. */
export interface PrepareOptions {
  /**
   * Every probe on this thread, isolated kinds' too: for tests that drive probes with a fake
   * clock or look at them in-process.
   */
  readonly inProcess?: boolean;
  /** The entry module of isolated kinds' workers (a test's own); conditions/isolate_worker.ts. */
  readonly workerUrl?: URL;
  /** Takes turns of the event loop while the probes are made (engine/pace.ts). */
  readonly pacer?: Pacer;
}

/**
 * Loads each kind's probe module once (concurrently) and makes one probe per
 * condition, awaiting the factories that import a library for their options. The probes of
 * a kind that declares `isolate` are made in a worker of the kind's own, which imports the
 * probe module there (engine/isolate.ts); the others on this thread.
 */
export async function preparePlan(
  plan: Plan,
  env: ProbeEnv,
  opts: PrepareOptions = {},
): Promise<ReadyPlan> {
  const kinds = [...new Set(plan.conditions.map((c) => c.kind))];
  const isolated = new Set(opts.inProcess ? [] : kinds.filter((k) => k.isolate));
  const [factories, isolates] = await Promise.all([
    Promise.all(
      kinds.filter((k) => !isolated.has(k)).map(async (k) => [k, await k.load()] as const),
    ).then((entries) => new Map<ConditionKind, ProbeFactory<unknown>>(entries)),
    isolated.size === 0 ? undefined : isolatedProbes(plan, isolated, env, opts),
  ]);
  // In slices: tens of thousands of probes are made without holding a signal (§3).
  const pacer = opts.pacer ?? new Pacer();
  const made: (Probe | Promise<Probe>)[] = [];
  for (const c of plan.conditions) {
    made.push(isolates?.get(c) ?? factories.get(c.kind)!(c.options, env));
    await pacer.step();
  }
  // Most factories are synchronous: a thousand such conditions need no thousand awaits.
  const probes = made.some((p) => p instanceof Promise)
    ? await Promise.all(made)
    : made as readonly Probe[];
  const conditions: ReadyCondition[] = [];
  for (const [i, c] of plan.conditions.entries()) {
    const probe = probes[i]!;
    conditions.push({ ...c, probe: c.negate ? negated(probe) : probe });
    await pacer.step();
  }
  return { ...plan, conditions };
}

/** The probes of the conditions of isolated kinds, made in one worker per kind. */
async function isolatedProbes(
  plan: Plan,
  kinds: ReadonlySet<ConditionKind>,
  env: ProbeEnv,
  opts: PrepareOptions,
): Promise<Map<ConditionPlan, Probe>> {
  const { kindIsolate, noteMemoryFloor, setMemoryCap } = await import("./isolate.ts");
  const { memoryCap } = await import("./memory.ts");
  // Checked by validatePlan (a usage error); without the variable, the cap stays as it is.
  if (env.env.WAITCMD_MEMORY_CAP !== undefined) {
    try {
      setMemoryCap(memoryCap(env.env));
    } catch {
      // A caller that skipped validatePlan keeps the cap it had.
    }
  }
  const out = new Map<ConditionPlan, Probe>();
  const isolates = [...kinds].map((kind) =>
    [kind, kindIsolate(kind.name, { env: env.env, workerUrl: opts.workerUrl })] as const
  );
  try {
    await Promise.all(isolates.map(async ([kind, isolate]) => {
      const conditions = plan.conditions.filter((c) => c.kind === kind);
      const probes = await isolate.probes(conditions.map((c) => c.options), env.secrets);
      conditions.forEach((c, i) => out.set(c, probes[i]!));
    }));
  } catch (e) {
    // One kind that cannot load: the others' workers end with it.
    await Promise.all(isolates.map(([, isolate]) => isolate.close()));
    throw e;
  }
  noteMemoryFloor();
  return out;
}

/**
 * `not`: holds while the probe is pending, with the probe's error text as
 * `detail`; a fatal result stays fatal. Watching is the probe's own, so an
 * event-driven kind stays event-driven (docs/contract.md §4).
 */
export function negated(probe: Probe): Probe {
  return {
    async check(ctx) {
      // The probe's thrown errors are pending results here too: `not` holds on them.
      let r: ProbeResult;
      try {
        r = await probe.check(ctx);
      } catch (e) {
        r = resultOf(e);
      }
      switch (r.status) {
        case "pending":
          return { status: "satisfied", detail: r.error };
        case "satisfied":
          return { status: "pending", error: `still holds: ${r.detail}` };
        case "fatal":
          return r;
      }
    },
    watch: probe.watch?.bind(probe),
    listen: probe.listen?.bind(probe),
    baseline: probe.baseline?.bind(probe),
    close: probe.close?.bind(probe),
  };
}
