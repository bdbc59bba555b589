/**
 * The readiness of an object by its kind (pure), as `orch -f` waits for it
 * (docs/contract.md §5 orch): workloads rolled out at their current
 * generation, a Job complete, a Pod Ready, a PersistentVolumeClaim Bound, a
 * Service with a ready endpoint (a LoadBalancer with an address), and any
 * other object its `Ready` or `Available` condition when it has one, else
 * that it exists. The rules follow kubectl's rollout status, Helm's `--wait`
 * and kstatus.
 *
 * @module
 */

import {
  because,
  daemonSetRollout,
  deploymentRollout,
  fail,
  field,
  findCondition,
  jobComplete,
  type KubeObject,
  num,
  ok,
  podReady,
  statefulSetRollout,
  str,
  type Verdict,
  wait,
} from "./judge.ts";

/** The resource type of an object, as discovery names it. */
export interface ResourceType {
  /** `""` for the core group. */
  readonly group: string;
  readonly plural: string;
}

/**
 * Whether judging `obj` needs its Service's EndpointSlices: a Service of a
 * type with endpoints (not ExternalName, not LoadBalancer) and a selector.
 */
export function needsEndpoints(obj: KubeObject, r: ResourceType): boolean {
  if (r.group !== "" || r.plural !== "services") return false;
  const type = str(obj, "spec", "type") ?? "ClusterIP";
  return type !== "ExternalName" && type !== "LoadBalancer" && hasSelector(obj);
}

function hasSelector(svc: KubeObject): boolean {
  const sel = field(svc, "spec", "selector");
  return typeof sel === "object" && sel !== null && Object.keys(sel).length > 0;
}

/**
 * How `obj` stands against the readiness of its kind. `endpointSlices` are
 * the EndpointSlices of a Service (labelled `kubernetes.io/service-name`),
 * looked up when {@linkcode needsEndpoints} says so.
 */
export function readiness(
  obj: KubeObject,
  r: ResourceType,
  endpointSlices?: readonly KubeObject[],
): Verdict {
  if (r.group === "apps" || r.group === "extensions") {
    if (r.plural === "deployments") return deploymentRollout(obj);
    if (r.plural === "statefulsets") return statefulSetReady(obj);
    if (r.plural === "daemonsets") return daemonSetReady(obj);
  }
  if (r.group === "batch" && r.plural === "jobs") return jobComplete(obj);
  if (r.group === "") {
    if (r.plural === "pods") return podReady(obj);
    if (r.plural === "persistentvolumeclaims") return claimBound(obj);
    if (r.plural === "services") return serviceReady(obj, endpointSlices);
  }
  return genericReady(obj);
}

/**
 * `status.observedGeneration` behind `metadata.generation`: the spec is not yet acted on (an
 * object that reports no observedGeneration is taken as current).
 */
function unobserved(obj: KubeObject): Verdict | undefined {
  const generation = num(obj, "metadata", "generation");
  const observed = num(obj, "status", "observedGeneration");
  if (generation === undefined || observed === undefined || generation <= observed) {
    return undefined;
  }
  return wait(
    `waiting for the spec update to be observed (generation ${generation}, observed ${observed})`,
  );
}

/** A StatefulSet rolled out; with the OnDelete strategy, every replica ready at its generation. */
export function statefulSetReady(obj: KubeObject): Verdict {
  const strategy = str(obj, "spec", "updateStrategy", "type") ?? "RollingUpdate";
  if (strategy === "RollingUpdate") return statefulSetRollout(obj);
  const stale = unobserved(obj);
  if (stale) return stale;
  const want = num(obj, "spec", "replicas") ?? 1;
  const ready = num(obj, "status", "readyReplicas") ?? 0;
  return ready < want ? wait(`${ready} of ${want} pods are ready`) : ok(`${ready} pods ready`);
}

/** A DaemonSet rolled out; with the OnDelete strategy, every scheduled pod ready at its generation. */
export function daemonSetReady(obj: KubeObject): Verdict {
  const strategy = str(obj, "spec", "updateStrategy", "type") ?? "RollingUpdate";
  if (strategy === "RollingUpdate") return daemonSetRollout(obj);
  const stale = unobserved(obj);
  if (stale) return stale;
  const desired = num(obj, "status", "desiredNumberScheduled") ?? 0;
  const ready = num(obj, "status", "numberReady") ?? 0;
  return ready < desired
    ? wait(`${ready} of ${desired} pods are ready`)
    : ok(`${ready}/${desired} pods ready`);
}

/** A PersistentVolumeClaim bound to a volume; Lost (its volume is gone) never binds again. */
export function claimBound(obj: KubeObject): Verdict {
  const phase = str(obj, "status", "phase") ?? "Pending";
  const volume = str(obj, "spec", "volumeName");
  if (phase === "Bound") return ok(`Bound${volume ? ` to ${volume}` : ""}`);
  if (phase === "Lost") return fail(`Lost: its volume${volume ? ` ${volume}` : ""} is gone`);
  return wait(`not Bound (phase ${phase})`);
}

/**
 * A Service ready to take traffic: an ExternalName one at once; a
 * LoadBalancer once it has an ingress address; one without a selector (its
 * endpoints are managed by hand) once it exists; else once one of its
 * EndpointSlices has a ready endpoint (`conditions.ready` unset counts as
 * ready, as the API says).
 */
export function serviceReady(obj: KubeObject, slices?: readonly KubeObject[]): Verdict {
  const type = str(obj, "spec", "type") ?? "ClusterIP";
  if (type === "ExternalName") {
    return ok(`ExternalName service for ${str(obj, "spec", "externalName") ?? "?"}`);
  }
  if (type === "LoadBalancer") {
    const ingress = field(obj, "status", "loadBalancer", "ingress");
    const addresses = (Array.isArray(ingress) ? ingress : [])
      .map((i) => str(i, "ip") ?? str(i, "hostname"))
      .filter((a): a is string => !!a);
    return addresses.length
      ? ok(`load balancer at ${addresses.join(", ")}`)
      : wait("no load balancer address yet");
  }
  if (!hasSelector(obj)) return ok("exists (no selector: its endpoints are managed by hand)");
  let ready = 0;
  let total = 0;
  for (const slice of slices ?? []) {
    const endpoints = field(slice, "endpoints");
    for (const e of Array.isArray(endpoints) ? endpoints : []) {
      total++;
      if (field(e, "conditions", "ready") !== false) ready++;
    }
  }
  if (ready > 0) return ok(`${ready} ready endpoint${ready === 1 ? "" : "s"}`);
  return wait(total ? `no ready endpoints (${total} not ready)` : "no endpoints yet");
}

/**
 * Any other object (custom resources included): its spec observed
 * (`status.observedGeneration`, when it reports one), and its `Ready`
 * condition True, else its `Available` condition, when it has either; an
 * object with neither holds once it exists.
 */
export function genericReady(obj: KubeObject): Verdict {
  const stale = unobserved(obj);
  if (stale) return stale;
  const c = findCondition(obj, "Ready") ?? findCondition(obj, "Available");
  if (!c) return ok("exists (no Ready or Available condition)");
  const is = `${c.type}=${c.status}`;
  if (c.status !== "True") return wait(`condition ${is}${because(c)}`);
  const generation = num(obj, "metadata", "generation");
  if (
    generation !== undefined && c.observedGeneration !== undefined &&
    c.observedGeneration < generation
  ) {
    return wait(
      `condition ${is} is stale (observed generation ${c.observedGeneration}, current ${generation})`,
    );
  }
  return ok(`condition ${is}${c.reason ? ` (${c.reason})` : ""}`);
}
