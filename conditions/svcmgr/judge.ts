/**
 * svcmgr's judging: what a unit's state means for the wait
 * (docs/contract.md §5 svcmgr). Pure; the probe feeds it what the manager said.
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";

/** The state a wait asks for. */
export type UnitWant = "active" | "inactive" | "failed";

/** What the manager says about a unit. */
export interface UnitState {
  /** loaded, not-found, masked, error, bad-setting, merged, stub. */
  readonly load: string;
  /** active, reloading, inactive, failed, activating, deactivating, maintenance, refreshing. */
  readonly active: string;
  /** Type-specific: running, dead, exited, failed, listening, start-pre, ... */
  readonly sub: string;
  /** The unit's Result (exit-code, signal, ...), when it has one and it is known. */
  readonly result?: string;
}

/** `active (running)`, with the result of a failed unit: `failed (failed, result exit-code)`. */
export function describeUnitState(st: UnitState): string {
  const result = st.active === "failed" && st.result && st.result !== "success"
    ? `, result ${st.result}`
    : "";
  return `${st.active} (${st.sub}${result})`;
}

/** Decides an attempt from the unit's state. */
export function judgeUnit(st: UnitState, want: UnitWant): ProbeResult {
  // A unit that is neither loaded nor running (in any state) is missing: systemd
  // calls it inactive, so --inactive holds (a transient unit that ended and was
  // collected, a unit file removed after the unit stopped); the other waits go on.
  if (st.load === "not-found" && st.active === "inactive") {
    return want === "inactive"
      ? { status: "satisfied", detail: `${describeUnitState(st)}; unit not found` }
      : { status: "pending", error: "unit not found" };
  }
  const ok = want === "active"
    ? st.active === "active" || st.active === "reloading"
    : st.active === want;
  const text = describeUnitState(st);
  if (ok) return { status: "satisfied", detail: text };
  const load = st.load === "loaded" || st.load === "" ? "" : `; unit ${st.load}`;
  return { status: "pending", error: text + load };
}

/** Parses `systemctl show -p ...` output (KEY=VALUE lines); undefined without an ActiveState. */
export function parseShow(text: string): UnitState | undefined {
  const rec: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) rec[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  if (rec.ActiveState === undefined) return undefined;
  return {
    load: rec.LoadState ?? "",
    active: rec.ActiveState,
    sub: rec.SubState ?? "",
    result: rec.Result,
  };
}
