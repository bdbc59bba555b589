/**
 * The newest Warning event of an object that is not ready, for its error text
 * (pure; docs/contract.md §5 orch). A workload's own events rarely say why it
 * is stuck: the scheduler's `FailedScheduling` is recorded on its pods. So
 * for a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job the events of
 * the objects it makes count too, found by the names their controllers give
 * them, from one list of the namespace's Warning events; any other object's
 * are listed by its uid.
 *
 * @module
 */

import { field, type KubeObject, str } from "./judge.ts";

/** The names of the objects a workload's controller makes, by their kind. */
function madeBy(r: { group: string; plural: string }, name: string): Record<string, RegExp> {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  if (r.group === "apps" || r.group === "extensions") {
    switch (r.plural) {
      case "deployments":
        return {
          ReplicaSet: new RegExp(`^${n}-[a-z0-9]+$`),
          Pod: new RegExp(`^${n}-[a-z0-9]+-[a-z0-9]{5}$`),
        };
      case "statefulsets":
        return { Pod: new RegExp(`^${n}-\\d+$`) };
      case "daemonsets":
      case "replicasets":
        return { Pod: new RegExp(`^${n}-[a-z0-9]{5}$`) };
    }
  }
  if (r.group === "batch" && r.plural === "jobs") {
    return { Pod: new RegExp(`^${n}-(\\d+-)?[a-z0-9]{5}$`) };
  }
  return {};
}

/**
 * The field selector of the one list call that finds `obj`'s Warning events:
 * every Warning of the namespace for a workload (its pods' count), else those
 * of its uid.
 */
export function warningSelector(r: { group: string; plural: string }, obj: KubeObject): string {
  const name = str(obj, "metadata", "name") ?? "";
  const uid = str(obj, "metadata", "uid");
  if (Object.keys(madeBy(r, name)).length > 0 || !uid) return "type=Warning";
  return `involvedObject.uid=${uid},type=Warning`;
}

/** When an event last happened, in ms since the epoch (0 when it says nothing). */
function lastSeen(ev: KubeObject): number {
  for (
    const t of [
      str(ev, "lastTimestamp"),
      str(ev, "series", "lastObservedTime"),
      str(ev, "eventTime"),
      str(ev, "metadata", "creationTimestamp"),
    ]
  ) {
    const ms = t ? Date.parse(t) : NaN;
    if (!Number.isNaN(ms)) return ms;
  }
  return 0;
}

/** A Warning event as shown: `Warning Reason: message`, and its message alone. */
export interface Warning {
  readonly text: string;
  readonly message: string;
}

/**
 * The newest Warning event about `obj` among `events`: its own first; when it
 * has none, those of the objects its controller made since it was created.
 * Undefined when there is none.
 */
export function newestWarning(
  events: readonly KubeObject[],
  obj: KubeObject,
  r: { group: string; plural: string },
): Warning | undefined {
  const uid = str(obj, "metadata", "uid");
  const made = madeBy(r, str(obj, "metadata", "name") ?? "");
  const created = Date.parse(str(obj, "metadata", "creationTimestamp") ?? "") || 0;
  let own: KubeObject | undefined;
  let related: KubeObject | undefined;
  for (const ev of events) {
    if (str(ev, "type") !== "Warning") continue;
    const about = field(ev, "involvedObject");
    if (uid !== undefined && str(about, "uid") === uid) {
      if (!own || lastSeen(ev) >= lastSeen(own)) own = ev;
      continue;
    }
    const pattern = made[str(about, "kind") ?? ""];
    if (!pattern || !pattern.test(str(about, "name") ?? "") || lastSeen(ev) < created) continue;
    if (!related || lastSeen(ev) >= lastSeen(related)) related = ev;
  }
  const ev = own ?? related;
  if (!ev) return undefined;
  // One line; the engine cuts long texts after it has masked secrets (docs/contract.md §9).
  const message = (str(ev, "message") ?? str(ev, "note") ?? "").replace(/\s+/g, " ").trim();
  const reason = str(ev, "reason") ?? "Warning";
  return { text: message ? `Warning ${reason}: ${message}` : `Warning ${reason}`, message };
}
