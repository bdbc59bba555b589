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

/**
 * How deep groups nest at most, on the command line and in recipes (docs/contract.md §1,
 * groups): a usage error beyond. The parser, the recipe's reader and the plan's walkers
 * recurse once per group; 100 is far beyond any real plan and far below the stack's depth.
 */
export const MAX_GROUP_DEPTH = 100;

/** The usage error's text for a group nested deeper than {@link MAX_GROUP_DEPTH}. */
export const TOO_DEEP = `groups nest at most ${MAX_GROUP_DEPTH} deep`;

/**
 * At most this many characters of its members' names make an unlabelled group's name
 * (docs/contract.md §1, groups). Each member's line names its group, and a group's name is
 * part of its parent's: a name that grew with its members would make output quadratic in the
 * number of members and in the depth of nesting.
 */
export const GROUP_NAME_MAX = 60;

/**
 * At most this many characters of a group's name where each member's line repeats it
 * (a label is the user's and may be long; a natural name is shorter than this).
 */
export const GROUP_NAME_SHOWN = 100;

/** `text` cut to `max` characters, `…` ending it when cut (a surrogate pair is kept whole). */
export function cutText(text: string, max: number = GROUP_NAME_MAX): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * `any[A, B]`: the name of a group from its members' names, as many as fit in
 * {@link GROUP_NAME_MAX} characters and then how many more there are
 * (`any[tcp a:1, tcp b:2, … 4998 more]`). Only the names shown are read, so a group's name
 * costs no more than its first members.
 */
export function groupName(op: GroupOp, children: readonly PlanNode[]): string {
  const shown: string[] = [];
  let used = 0;
  for (const child of children) {
    const name = nodeName(child);
    const room = GROUP_NAME_MAX - used;
    if (name.length <= room) {
      shown.push(name);
      used += name.length + 2;
      continue;
    }
    // The first member is shown, cut; a later one that does not fit is counted.
    if (shown.length === 0) shown.push(cutText(name));
    break;
  }
  const more = children.length - shown.length;
  if (more > 0) shown.push(`… ${more} more`);
  return `${op}[${shown.join(", ")}]`;
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
 * The variable `then` gets a named group in (docs/contract.md §7): `WAITCMD_CAPTURE_` and the
 * name in upper case, other characters as `_`.
 */
export function captureVariable(name: string): string {
  return `WAITCMD_CAPTURE_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/**
 * Two named groups that give `then` one variable (`port` and `PORT` give the same one),
 * in two conditions or in one, would give it one variable for two values (docs/contract.md
 * §7, captures): a usage error naming both and the variable.
 */
export function checkCaptureNames(conditions: readonly ConditionPlan[]): void {
  const owner = new Map<string, { c: ConditionPlan; name: string }>();
  for (const c of conditions) {
    // Most conditions capture nothing: no set is made for them (a thousand conditions).
    if (c.captures.length === 0) continue;
    for (const name of new Set(c.captures)) {
      const variable = captureVariable(name);
      const first = owner.get(variable);
      if (first) {
        const where = first.c === c
          ? "this condition"
          : `condition ${first.c.index} (${first.c.kindWord})`;
        throw new UsageError(
          `condition ${c.index} (${c.kindWord})`,
          first.name === name
            ? `capture group ${q(name)} is also captured by ${where}; ` +
              "give each named group its own name"
            : `capture groups ${q(name)} and ${q(first.name)} (${where}) both give then ` +
              `${variable}; give each named group a name that differs in more than case`,
          c.kind.name,
        );
      }
      owner.set(variable, { c, name });
    }
  }
}
