/**
 * What a run is asked to do, after parsing: its options, its conditions (the
 * leaves) and the tree of `any [ … ]` / `all [ … ]` groups that combines
 * them (docs/contract.md §1, groups). The whole command line is a group
 * whose op is `--mode`; a plan without groups is that one group of leaves.
 *
 * @module
 */

import type { RunOptions } from "./options.ts";
import type { ConditionKind } from "./types.ts";
import { UsageError } from "./errors.ts";
import { q } from "./flag_values.ts";

/** One condition of a run, parsed and validated; engine/prepare.ts gives it its probe. */
export interface ConditionPlan {
  /** 1-based position among the run's conditions, in command-line order. */
  readonly index: number;
  readonly kind: ConditionKind;
  /** The kind word as typed (an alias stays an alias in the display name). */
  readonly kindWord: string;
  readonly guard: boolean;
  /** `not`: the condition holds while its probe is pending (docs/contract.md §4). */
  readonly negate: boolean;
  /** Display name: `[not ]<kind word> <target>`, or `--label`. */
  readonly name: string;
  /** Its `--label`, when given. */
  readonly label?: string;
  /** Its own `--attempt-timeout` (after the kind), which wins over the global one. */
  readonly attemptTimeoutMs?: number;
  readonly target: string;
  /** What the kind's `parse` returned, for its probe module. */
  readonly options: unknown;
  /** Named groups it can capture for `then` (docs/contract.md §7, captures). */
  readonly captures: readonly string[];
  /** Its flags' words as typed, `--label` left out (for --explain). */
  readonly words?: readonly string[];
  /** The command of a command-shaped kind (exec), as typed. */
  readonly command?: readonly string[];
  /** The path of its groups (`2.any`, `2.any.1.all`); undefined outside every group. */
  readonly group?: string;
}

/** How a group combines its members. */
export type GroupOp = "any" | "all";

/** A leaf of the plan: one condition. */
export interface LeafNode {
  readonly type: "leaf";
  readonly condition: ConditionPlan;
}

/** A group of the plan: `any [ … ]` or `all [ … ]`, or the run itself. */
export interface GroupNode {
  readonly type: "group";
  readonly op: GroupOp;
  /** `2.any`: its position among its siblings and op, after its parent's path; "" for the run. */
  readonly path: string;
  /** `any[tcp a:1, tcp b:2]`, or its `--label`. */
  readonly name: string;
  /** The `--label` after its `]`, if given. */
  readonly label?: string;
  readonly children: readonly PlanNode[];
}

/** A node of the plan's tree. */
export type PlanNode = LeafNode | GroupNode;

/** Everything a run needs. */
export interface Plan {
  readonly options: RunOptions;
  /** Every condition (leaf), in command-line order; `conditions[i].index === i + 1`. */
  readonly conditions: readonly ConditionPlan[];
  /** The run as a group of `--mode`'s op; its children are the top-level conditions and groups. */
  readonly root: GroupNode;
  /** The `-- then <command...>` segment, if given. */
  readonly then: readonly string[] | undefined;
  /** Values that must never appear in any output. */
  readonly secrets: readonly string[];
}

/** `any[A, B]`: the name of a group from its members' names. */
export function groupName(op: GroupOp, children: readonly PlanNode[]): string {
  return `${op}[${children.map(nodeName).join(", ")}]`;
}

/** The display name of a node. */
export function nodeName(node: PlanNode): string {
  return node.type === "leaf" ? node.condition.name : node.name;
}

/** The run's group over these conditions, none of them in a group. */
export function flatRoot(op: GroupOp, conditions: readonly ConditionPlan[]): GroupNode {
  return {
    type: "group",
    op,
    path: "",
    name: "",
    children: conditions.map((condition) => ({ type: "leaf", condition })),
  };
}

/** Whether the plan has groups below the run's own. */
export function hasGroups(plan: Pick<Plan, "root">): boolean {
  return plan.root.children.some((n) => n.type === "group");
}

/** Every group below `node` (itself included), parents before children. */
export function groupsOf(node: GroupNode): GroupNode[] {
  const out: GroupNode[] = [node];
  for (const child of node.children) if (child.type === "group") out.push(...groupsOf(child));
  return out;
}

/**
 * The tree with each leaf replaced by the conditions `map` gives for it (none, one or
 * several), every condition numbered anew in order, and `conditions` listed again.
 */
export function mapLeaves(
  plan: Plan,
  map: (c: ConditionPlan) => readonly ConditionPlan[],
): Pick<Plan, "root" | "conditions"> {
  const conditions: ConditionPlan[] = [];
  const walk = (g: GroupNode): GroupNode => {
    const children = g.children.flatMap((n): PlanNode[] => {
      if (n.type === "group") return [walk(n)];
      return map(n.condition).map((c) => {
        const condition = { ...c, index: conditions.length + 1 };
        conditions.push(condition);
        return { type: "leaf", condition };
      });
    });
    const name = g.path === "" ? "" : g.label ?? groupName(g.op, children);
    return { ...g, name, children };
  };
  const root = walk(plan.root);
  return { root, conditions };
}

/**
 * Two conditions that can capture one name would give `then` one variable for two values
 * (docs/contract.md §7, captures): a usage error naming both.
 */
export function checkCaptureNames(conditions: readonly ConditionPlan[]): void {
  const owner = new Map<string, ConditionPlan>();
  for (const c of conditions) {
    // Most conditions capture nothing: no set is made for them (a thousand conditions).
    if (c.captures.length === 0) continue;
    for (const name of new Set(c.captures)) {
      const first = owner.get(name);
      if (first) {
        throw new UsageError(
          `condition ${c.index} (${c.kindWord})`,
          `capture group ${
            q(name)
          } is also captured by condition ${first.index} (${first.kindWord}); ` +
            "give each named group its own name",
          c.kind.name,
        );
      }
      owner.set(name, c);
    }
  }
}
