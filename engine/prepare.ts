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
import { checkCaptureNames } from "./grammar.ts";
import { type ConditionPlan, mapLeaves, type Plan } from "./plan.ts";
import { resultOf } from "./attempt.ts";
import type {
  ConditionKind,
  ExpandContext,
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

/** Runs every kind's library validation, in condition order; throws the first `UsageError`. */
export async function validatePlan(plan: Plan): Promise<void> {
  for (const c of plan.conditions) {
    if (!c.kind.validate) continue;
    const where = `condition ${c.index} (${c.kindWord})`;
    await c.kind.validate(c.options, (flag, message) => {
      throw new UsageError(flag ? `${where}: --${flag}` : where, message, c.kind.name);
    });
  }
}

/** What expanding a plan reads files with (`ExpandContext` without the per-condition `fail`). */
export type ExpandIo = Omit<ExpandContext, "fail">;

/**
 * Replaces each condition whose kind expands it (`orch -f manifests/`) by the leaf conditions
 * it stands for, in its place, and numbers the conditions anew (docs/contract.md §1). A file
 * that cannot be read or parsed is a usage error naming the condition and flag.
 */
export async function expandPlan(plan: Plan, io: ExpandIo): Promise<Plan> {
  if (!plan.conditions.some((c) => c.kind.expand)) return plan;
  const parts = new Map<ConditionPlan, readonly ConditionPlan[]>();
  for (const c of plan.conditions) {
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

/**
 * Loads each kind's probe module once (concurrently) and makes one probe per
 * condition, awaiting the factories that import a library for their options.
 */
export async function preparePlan(plan: Plan, env: ProbeEnv): Promise<ReadyPlan> {
  const kinds = [...new Set(plan.conditions.map((c) => c.kind))];
  const factories = new Map<ConditionKind, ProbeFactory<unknown>>(
    await Promise.all(kinds.map(async (k) => [k, await k.load()] as const)),
  );
  const made = plan.conditions.map((c) => factories.get(c.kind)!(c.options, env));
  // Most factories are synchronous: a thousand such conditions need no thousand awaits.
  const probes = made.some((p) => p instanceof Promise)
    ? await Promise.all(made)
    : made as readonly Probe[];
  return {
    ...plan,
    conditions: plan.conditions.map((c, i) => {
      const probe = probes[i]!;
      return { ...c, probe: c.negate ? negated(probe) : probe };
    }),
  };
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
    close: probe.close?.bind(probe),
  };
}
