/**
 * orch (aliases k8s, kubernetes): a Kubernetes object exists, has a
 * condition, matches a JSONPath expression, has rolled out, is ready, has
 * completed, or is gone.
 *
 * The API client lives in `_kube.ts` (kubeconfig through
 * `@kubernetes/client-node`, imported lazily; requests through Deno's fetch).
 * This file decides: what the target and flags mean (no I/O), and whether the
 * objects found satisfy the wait, kubectl's rules included (`kubectl wait`,
 * `kubectl rollout status`). A watch on the objects asks for an attempt as
 * soon as one of them changes.
 *
 * @module
 */

import { realClock } from "../engine/clock.ts";
import type {
  ConditionKind,
  KindInput,
  Probe,
  ProbeResult,
  WatchContext,
} from "../engine/types.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "./_jsonpath.ts";
import {
  type ApiResource,
  collectionPath,
  httpProblem,
  KubeClient,
  KubeError,
  resolveResource,
} from "./_kube.ts";
import { describeError } from "./_net.ts";

/** Values of `--for`. */
export const FOR_VALUES: readonly string[] = ["exists", "rollout", "ready", "complete", "delete"];

/** What the condition waits for. */
export type Want =
  | { readonly type: "exists" }
  | { readonly type: "condition"; readonly condition: string; readonly status: string }
  | { readonly type: "jsonpath"; readonly expr: JsonPathExpr }
  | { readonly type: "rollout" }
  | { readonly type: "ready" }
  | { readonly type: "complete" }
  | { readonly type: "delete" };

/** Which objects the condition is about. */
export type Selection =
  | { readonly by: "name"; readonly name: string }
  | { readonly by: "selector"; readonly selector: string | undefined; readonly all: boolean };

/** The parsed condition. */
export interface OrchSpec {
  /** The resource word as typed: `deploy`, `deployments.apps`, `certificates`. */
  readonly resource: string;
  readonly selection: Selection;
  readonly want: Want;
  /** `--namespace`; undefined: the context's namespace. */
  readonly namespace: string | undefined;
}

/** How one object stands: holds, not yet, or never will. */
export interface Verdict {
  readonly state: "ok" | "wait" | "fail";
  readonly text: string;
}

/** A Kubernetes object as read from the API (JSON). */
export type KubeObject = Record<string, unknown>;

const ok = (text: string): Verdict => ({ state: "ok", text });
const wait = (text: string): Verdict => ({ state: "wait", text });
const fail = (text: string): Verdict => ({ state: "fail", text });

// --- reading objects -------------------------------------------------------

function field(obj: unknown, ...path: string[]): unknown {
  let v: unknown = obj;
  for (const p of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

function num(obj: unknown, ...path: string[]): number | undefined {
  const v = field(obj, ...path);
  return typeof v === "number" ? v : undefined;
}

function str(obj: unknown, ...path: string[]): string | undefined {
  const v = field(obj, ...path);
  return typeof v === "string" ? v : undefined;
}

interface Condition {
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

function findCondition(obj: KubeObject, type: string): Condition | undefined {
  return conditionsOf(obj).find((c) => c.type?.toLowerCase() === type.toLowerCase());
}

function because(c: Condition): string {
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

/** Whether `--for rollout` / `--for complete` apply to a resource. */
export function supports(want: Want, r: { group: string; plural: string }): string | undefined {
  if (want.type === "rollout") {
    const ok = (r.group === "apps" || r.group === "extensions") &&
      ["deployments", "statefulsets", "daemonsets"].includes(r.plural);
    return ok
      ? undefined
      : `--for rollout works with deployments, statefulsets and daemonsets, not ${r.plural}`;
  }
  if (want.type === "complete") {
    return r.group === "batch" && r.plural === "jobs"
      ? undefined
      : `--for complete works with jobs, not ${r.plural}`;
  }
  return undefined;
}

/** How one object stands against the wait (not `delete`, which is about absence). */
export async function judgeObject(
  obj: KubeObject,
  r: { group: string; plural: string },
  want: Want,
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
      const { ok: holds, detail } = await want.expr.evaluate(obj);
      return holds ? ok(detail) : wait(detail);
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
  }
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
    if (good.length === n) return { status: "satisfied", detail: `${n}/${n} ${what}: ${phrase}` };
  } else {
    if (good.length) {
      return {
        status: "satisfied",
        detail: `${good.length}/${n} ${what}: ${phrase}; ${first(good)}`,
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

// --- parsing (no I/O) --------------------------------------------------------

const RESOURCE_WORD = /^[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)*$/;
const OBJECT_NAME = /^[^\s/]+$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const CONDITION_TYPE = /^[A-Za-z0-9][A-Za-z0-9_.\/-]*$/;

/** Well-known resource words, for usage errors that need no discovery. */
const WELL_KNOWN: Record<string, { group: string; plural: string }> = {};
for (
  const [group, plural, ...words] of [
    ["", "pods", "pod", "po"],
    ["apps", "deployments", "deployment", "deploy"],
    ["apps", "statefulsets", "statefulset", "sts"],
    ["apps", "daemonsets", "daemonset", "ds"],
    ["apps", "replicasets", "replicaset", "rs"],
    ["batch", "jobs", "job"],
    ["batch", "cronjobs", "cronjob", "cj"],
    ["", "services", "service", "svc"],
    ["", "namespaces", "namespace", "ns"],
    ["", "configmaps", "configmap", "cm"],
    ["", "secrets", "secret"],
    ["", "nodes", "node", "no"],
    ["", "persistentvolumeclaims", "persistentvolumeclaim", "pvc"],
  ]
) {
  for (const w of [plural!, ...words]) {
    WELL_KNOWN[w] = { group: group!, plural: plural! };
    if (group) WELL_KNOWN[`${w}.${group}`] = { group: group!, plural: plural! };
  }
}

/** Checks a label selector's syntax (`a=b,c!=d,e in (f,g),!h,i`); returns an error text or undefined. */
export function checkSelector(sel: string): string | undefined {
  if (sel.trim() === "") return "expected a label selector like app=web, got an empty string";
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of sel) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (depth < 0) return `unbalanced ")" in ${JSON.stringify(sel)}`;
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (depth !== 0) return `unbalanced "(" in ${JSON.stringify(sel)}`;
  parts.push(cur);
  for (const raw of parts) {
    const p = raw.trim();
    const bad = `expected requirements like app=web, tier!=db, env in (a,b) or !key, got ${
      JSON.stringify(p)
    }`;
    let m: RegExpExecArray | null;
    if ((m = /^(\S+?)\s*(==|!=|=)\s*(\S*)$/.exec(p))) {
      if (!LABEL_KEY.test(m[1]!) || !LABEL_VALUE.test(m[3]!)) return bad;
    } else if ((m = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(p))) {
      if (!LABEL_KEY.test(m[1]!)) return bad;
      for (const v of m[3]!.split(",")) if (!LABEL_VALUE.test(v.trim())) return bad;
    } else if ((m = /^!?\s*(\S+)$/.exec(p))) {
      if (!LABEL_KEY.test(m[1]!)) return bad;
    } else return bad;
  }
  return undefined;
}

function parseWant(input: KindInput, resource: string): Want {
  const given = ["for", "condition", "jsonpath"].filter((f) => input.has(f));
  if (given.length > 1) {
    input.fail(given[1]!, `cannot be combined with --${given[0]}; give one wait type`);
  }
  const cond = input.string("condition");
  if (cond !== undefined) {
    const eq = cond.indexOf("=");
    const type = (eq < 0 ? cond : cond.slice(0, eq)).trim();
    const status = eq < 0 ? "True" : cond.slice(eq + 1).trim();
    if (!CONDITION_TYPE.test(type) || !/^[A-Za-z]+$/.test(status)) {
      input.fail(
        "condition",
        `expected a condition type like Available or Ready=False, got ${JSON.stringify(cond)}`,
      );
    }
    return { type: "condition", condition: type, status };
  }
  const jp = input.string("jsonpath");
  if (jp !== undefined) {
    const expr = parseJsonPathExpr(jp);
    if (typeof expr === "string") input.fail("jsonpath", expr);
    return { type: "jsonpath", expr: expr as JsonPathExpr };
  }
  const type = (input.string("for") ?? "exists") as Want["type"];
  const want = { type } as Want;
  const known = WELL_KNOWN[resource.toLowerCase()];
  if (known) {
    const problem = supports(want, known);
    if (problem) input.fail("for", problem.replace(/^--for /, ""));
  }
  return want;
}

/** Parses the target and flags (no I/O). */
export function parseOrch(input: KindInput): OrchSpec {
  const target = input.target ?? "";
  const slash = target.indexOf("/");
  const resource = slash < 0 ? target : target.slice(0, slash);
  const name = slash < 0 ? undefined : target.slice(slash + 1);
  if (!RESOURCE_WORD.test(resource) || (name !== undefined && !OBJECT_NAME.test(name))) {
    input.fail(
      undefined,
      `expected KIND/NAME (deployment/web) or KIND with --selector, got ${JSON.stringify(target)}`,
    );
  }
  const selector = input.string("selector");
  const all = input.bool("all");
  if (name !== undefined) {
    if (selector !== undefined) input.fail("selector", "cannot be combined with KIND/NAME");
    if (all) input.fail("all", "cannot be combined with KIND/NAME");
  } else if (selector === undefined && !all) {
    input.fail(
      undefined,
      `expected KIND/NAME, or KIND with --selector or --all, got ${JSON.stringify(target)}`,
    );
  }
  if (selector !== undefined) {
    const problem = checkSelector(selector);
    if (problem) input.fail("selector", problem);
  }
  const namespace = input.string("namespace");
  if (namespace !== undefined && !NAMESPACE.test(namespace)) {
    input.fail(
      "namespace",
      `expected a namespace name like default, got ${JSON.stringify(namespace)}`,
    );
  }
  for (const f of ["kubeconfig", "context"]) {
    if (input.string(f) === "") input.fail(f, "expected a value, got an empty string");
  }
  const want = parseWant(input, resource);
  return {
    resource,
    selection: name !== undefined
      ? { by: "name", name }
      : { by: "selector", selector: selector?.trim(), all },
    want,
    namespace,
  };
}

// --- the probe -----------------------------------------------------------------

/** What an attempt needs resolved before it can look at objects. */
interface Resolved {
  readonly res: ApiResource;
  readonly namespace: string;
  /** Collection path. */
  readonly path: string;
}

/** Pause after a failed list or watch, doubling up to {@linkcode MAX_PAUSE_MS}. */
const MIN_PAUSE_MS = 250;
const MAX_PAUSE_MS = 5000;
/** A watch asks the server to end it after this long (then it lists and watches again). */
const WATCH_SECONDS = 290;

/** The parts of the API client a probe uses (KubeClient; a fake in tests). */
export type KubeApi = Pick<KubeClient, "connection" | "discover" | "get" | "getJson" | "watch">;

/** One condition's checks and watch. */
export class OrchProbe {
  /** The uid of the named object when first seen (`--for delete`: a new object is not the old one). */
  #uid: string | undefined;

  constructor(readonly spec: OrchSpec, readonly client: KubeApi) {}

  async resolve(signal: AbortSignal, attemptStart: number): Promise<Resolved> {
    const conn = await this.client.connection();
    let d = await this.client.discover(signal);
    let res = resolveResource(d.resources, this.spec.resource);
    if (!res && d.fetchedAt < attemptStart) {
      d = await this.client.discover(signal, true);
      res = resolveResource(d.resources, this.spec.resource);
    }
    if (!res) {
      throw new KubeError(
        "context",
        `the server has no resource type ${JSON.stringify(this.spec.resource)} ` +
          `(not a kind, plural or short name it knows; see kubectl api-resources)`,
      );
    }
    const problem = supports(this.spec.want, res);
    if (problem) throw new KubeError("context", problem);
    const namespace = this.spec.namespace ?? conn.namespace;
    return { res, namespace, path: collectionPath(res, namespace) };
  }

  /** `pods matching app=web in namespace default`. */
  what(r: Resolved): string {
    const sel = this.spec.selection;
    const ns = r.res.namespaced ? ` in namespace ${r.namespace}` : "";
    if (sel.by === "selector" && sel.selector) {
      return `${r.res.plural} matching ${sel.selector}${ns}`;
    }
    return `${r.res.plural}${ns}`;
  }

  async check(signal: AbortSignal): Promise<ProbeResult> {
    const start = Date.now();
    try {
      const r = await this.resolve(signal, start);
      const sel = this.spec.selection;
      return sel.by === "name"
        ? await this.checkNamed(r, sel.name, signal)
        : await this.checkSelected(r, sel.selector, sel.all, signal);
    } catch (e) {
      if (signal.aborted) return { status: "pending", error: "aborted" };
      if (e instanceof KubeError) {
        const fatal = e.kind === "auth" || e.kind === "context";
        return { status: fatal ? "fatal" : "pending", error: e.message };
      }
      return { status: "pending", error: describeError(e) };
    }
  }

  async checkNamed(r: Resolved, name: string, signal: AbortSignal): Promise<ProbeResult> {
    const label = `${r.res.kind.toLowerCase()}/${name}`;
    const where = r.res.namespaced ? ` in namespace ${r.namespace}` : "";
    const got = await this.client.get(`${r.path}/${encodeURIComponent(name)}`, signal);
    const want = this.spec.want;
    if (got.status === 404) {
      if (want.type === "delete") {
        return {
          status: "satisfied",
          detail: this.#uid ? `${label} deleted` : `${label} does not exist${where}`,
        };
      }
      return { status: "pending", error: `${label} not found${where}` };
    }
    if (got.status < 200 || got.status > 299 || typeof got.json !== "object" || !got.json) {
      return { status: "pending", error: `${label}: ${httpProblem(got)}` };
    }
    const obj = got.json as KubeObject;
    if (want.type === "delete") {
      const uid = str(obj, "metadata", "uid");
      if (this.#uid !== undefined && uid !== this.#uid) {
        return { status: "satisfied", detail: `${label} deleted (a new object has its name now)` };
      }
      this.#uid ??= uid;
      const terminating = str(obj, "metadata", "deletionTimestamp");
      return {
        status: "pending",
        error: `${label} still exists${terminating ? " (terminating)" : ""}`,
      };
    }
    const v = await judgeObject(obj, r.res, want);
    const text = `${label} ${v.text}`;
    if (v.state === "ok") return { status: "satisfied", detail: text };
    return { status: v.state === "fail" ? "fatal" : "pending", error: text };
  }

  async checkSelected(
    r: Resolved,
    selector: string | undefined,
    all: boolean,
    signal: AbortSignal,
  ): Promise<ProbeResult> {
    const q = selector ? `?${new URLSearchParams({ labelSelector: selector })}` : "";
    const got = await this.client.get(`${r.path}${q}`, signal);
    if (got.status < 200 || got.status > 299 || typeof got.json !== "object" || !got.json) {
      return { status: "pending", error: `${r.res.plural}: ${httpProblem(got)}` };
    }
    const items = ((got.json as { items?: unknown }).items ?? []) as KubeObject[];
    const what = this.what(r);
    if (this.spec.want.type === "delete") {
      if (items.length === 0) return { status: "satisfied", detail: `no ${what}` };
      const names = items.slice(0, 3).map((o) => objectLabel(r.res, o)).join(", ");
      const more = items.length > 3 ? `, ... (${items.length} in all)` : "";
      return { status: "pending", error: `${items.length} ${what} still exist: ${names}${more}` };
    }
    const judged = [];
    for (const o of items) {
      judged.push({
        label: objectLabel(r.res, o),
        verdict: await judgeObject(o, r.res, this.spec.want),
      });
    }
    return judgeSelected(judged, all, what, wantPhrase(this.spec.want));
  }

  /**
   * List, then watch from the list's resourceVersion; every change asks for
   * an attempt. Lists again (and asks for an attempt, for what may have
   * changed meanwhile) after a 410 (version too old), after the stream ends
   * and after errors, the latter with a growing pause. Refused credentials
   * and unknown kinds end the watch: the attempts report them. The interval
   * stays the upper bound.
   */
  async *watch({ signal }: WatchContext): AsyncGenerator<void> {
    let pauseMs = MIN_PAUSE_MS;
    while (!signal.aborted) {
      let pause = false;
      try {
        const r = await this.resolve(signal, 0);
        const q: Record<string, string> = {};
        const sel = this.spec.selection;
        if (sel.by === "name") q.fieldSelector = `metadata.name=${sel.name}`;
        else if (sel.selector) q.labelSelector = sel.selector;
        const list = await this.client.getJson(
          `${r.path}?${new URLSearchParams({ ...q, limit: "1" })}`,
          signal,
        );
        const rv = str(list, "metadata", "resourceVersion") ?? "";
        yield;
        const started = Date.now();
        let events = 0;
        for await (
          const ev of this.client.watch(r.path, {
            ...q,
            resourceVersion: rv,
            timeoutSeconds: String(WATCH_SECONDS),
          }, signal)
        ) {
          events++;
          if (ev.type !== "BOOKMARK") yield;
        }
        // The stream ended: list again, but do not spin on a server that ends it at once.
        pause = events === 0 && Date.now() - started < 1000;
        if (!pause) pauseMs = MIN_PAUSE_MS;
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof KubeError && (e.kind === "auth" || e.kind === "context")) return;
        pause = !(e instanceof KubeError && e.status === 410);
      }
      if (pause) {
        await realClock.sleep(pauseMs, signal);
        pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
      }
    }
  }
}

/** The orch kind. */
export const orch: ConditionKind = {
  name: "orch",
  aliases: ["k8s", "kubernetes"],
  summary: "a Kubernetes object exists, is ready, rolled out, complete, has a condition or is gone",
  description:
    "Asks the Kubernetes API server of the kubeconfig (--kubeconfig, else KUBECONFIG, else ~/.kube/config; in a pod, the in-cluster service account) with its credentials (client certificates, tokens, token files, exec plugins such as aws eks get-token). The target is KIND/NAME, or KIND with --selector (or --all): any resource the server knows, by kind, plural or short name (deploy, po, sts, a CRD's names), optionally with its group (deployments.apps). Without a wait type, satisfied when the object exists. --for rollout follows kubectl rollout status; --for ready waits for a pod's Ready condition (a Failed pod is fatal); --for complete for a job's Complete condition (a Failed job is fatal); --for delete until the object is gone. With a selector one matching object suffices; with --all every one must hold. A missing object, a selector matching nothing and an unreachable server are retried; refused credentials (401/403) and an unknown kind are fatal. A watch on the objects triggers an attempt as soon as they change.",
  target: {
    shape: "required",
    placeholder: "KIND[/NAME]",
    description:
      "resource kind and object name (deployment/web), or a kind with --selector or --all",
  },
  flags: [
    {
      name: "for",
      type: "enum",
      values: FOR_VALUES,
      placeholder: "STATE",
      description: "exists (default), rollout, ready (pods), complete (jobs) or delete",
    },
    {
      name: "condition",
      type: "string",
      placeholder: "TYPE[=STATUS]",
      description: "status condition TYPE has STATUS (default True), e.g. Available, Ready=False",
    },
    {
      name: "jsonpath",
      type: "string",
      placeholder: "EXPR",
      description: "the object matches a JSONPath expression, e.g. '.status.readyReplicas >= 2'",
    },
    {
      name: "namespace",
      type: "string",
      placeholder: "NAME",
      description: "namespace (default: the context's namespace, else default)",
    },
    {
      name: "selector",
      type: "string",
      placeholder: "LABELS",
      description: "objects with these labels (app=web,tier!=db); one holding suffices",
    },
    {
      name: "all",
      type: "boolean",
      description: "every selected object (or every one in the namespace) must hold",
    },
    {
      name: "kubeconfig",
      type: "string",
      placeholder: "PATH",
      description: "kubeconfig file (default: KUBECONFIG, else ~/.kube/config)",
      complete: "file",
    },
    {
      name: "context",
      type: "string",
      placeholder: "NAME",
      description: "kubeconfig context (default: the current context)",
    },
  ],
  examples: [
    {
      args: "k8s deployment/web --for rollout",
      description: "wait until a deployment has rolled out",
    },
    {
      args: "orch job/migrate --for complete --namespace shop",
      description: "wait for a job; exit 3 at once if it fails",
    },
    {
      args: "k8s pod --selector app=web --all --for ready --namespace shop",
      description: "wait until every pod labelled app=web is Ready",
    },
    {
      args: "k8s deploy/web --jsonpath '.status.readyReplicas >= 2'",
      description: "wait until at least two replicas are ready",
    },
    {
      args: "k8s certificate/site-tls --condition Ready --context prod",
      description: "a custom resource's condition, in another context",
    },
  ],
  parse(input) {
    const spec = parseOrch(input);
    const client = new KubeClient({
      kubeconfig: input.string("kubeconfig"),
      context: input.string("context"),
      env: input.env,
    });
    const probe = new OrchProbe(spec, client);
    const p: Probe & { readonly spec: OrchSpec } = {
      target: input.target ?? "",
      spec,
      check: ({ signal }) => probe.check(signal),
      watch: (ctx) => probe.watch(ctx),
      close: () => client.close(),
    };
    return p;
  },
};
