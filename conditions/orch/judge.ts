/**
 * orch's verdicts (pure): whether an object holds for the wait, by kubectl's
 * rules (`kubectl wait`, `kubectl rollout status`), and what a selector's
 * objects add up to (docs/contract.md §5 orch).
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";
import { captureText } from "../_common/captures.ts";
import { evaluateJsonPath } from "../_common/jsonpath_lib.ts";
import type { Want } from "./mod.ts";

/** How one object stands: holds, not yet, or never will. */
export interface Verdict {
  readonly state: "ok" | "wait" | "fail";
  readonly text: string;
  /** What a `--jsonpath` that holds compared, captured as `value` (docs/contract.md §7). */
  readonly value?: unknown;
}

/** A Kubernetes object as read from the API (JSON). */
export type KubeObject = Record<string, unknown>;

/** Holds. */
export const ok = (text: string): Verdict => ({ state: "ok", text });
/** Not yet. */
export const wait = (text: string): Verdict => ({ state: "wait", text });
/** Never will. */
export const fail = (text: string): Verdict => ({ state: "fail", text });

// --- reading objects -------------------------------------------------------

/** The value at `path` in an object, else undefined. */
export function field(obj: unknown, ...path: string[]): unknown {
  let v: unknown = obj;
  for (const p of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

/** The number at `path` in an object, else undefined. */
export function num(obj: unknown, ...path: string[]): number | undefined {
  const v = field(obj, ...path);
  return typeof v === "number" ? v : undefined;
}

/** The text at `path` in an object, else undefined. */
export function str(obj: unknown, ...path: string[]): string | undefined {
  const v = field(obj, ...path);
  return typeof v === "string" ? v : undefined;
}

/** A status condition of an object. */
export interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

function conditionsOf(obj: KubeObject): Condition[] {
  const c = field(obj, "status", "conditions");
  return Array.isArray(c) ? c.filter((x) => typeof x === "object" && x !== null) : [];
}

/** The status condition of type `type` (case-insensitive), else undefined. */
export function findCondition(obj: KubeObject, type: string): Condition | undefined {
  return conditionsOf(obj).find((c) => c.type?.toLowerCase() === type.toLowerCase());
}

/** `: Reason: message` of a condition, or nothing. */
export function because(c: Condition): string {
  const parts = [c.reason, c.message].filter((s) => typeof s === "string" && s !== "");
  return parts.length ? `: ${parts.join(": ")}` : "";
}

// --- verdicts (pure, unit-tested) ------------------------------------------

/**
 * kubectl wait's condition rule: a condition of that type with that status
 * (case-insensitive), not older than the object's generation (the
 * condition's observedGeneration, else status.observedGeneration).
 */
export function judgeCondition(obj: KubeObject, type: string, status: string): Verdict {
  const c = findCondition(obj, type);
  if (!c) return wait(`no condition ${type} yet`);
  const is = `${c.type}=${c.status}`;
  if ((c.status ?? "").toLowerCase() !== status.toLowerCase()) {
    return wait(`condition ${is}${because(c)}; want ${type}=${status}`);
  }
  const generation = num(obj, "metadata", "generation");
  const observed = c.observedGeneration ?? num(obj, "status", "observedGeneration");
  if (generation !== undefined && observed !== undefined && observed < generation) {
    return wait(
      `condition ${is} is stale (observed generation ${observed}, current ${generation})`,
    );
  }
  return ok(`condition ${is}${c.reason ? ` (${c.reason})` : ""}`);
}

/** kubectl rollout status for a Deployment. */
export function deploymentRollout(obj: KubeObject): Verdict {
  const generation = num(obj, "metadata", "generation") ?? 0;
  const observed = num(obj, "status", "observedGeneration") ?? 0;
  if (generation > observed) {
    return wait(
      `waiting for the spec update to be observed (generation ${generation}, observed ${observed})`,
    );
  }
  const progressing = findCondition(obj, "Progressing");
  if (progressing?.reason === "ProgressDeadlineExceeded") {
    return fail(`rollout exceeded its progress deadline${because(progressing)}`);
  }
  const want = num(obj, "spec", "replicas") ?? 1;
  const updated = num(obj, "status", "updatedReplicas") ?? 0;
  const replicas = num(obj, "status", "replicas") ?? 0;
  const available = num(obj, "status", "availableReplicas") ?? 0;
  if (updated < want) return wait(`${updated} out of ${want} new replicas have been updated`);
  if (replicas > updated) return wait(`${replicas - updated} old replicas are pending termination`);
  if (available < updated) return wait(`${available} of ${updated} updated replicas are available`);
  return ok(`rolled out (${updated}/${want} replicas updated and available)`);
}

/** kubectl rollout status for a StatefulSet (RollingUpdate only). */
export function statefulSetRollout(obj: KubeObject): Verdict {
  const strategy = str(obj, "spec", "updateStrategy", "type") ?? "RollingUpdate";
  if (strategy !== "RollingUpdate") {
    return fail(`rollout status needs the RollingUpdate strategy, not ${strategy}`);
  }
  const generation = num(obj, "metadata", "generation") ?? 0;
  const observed = num(obj, "status", "observedGeneration") ?? 0;
  if (observed === 0 || generation > observed) {
    return wait(
      `waiting for the spec update to be observed (generation ${generation}, observed ${observed})`,
    );
  }
  const want = num(obj, "spec", "replicas") ?? 1;
  const ready = num(obj, "status", "readyReplicas") ?? 0;
  if (ready < want) return wait(`${ready} of ${want} pods are ready`);
  const partition = num(obj, "spec", "updateStrategy", "rollingUpdate", "partition") ?? 0;
  const updated = num(obj, "status", "updatedReplicas") ?? 0;
  if (partition > 0) {
    if (updated < want - partition) {
      return wait(
        `partitioned roll out: ${updated} of ${want - partition} new pods have been updated`,
      );
    }
    return ok(`partitioned roll out complete (${updated} new pods updated)`);
  }
  const updateRevision = str(obj, "status", "updateRevision");
  const currentRevision = str(obj, "status", "currentRevision");
  if (updateRevision !== currentRevision) {
    return wait(`${updated} of ${want} pods are at revision ${updateRevision ?? "?"}`);
  }
  return ok(`rolled out (${want} pods at revision ${currentRevision ?? "?"})`);
}

/** kubectl rollout status for a DaemonSet (RollingUpdate only). */
export function daemonSetRollout(obj: KubeObject): Verdict {
  const strategy = str(obj, "spec", "updateStrategy", "type") ?? "RollingUpdate";
  if (strategy !== "RollingUpdate") {
    return fail(`rollout status needs the RollingUpdate strategy, not ${strategy}`);
  }
  const generation = num(obj, "metadata", "generation") ?? 0;
  const observed = num(obj, "status", "observedGeneration") ?? 0;
  if (generation > observed) {
    return wait(
      `waiting for the spec update to be observed (generation ${generation}, observed ${observed})`,
    );
  }
  const desired = num(obj, "status", "desiredNumberScheduled") ?? 0;
  const updated = num(obj, "status", "updatedNumberScheduled") ?? 0;
  const available = num(obj, "status", "numberAvailable") ?? 0;
  if (updated < desired) return wait(`${updated} out of ${desired} new pods have been updated`);
  if (available < desired) return wait(`${available} of ${desired} updated pods are available`);
  return ok(`rolled out (${available}/${desired} pods updated and available)`);
}

/** A pod's Ready condition; a Failed (or Succeeded) pod never becomes Ready. */
export function podReady(obj: KubeObject): Verdict {
  const phase = str(obj, "status", "phase") ?? "Pending";
  if (phase === "Failed") {
    const why = [str(obj, "status", "reason"), str(obj, "status", "message")].filter(Boolean);
    return fail(`failed (phase Failed${why.length ? `: ${why.join(": ")}` : ""})`);
  }
  if (phase === "Succeeded") return fail("completed (phase Succeeded) and will never be Ready");
  const ready = findCondition(obj, "Ready");
  if (ready?.status === "True") return ok(`Ready (phase ${phase})`);
  const notes: string[] = [`phase ${phase}`];
  if (str(obj, "metadata", "deletionTimestamp")) notes.push("terminating");
  const statuses = field(obj, "status", "containerStatuses");
  if (Array.isArray(statuses)) {
    for (const cs of statuses) {
      const reason = str(cs, "state", "waiting", "reason") ??
        str(cs, "state", "terminated", "reason");
      if (reason) notes.push(`container ${str(cs, "name") ?? "?"}: ${reason}`);
    }
  }
  return wait(`not Ready (${notes.join("; ")})`);
}

/** A job's Complete condition; a Failed condition is final. */
export function jobComplete(obj: KubeObject): Verdict {
  const failed = findCondition(obj, "Failed");
  if (failed?.status === "True") return fail(`failed${because(failed)}`);
  const counts = `active ${num(obj, "status", "active") ?? 0}, succeeded ${
    num(obj, "status", "succeeded") ?? 0
  }, failed ${num(obj, "status", "failed") ?? 0}`;
  const complete = findCondition(obj, "Complete");
  if (complete?.status === "True") {
    return ok(`complete (${num(obj, "status", "succeeded") ?? 0} succeeded)`);
  }
  if (field(obj, "spec", "suspend") === true) return wait(`suspended (${counts})`);
  return wait(`not complete (${counts})`);
}

/**
 * How one object stands against the wait (not `delete`, which is about absence; `readiness`
 * is `readiness.ts`'s).
 */
export async function judgeObject(
  obj: KubeObject,
  r: { group: string; plural: string },
  want: Exclude<Want, { type: "readiness" }>,
): Promise<Verdict> {
  switch (want.type) {
    case "exists": {
      const phase = str(obj, "status", "phase");
      if (str(obj, "metadata", "deletionTimestamp")) return ok("exists (terminating)");
      return ok(phase ? `exists (phase ${phase})` : "exists");
    }
    case "condition":
      return judgeCondition(obj, want.condition, want.status);
    case "jsonpath": {
      const r = await evaluateJsonPath(want.expr, obj);
      return r.ok ? { state: "ok", text: r.detail, value: r.value } : wait(r.detail);
    }
    case "rollout":
      if (r.plural === "deployments") return deploymentRollout(obj);
      if (r.plural === "statefulsets") return statefulSetRollout(obj);
      return daemonSetRollout(obj);
    case "ready":
      return r.group === "" && r.plural === "pods"
        ? podReady(obj)
        : judgeCondition(obj, "Ready", "True");
    case "complete":
      return jobComplete(obj);
    case "delete":
      return wait("still exists");
  }
}

/** A short phrase for what the wait asks, used when several objects are judged. */
export function wantPhrase(want: Want): string {
  switch (want.type) {
    case "exists":
      return "exist";
    case "condition":
      return `condition ${want.condition}=${want.status}`;
    case "jsonpath":
      return want.expr.source;
    case "rollout":
      return "rolled out";
    case "ready":
      return "Ready";
    case "complete":
      return "complete";
    case "delete":
      return "deleted";
    case "readiness":
      return "ready";
  }
}

/** A verdict's captures for a satisfied result: `--jsonpath`'s value, when it has one. */
export function capturesOf(v: Verdict): { captures?: Record<string, string> } {
  return v.value === undefined ? {} : { captures: { value: captureText(v.value) } };
}

/** `deployment/web`. */
export function objectLabel(r: { kind: string }, obj: KubeObject): string {
  return `${r.kind.toLowerCase()}/${str(obj, "metadata", "name") ?? "?"}`;
}

/**
 * Decides a selector's objects: with `all`, every object must hold (one that
 * never will is fatal); without, one object holding suffices (fatal only when
 * none ever will). No object is pending.
 */
export function judgeSelected(
  judged: readonly { label: string; verdict: Verdict }[],
  all: boolean,
  what: string,
  phrase: string,
): ProbeResult {
  if (judged.length === 0) return { status: "pending", error: `no ${what}` };
  const good = judged.filter((j) => j.verdict.state === "ok");
  const failed = judged.filter((j) => j.verdict.state === "fail");
  const n = judged.length;
  const first = (list: typeof judged) => `${list[0]!.label}: ${list[0]!.verdict.text}`;
  if (all) {
    if (failed.length) return { status: "fatal", error: first(failed) };
    if (good.length === n) {
      return {
        status: "satisfied",
        detail: `${n}/${n} ${what}: ${phrase}`,
        ...capturesOf(good[0]!.verdict),
      };
    }
  } else {
    if (good.length) {
      return {
        status: "satisfied",
        detail: `${good.length}/${n} ${what}: ${phrase}; ${first(good)}`,
        ...capturesOf(good[0]!.verdict),
      };
    }
    if (failed.length === n) return { status: "fatal", error: first(failed) };
  }
  const notYet = judged.filter((j) => j.verdict.state !== "ok");
  const more = notYet.length > 1 ? ` (and ${notYet.length - 1} more)` : "";
  return {
    status: "pending",
    error: `${good.length}/${n} ${what}: ${phrase}; ${first(notYet)}${more}`,
  };
}
