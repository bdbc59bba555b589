/**
 * container's judging: what the containers found mean for the wait
 * (docs/contract.md §5 container). Pure; the probe feeds it what the engine said.
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";

/** What one container looks like to a check. */
export interface ContainerState {
  /** Name without the leading slash. */
  readonly name: string;
  readonly id: string;
  /** created, running, paused, restarting, removing, exited, dead. */
  readonly status: string;
  /** healthy, unhealthy, starting, or none without a healthcheck. */
  readonly health: string;
  readonly exitCode: number | undefined;
}

/** What the condition asks for. */
export interface ContainerWant {
  readonly status: string;
  /** Undefined: health is not checked. */
  readonly health: string | undefined;
}

/** How the target was found. */
export type Selection =
  | { readonly by: "container" }
  | { readonly by: "service"; readonly service: string };

/** `running, healthy`; `exited (exit code 1)`; the health only when there is a healthcheck. */
export function describeContainer(c: ContainerState): string {
  const code = (c.status === "exited" || c.status === "dead") && c.exitCode !== undefined
    ? ` (exit code ${c.exitCode})`
    : "";
  // Docker keeps the last health of a stopped container; it only means something while it runs.
  const live = c.status === "running" || c.status === "paused" || c.status === "restarting";
  const health = c.health !== "none" && live ? `, ${c.health}` : "";
  return `${c.status}${code}${health}`;
}

/** `running`, `running, healthy`, `running, no healthcheck`. */
function wantText(want: ContainerWant): string {
  if (want.health === undefined) return want.status;
  return `${want.status}, ${want.health === "none" ? "no healthcheck" : want.health}`;
}

function holds(c: ContainerState, want: ContainerWant): boolean {
  return c.status === want.status && (want.health === undefined || c.health === want.health);
}

/** Decides an attempt from the containers found (all of them must match). */
export function judgeContainers(
  found: readonly ContainerState[],
  want: ContainerWant,
  sel: Selection,
): ProbeResult {
  if (sel.by === "container" || found.length === 1) {
    const c = found[0]!;
    const of = sel.by === "service" ? ` (service ${sel.service})` : "";
    const text = `container ${c.name} ${describeContainer(c)}${of}`;
    return holds(c, want)
      ? { status: "satisfied", detail: text }
      : { status: "pending", error: `${text}; want ${wantText(want)}` };
  }
  const ok = found.filter((c) => holds(c, want));
  const shown = wantText(want);
  if (ok.length === found.length) {
    return {
      status: "satisfied",
      detail: `service ${sel.service}: ${found.length} containers ${shown}`,
    };
  }
  const bad = found.filter((c) => !holds(c, want));
  const first = bad[0]!;
  const more = bad.length > 1 ? ` (and ${bad.length - 1} more)` : "";
  return {
    status: "pending",
    error: `service ${sel.service}: ${ok.length}/${found.length} containers ${shown}; ` +
      `${first.name} ${describeContainer(first)}${more}`,
  };
}
