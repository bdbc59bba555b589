/**
 * Which groups of a plan hold, as its leaves are decided (docs/contract.md
 * §4, groups): an `all` group holds when every member holds and fails when
 * one fails; an `any` group holds when one member holds and fails when every
 * member fails. The run is the root group. Guards are no members: they end
 * the run by themselves.
 *
 * @module
 */

import type { GroupNode } from "./plan.ts";

/** How a group stands. */
export type GroupState = "open" | "held" | "failed";

/** One group's tally. */
class Tally {
  held = 0;
  failed = 0;
  state: GroupState = "open";
  readonly members: number;

  constructor(readonly node: GroupNode, readonly parent: Tally | undefined) {
    this.members = node.children.filter((c) => c.type === "group" || !c.condition.guard).length;
  }

  /** Counts a member that held (`true`) or failed; returns whether this group is decided now. */
  count(held: boolean): boolean {
    if (this.state !== "open") return false;
    if (held) this.held++;
    else this.failed++;
    const all = this.node.op === "all";
    if (all ? this.held === this.members : this.held > 0) this.state = "held";
    else if (all ? this.failed > 0 : this.failed === this.members) this.state = "failed";
    return this.state !== "open";
  }
}

/** The groups of one run and how each stands. */
export class Verdict {
  readonly #byLeaf = new Map<number, Tally>();
  readonly #byNode = new Map<GroupNode, Tally>();
  readonly #root: Tally;

  constructor(root: GroupNode) {
    this.#root = this.#add(root, undefined);
  }

  #add(node: GroupNode, parent: Tally | undefined): Tally {
    const tally = new Tally(node, parent);
    this.#byNode.set(node, tally);
    for (const child of node.children) {
      if (child.type === "group") this.#add(child, tally);
      else this.#byLeaf.set(child.condition.index, tally);
    }
    return tally;
  }

  /** How the run (the root group) stands. */
  get run(): GroupState {
    return this.#root.state;
  }

  /** How a group stands. */
  stateOf(node: GroupNode): GroupState {
    return this.#byNode.get(node)?.state ?? "open";
  }

  /**
   * A non-guard leaf held (`true`) or gave up; returns the groups this decided,
   * innermost first (the root last, when it was decided too).
   */
  leaf(index: number, held: boolean): GroupNode[] {
    const decided: GroupNode[] = [];
    let tally = this.#byLeaf.get(index);
    let outcome = held;
    while (tally && tally.count(outcome)) {
      decided.push(tally.node);
      outcome = tally.state === "held";
      tally = tally.parent;
    }
    return decided;
  }
}
