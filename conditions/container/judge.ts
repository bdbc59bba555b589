/**
 * container's judging: what the containers found mean for the wait
 * (docs/contract.md §5 container). Pure; the probe feeds it what the engine said.
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";
import { type PortSpec, portText } from "./netns.ts";

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
  /** The main process on the engine's host; 0 when the container does not run. */
  readonly pid: number;
  /** The ports of `--listening` that do not listen; undefined until they are read. */
  readonly closed?: readonly PortSpec[];
}

/** What the condition asks for. */
export interface ContainerWant {
  /** A State.Status of the Engine API, or `any`: the container exists. */
  readonly status: string;
  /** Undefined: health is not checked. */
  readonly health: string | undefined;
  /** `--exit-code`: the container has exited with this code (status is then `exited`). */
  readonly exitCode?: number;
  /** `--listening`: these ports listen in the container's network namespace. */
  readonly listening?: readonly PortSpec[];
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

const portsText = (ports: readonly PortSpec[]) => ports.map(portText).join(", ");

/**
 * `running`, `running, healthy`, `running, no healthcheck`,
 * `exited (exit code 0)`, `running, listening on 8080/tcp`.
 */
function wantText(want: ContainerWant): string {
  let text = want.status === "any" ? "any status" : want.status;
  if (want.exitCode !== undefined) text += ` (exit code ${want.exitCode})`;
  if (want.health !== undefined) {
    text += `, ${want.health === "none" ? "no healthcheck" : want.health}`;
  }
  if (want.listening?.length) text += `, listening on ${portsText(want.listening)}`;
  return text;
}

/** Whether the status, health and exit code are the wanted ones (the ports aside). */
export function stateHolds(c: ContainerState, want: ContainerWant): boolean {
  return (want.status === "any" || c.status === want.status) &&
    (want.health === undefined || c.health === want.health) &&
    (want.exitCode === undefined || c.exitCode === want.exitCode);
}

function holds(c: ContainerState, want: ContainerWant): boolean {
  return stateHolds(c, want) && (!want.listening?.length || c.closed?.length === 0);
}

/** The container as a pending text shows it: its state, and the ports that do not listen. */
function shown(c: ContainerState): string {
  const closed = c.closed?.length ? `, not listening on ${portsText(c.closed)}` : "";
  return `${describeContainer(c)}${closed}`;
}

/** A container that has exited with another code than `--exit-code` never will with it. */
function wrongExit(c: ContainerState, want: ContainerWant): boolean {
  return want.exitCode !== undefined && c.status === "exited" && c.exitCode !== want.exitCode;
}

/**
 * Decides an attempt from the containers found (all of them must match).
 * With `--listening`, each container's `closed` ports must have been read.
 */
export function judgeContainers(
  found: readonly ContainerState[],
  want: ContainerWant,
  sel: Selection,
): ProbeResult {
  const exited = found.find((c) => wrongExit(c, want));
  if (exited) {
    const of = sel.by === "service" ? `service ${sel.service}: ` : "";
    return {
      status: "fatal",
      error: `${of}container ${exited.name} ${describeContainer(exited)}; want exit code ${want
        .exitCode!}`,
    };
  }
  const listening = want.listening?.length ? `, listening on ${portsText(want.listening)}` : "";
  if (sel.by === "container" || found.length === 1) {
    const c = found[0]!;
    const of = sel.by === "service" ? ` (service ${sel.service})` : "";
    return holds(c, want)
      ? {
        status: "satisfied",
        detail: `container ${c.name} ${describeContainer(c)}${listening}${of}`,
      }
      : {
        status: "pending",
        error: `container ${c.name} ${shown(c)}${of}; want ${wantText(want)}`,
      };
  }
  const ok = found.filter((c) => holds(c, want));
  const wanted = wantText(want);
  if (ok.length === found.length) {
    return {
      status: "satisfied",
      detail: `service ${sel.service}: ${found.length} containers ${wanted}`,
    };
  }
  const bad = found.filter((c) => !holds(c, want));
  const first = bad[0]!;
  const more = bad.length > 1 ? ` (and ${bad.length - 1} more)` : "";
  return {
    status: "pending",
    error: `service ${sel.service}: ${ok.length}/${found.length} containers ${wanted}; ` +
      `${first.name} ${shown(first)}${more}`,
  };
}
