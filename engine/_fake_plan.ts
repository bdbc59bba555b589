/**
 * Plans for engine and output tests: fake conditions around given probes, or given conditions.
 *
 * @module
 */

import { DEFAULT_OPTIONS, type RunOptions } from "./options.ts";
import { type ConditionPlan, flatRoot, type Plan } from "./plan.ts";
import type { ReadyCondition, ReadyPlan } from "./prepare.ts";
import type { ConditionKind, Probe } from "./types.ts";
import { fakeKind } from "./_fake_kind.ts";

/**
 * One condition of `kind` a probe (named `name`, else `fake cN`; target `target`, else `cN`),
 * every one at the root, under the defaults and `options`.
 */
export function fakePlan(
  probes: readonly { probe: Probe; guard?: boolean; name?: string; target?: string }[],
  options: Partial<RunOptions> = {},
  kind: ConditionKind = fakeKind(),
): ReadyPlan {
  const conditions: ReadyCondition[] = probes.map((p, i) => ({
    index: i + 1,
    kind,
    kindWord: "fake",
    guard: p.guard ?? false,
    negate: false,
    name: p.name ?? `fake c${i + 1}`,
    target: p.target ?? `c${i + 1}`,
    options: undefined,
    captures: [],
    probe: p.probe,
  }));
  return flatPlan(conditions, options);
}

/** A plan of `conditions`, every one at the root, under the defaults and `options`. */
export function flatPlan<C extends ConditionPlan>(
  conditions: readonly C[],
  options: Partial<RunOptions> = {},
): Plan & { readonly conditions: readonly C[] } {
  const opts = { ...DEFAULT_OPTIONS, ...options };
  return {
    options: opts,
    conditions,
    root: flatRoot(opts.mode, conditions),
    then: undefined,
    secrets: [],
  };
}
