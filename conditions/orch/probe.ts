/**
 * orch's probe: per attempt, the resource type (discovery), then the named
 * object or the selected ones, judged by `judge.ts`; a watch on them asks for
 * an attempt as soon as one changes. The kind reads time only through the
 * engine's clock (docs/contract.md §10).
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { iterate } from "../../engine/follow.ts";
import { hintOf } from "../../engine/errors.ts";
import type {
  AttemptContext,
  Probe,
  ProbeEnv,
  ProbeResult,
  WatchContext,
} from "../../engine/types.ts";
import { mergeIterables } from "../_common/filestamp.ts";
import { AUTH_GRACE_MS, Collections, type Member } from "./collection.ts";
import { type ApiResource, collectionPath, resolveKind, resolveResource } from "./discovery.ts";
import { httpProblem, KubeError } from "./errors.ts";
import { newestWarning, type Warning, warningSelector } from "./events.ts";
import {
  capturesOf,
  judgeObject,
  judgeSelected,
  type KubeObject,
  objectLabel,
  str,
  type Verdict,
  wantPhrase,
} from "./judge.ts";
import { KubeClient } from "./kube.ts";
import { kubeClientLibrary, yamlLibrary } from "./kubeconfig.ts";
import { type OrchOptions, supports } from "./mod.ts";
import { needsEndpoints, readiness } from "./readiness.ts";

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
/**
 * Objects per page of a selector's list: each page is one answer, so that a namespace of
 * thousands of objects stays under the answer cap (kube.ts `ANSWER_MAX_BYTES`).
 */
export const LIST_PAGE = 250;
export { AUTH_GRACE_MS };

/** The parts of the API client a probe uses (KubeClient; a fake in tests). */
export type KubeApi = Pick<KubeClient, "connection" | "discover" | "get" | "getJson" | "watch">;

/** One condition's checks and watch. */
export class OrchProbe {
  /** The uid of the named object when first seen (`--for delete`: a new object is not the old one). */
  #uid: string | undefined;
  /** When an attempt last found the API server unreachable (engine clock). */
  #unreachableAt: number | undefined;
  /** Its membership of the shared watch of its object's collection (a manifest's object). */
  #member: { readonly path: string; readonly member: Member } | undefined;
  #closed = false;

  /**
   * `collections`: the shared list-then-watch of each collection, which a manifest's objects
   * use instead of a watch and a GET per attempt each (collection.ts).
   */
  constructor(
    readonly options: OrchOptions,
    readonly client: KubeApi,
    readonly clock: Clock,
    readonly collections?: Collections,
  ) {}

  /**
   * The membership of the collection at `r.path`, for a manifest's object when the
   * collections are shared; undefined otherwise (a single target keeps a watch of its own,
   * on its one object).
   */
  #memberOf(r: Resolved): Member | undefined {
    const sel = this.options.selection;
    if (
      this.collections === undefined || this.#closed || this.options.apiVersion === undefined ||
      sel.by !== "name"
    ) {
      return undefined;
    }
    if (this.#member?.path !== r.path) {
      this.#member?.member.leave();
      this.#member = { path: r.path, member: this.collections.join(r.path, sel.name) };
    }
    return this.#member.member;
  }

  /** Leaves the shared collection. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#member?.member.leave();
    this.#member = undefined;
  }

  /**
   * The resource type of the target (discovery is fetched again when it is
   * unknown and older than `attemptStart`), its namespace and collection path.
   */
  async resolve(signal: AbortSignal, attemptStart: number): Promise<Resolved> {
    const conn = await this.client.connection(signal);
    const { apiVersion, resource } = this.options;
    const find = (list: readonly ApiResource[]) =>
      apiVersion === undefined
        ? resolveResource(list, resource)
        : resolveKind(list, apiVersion, resource);
    let d = await this.client.discover(signal);
    let res = find(d.resources);
    if (!res && d.fetchedAt < attemptStart) {
      d = await this.client.discover(signal, true);
      res = find(d.resources);
    }
    if (!res && apiVersion !== undefined) {
      // A manifest's custom resource whose definition is still being installed.
      throw new KubeError(
        "unserved",
        `the server does not serve ${resource} of ${apiVersion} (yet; see kubectl api-resources)`,
      );
    }
    if (!res) {
      throw new KubeError(
        "context",
        `the server has no resource type ${JSON.stringify(resource)} ` +
          `(not a kind, plural or short name it knows; see kubectl api-resources)`,
      );
    }
    const problem = supports(this.options.want, res);
    if (problem) throw new KubeError("context", problem);
    const namespace = this.options.namespace ?? conn.namespace;
    return { res, namespace, path: collectionPath(res, namespace) };
  }

  /** `pods matching app=web in namespace default`. */
  what(r: Resolved): string {
    const sel = this.options.selection;
    const ns = r.res.namespaced ? ` in namespace ${r.namespace}` : "";
    if (sel.by === "selector" && sel.selector) {
      return `${r.res.plural} matching ${sel.selector}${ns}`;
    }
    return `${r.res.plural}${ns}`;
  }

  /**
   * One attempt. Refused credentials and an unknown context or resource type
   * are fatal; other API failures are pending with their text; anything else
   * is thrown for the engine to report.
   */
  async check(signal: AbortSignal): Promise<ProbeResult> {
    const start = this.clock.now();
    try {
      const r = await this.resolve(signal, start);
      const sel = this.options.selection;
      return sel.by === "name"
        ? await this.checkNamed(r, sel.name, signal)
        : await this.checkSelected(r, sel.selector, sel.all, signal);
    } catch (e) {
      if (signal.aborted || !(e instanceof KubeError)) throw e;
      if (this.#restarting(e)) {
        return { status: "pending", error: `${e.message} (the server was just unreachable)` };
      }
      const status = e.fatal ? "fatal" : "pending";
      const hint = hintOf(e);
      return hint === undefined ? { status, error: e.message } : { status, error: e.message, hint };
    }
  }

  /**
   * Whether `e` is refused credentials from a server that was unreachable
   * less than AUTH_GRACE_MS ago (a restart); notes when it was unreachable.
   */
  #restarting(e: KubeError): boolean {
    if (e.kind === "network") this.#unreachableAt = this.clock.now();
    return e.kind === "auth" && this.#unreachableAt !== undefined &&
      this.clock.now() - this.#unreachableAt < AUTH_GRACE_MS;
  }

  /** Judges the object named `name`. */
  async checkNamed(r: Resolved, name: string, signal: AbortSignal): Promise<ProbeResult> {
    const label = `${r.res.kind.toLowerCase()}/${name}`;
    const where = r.res.namespaced ? ` in namespace ${r.namespace}` : "";
    // A manifest's object is judged as its collection's shared watch keeps it, once listed.
    const kept = await this.#memberOf(r)?.lookup(signal);
    const got = kept === undefined
      ? await this.client.get(`${r.path}/${encodeURIComponent(name)}`, signal)
      : kept.exists
      ? { status: 200, json: kept.object, text: "" }
      : { status: 404, json: undefined, text: "" };
    const want = this.options.want;
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
    const v = want.type === "readiness"
      ? await this.readiness(obj, r, signal)
      : await judgeObject(obj, r.res, want);
    if (v.state === "ok") {
      return { status: "satisfied", detail: `${label} ${v.text}`, ...capturesOf(v) };
    }
    // Why it is not ready is often only in an event (a pod that cannot be scheduled); one the
    // verdict already quotes (a failed job's reason) is not said twice.
    const warning = await this.warning(obj, r, signal);
    const text = warning && !(warning.message && v.text.includes(warning.message))
      ? `${label} ${v.text}; ${warning.text}`
      : `${label} ${v.text}`;
    return { status: v.state === "fail" ? "fatal" : "pending", error: text };
  }

  /** The readiness of `obj`'s kind; a Service's EndpointSlices are listed when it needs them. */
  async readiness(obj: KubeObject, r: Resolved, signal: AbortSignal): Promise<Verdict> {
    if (!needsEndpoints(obj, r.res)) return readiness(obj, r.res);
    const ns = str(obj, "metadata", "namespace") ?? r.namespace;
    const q = new URLSearchParams({
      labelSelector: `kubernetes.io/service-name=${str(obj, "metadata", "name") ?? ""}`,
    });
    const got = await this.client.get(
      `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/endpointslices?${q}`,
      signal,
    );
    if (got.status < 200 || got.status > 299 || typeof got.json !== "object" || !got.json) {
      return { state: "wait", text: `its endpoint slices: ${httpProblem(got)}` };
    }
    const items = (got.json as { items?: unknown }).items;
    return readiness(obj, r.res, Array.isArray(items) ? items as KubeObject[] : []);
  }

  /**
   * The newest Warning event about `obj` (or about the pods its controller made), from one
   * list call; undefined when there is none or the events cannot be read (they are a hint: no
   * failure of theirs changes the verdict).
   */
  async warning(obj: KubeObject, r: Resolved, signal: AbortSignal): Promise<Warning | undefined> {
    // Events of cluster-scoped objects are recorded in the default namespace.
    const ns = str(obj, "metadata", "namespace") ?? (r.res.namespaced ? r.namespace : "default");
    const q = new URLSearchParams({ fieldSelector: warningSelector(r.res, obj) });
    try {
      const got = await this.client.get(
        `/api/v1/namespaces/${encodeURIComponent(ns)}/events?${q}`,
        signal,
      );
      const items = (got.json as { items?: unknown } | undefined)?.items;
      if (got.status !== 200 || !Array.isArray(items)) return undefined;
      return newestWarning(items as KubeObject[], obj, r.res);
    } catch (e) {
      if (signal.aborted) throw e;
      return undefined;
    }
  }

  /** Judges the objects a selector (or `--all`) selects. */
  async checkSelected(
    r: Resolved,
    selector: string | undefined,
    all: boolean,
    signal: AbortSignal,
  ): Promise<ProbeResult> {
    const want = this.options.want;
    if (want.type === "readiness") throw new Error("orch: readiness is judged per named object");
    const what = this.what(r);
    const judged: { label: string; verdict: Verdict }[] = [];
    const names: string[] = [];
    let count = 0;
    // Page by page (kubectl's chunked lists): only the verdicts are kept.
    let next: string | undefined = "";
    while (next !== undefined) {
      const q = new URLSearchParams({ limit: String(LIST_PAGE) });
      if (selector) q.set("labelSelector", selector);
      if (next) q.set("continue", next);
      const got = await this.client.get(`${r.path}?${q}`, signal);
      if (got.status < 200 || got.status > 299 || typeof got.json !== "object" || !got.json) {
        return { status: "pending", error: `${r.res.plural}: ${httpProblem(got)}` };
      }
      const page = got.json as { items?: unknown; metadata?: { continue?: unknown } };
      const items = (Array.isArray(page.items) ? page.items : []) as KubeObject[];
      const cont = page.metadata?.continue;
      next = typeof cont === "string" && cont !== "" ? cont : undefined;
      count += items.length;
      for (const o of items) {
        if (want.type === "delete") {
          if (names.length < 3) names.push(objectLabel(r.res, o));
          continue;
        }
        judged.push({ label: objectLabel(r.res, o), verdict: await judgeObject(o, r.res, want) });
      }
    }
    if (want.type === "delete") {
      if (count === 0) return { status: "satisfied", detail: `no ${what}` };
      const more = count > 3 ? `, ... (${count} in all)` : "";
      return {
        status: "pending",
        error: `${count} ${what} still exist: ${names.join(", ")}${more}`,
      };
    }
    return judgeSelected(judged, all, what, wantPhrase(want));
  }

  /**
   * List, then watch from the list's resourceVersion; every change asks for
   * an attempt. Lists again (and asks for an attempt, for what may have
   * changed meanwhile) after a 410 (version too old), after the stream ends
   * and after errors, the latter with a growing pause. Refused credentials
   * and unknown kinds end the watch: the attempts report them. The interval
   * stays the upper bound. A manifest's Service is ready by its
   * EndpointSlices, which change without the Service: they are watched too.
   */
  watch({ signal }: WatchContext): AsyncIterable<void> {
    const objects = this.#watchCollection(signal, async () => {
      const r = await this.resolve(signal, 0);
      const q: Record<string, string> = {};
      const sel = this.options.selection;
      if (sel.by === "name") q.fieldSelector = `metadata.name=${sel.name}`;
      else if (sel.selector) q.labelSelector = sel.selector;
      return { path: r.path, query: q };
    });
    const slices = this.#watchSlices(signal);
    return slices === undefined ? objects : mergeIterables([objects, slices]);
  }

  /**
   * Whether its changes come from its collection's shared watch (a manifest's object, when the
   * collections are shared): it then `listen`s instead of `watch`ing.
   */
  get shares(): boolean {
    return this.collections !== undefined && this.options.apiVersion !== undefined &&
      this.options.selection.by === "name";
  }

  /**
   * `watch` for a manifest's object: its collection's shared watch calls `onChange`, with
   * nothing of the condition's suspended while it waits (docs/reliability.md, large
   * manifests); a Service's EndpointSlices have a watch of their own, as in `watch`.
   */
  listen({ signal }: WatchContext, onChange: () => void): Promise<void> {
    const objects = this.#listenShared(signal, onChange);
    const slices = this.#watchSlices(signal);
    if (slices === undefined) return objects;
    return Promise.all([objects, iterate(slices, signal, onChange)]).then(() => {});
  }

  /** The watch of a Service's EndpointSlices, when it is waited ready; undefined otherwise. */
  #watchSlices(signal: AbortSignal): AsyncIterable<void> | undefined {
    const { want, apiVersion, resource, selection } = this.options;
    if (
      want.type !== "readiness" || apiVersion !== "v1" || resource !== "Service" ||
      selection.by !== "name"
    ) {
      return undefined;
    }
    return this.#watchCollection(signal, async () => {
      const ns = this.options.namespace ?? (await this.client.connection(signal)).namespace;
      return {
        path: `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/endpointslices`,
        query: { labelSelector: `kubernetes.io/service-name=${selection.name}` },
      };
    });
  }

  /**
   * The changes of a manifest's object, from its collection's shared watch; the resource
   * type is resolved first (again after a pause while it fails, as a watch of its own would).
   */
  async #listenShared(signal: AbortSignal, onChange: () => void): Promise<void> {
    let pauseMs = MIN_PAUSE_MS;
    while (!signal.aborted) {
      let member: Member | undefined;
      try {
        member = this.#memberOf(await this.resolve(signal, 0));
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof KubeError && !this.#restarting(e) && e.fatal) return;
      }
      // Returned, not awaited: this frame ends here, the member's listener is all that waits.
      if (member !== undefined) return member.listen(signal, onChange);
      if (this.#closed) return;
      await this.clock.sleep(pauseMs, signal).catch(() => {});
      pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
    }
  }

  /** The list-then-watch loop of `watch` on the collection that `target` names. */
  async *#watchCollection(
    signal: AbortSignal,
    target: () => Promise<{ path: string; query: Record<string, string> }>,
  ): AsyncGenerator<void> {
    let pauseMs = MIN_PAUSE_MS;
    while (!signal.aborted) {
      let pause = false;
      try {
        const { path, query: q } = await target();
        const list = await this.client.getJson(
          `${path}?${new URLSearchParams({ ...q, limit: "1" })}`,
          signal,
        );
        const rv = str(list, "metadata", "resourceVersion") ?? "";
        yield;
        const started = this.clock.now();
        let events = 0;
        for await (
          const ev of this.client.watch(path, {
            ...q,
            resourceVersion: rv,
            timeoutSeconds: String(WATCH_SECONDS),
          }, signal)
        ) {
          events++;
          if (ev.type !== "BOOKMARK") yield;
        }
        // The stream ended: list again, but do not spin on a server that ends it at once.
        pause = events === 0 && this.clock.now() - started < 1000;
        if (!pause) pauseMs = MIN_PAUSE_MS;
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof KubeError && !this.#restarting(e) && e.fatal) return;
        pause = !(e instanceof KubeError && e.status === 410);
      }
      if (pause) {
        await this.clock.sleep(pauseMs, signal);
        pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
      }
    }
  }
}

/** An API client that the conditions of a run with the same kubeconfig and context share. */
interface Shared {
  readonly client: KubeClient;
  /** The shared watches of the collections of manifests' objects. */
  readonly collections: Collections;
  readonly clock: Clock;
  users: number;
}

/**
 * The clients in use, by the run's environment and then by kubeconfig and context: the
 * objects of `orch -f` share one kubeconfig load, one discovery, one credential plugin run
 * and the kept-alive connections.
 */
const clients = new WeakMap<object, Map<string, Shared>>();

/** A client for `o`'s kubeconfig and context, shared with the run's other conditions. */
function sharedClient(o: OrchOptions, env: ProbeEnv): Lease {
  const key = JSON.stringify([o.kubeconfig ?? null, o.context ?? null]);
  let byKey = clients.get(env.env);
  if (!byKey) clients.set(env.env, byKey = new Map());
  let shared = byKey.get(key);
  if (!shared || shared.clock !== env.clock) {
    const client = new KubeClient(
      { kubeconfig: o.kubeconfig, context: o.context, env: env.env },
      env.clock,
      env.secrets && ((v: string) => env.secrets!.add(v)),
    );
    shared = {
      client,
      collections: new Collections(client, env.clock),
      clock: env.clock,
      users: 0,
    };
    byKey.set(key, shared);
  }
  shared.users++;
  return new Lease(shared, byKey, key);
}

/** One condition's use of a shared client; the last to release it closes the client. */
class Lease {
  #released = false;

  constructor(
    readonly shared: Shared,
    readonly byKey: Map<string, Shared>,
    readonly key: string,
  ) {}

  release(): void {
    if (this.#released) return;
    this.#released = true;
    const s = this.shared;
    if (--s.users > 0) return;
    s.client.close();
    if (this.byKey.get(this.key) === s) this.byKey.delete(this.key);
  }
}

/**
 * One orch condition's probe: its `OrchProbe` and its lease of the shared client. Its methods
 * are on its prototype, no closures: a manifest's every object has one (docs/reliability.md,
 * large manifests).
 */
class OrchCondition {
  constructor(readonly probe: OrchProbe, readonly lease: Lease) {}

  check({ signal }: AttemptContext): Promise<ProbeResult> {
    return this.probe.check(signal);
  }

  close(): void {
    this.probe.close();
    this.lease.release();
  }
}

/** A condition that watches its object (or selection) on its own. */
class WatchingCondition extends OrchCondition implements Probe {
  watch(ctx: WatchContext): AsyncIterable<void> {
    return this.probe.watch(ctx);
  }
}

/** A manifest's object, whose changes its collection's shared watch pushes. */
class ListeningCondition extends OrchCondition implements Probe {
  listen(ctx: WatchContext, onChange: () => void): Promise<void> {
    return this.probe.listen(ctx, onChange);
  }
}

/** Makes the probe of one orch condition; its API client is shared and closed with the last. */
export async function create(o: OrchOptions, env: ProbeEnv): Promise<Probe> {
  await Promise.all([kubeClientLibrary.get(), yamlLibrary.get()]);
  const lease = sharedClient(o, env);
  const { client, collections } = lease.shared;
  const probe = new OrchProbe(o, client, env.clock, collections);
  return probe.shares ? new ListeningCondition(probe, lease) : new WatchingCondition(probe, lease);
}
