/**
 * orch's probe: per attempt, the resource type (discovery), then the named
 * object or the selected ones, judged by `judge.ts`; a watch on them asks for
 * an attempt as soon as one changes. The kind reads time only through the
 * engine's clock (docs/contract.md §10).
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import { FatalError, hintOf, withHint } from "../../engine/errors.ts";
import { settle } from "../../engine/settle.ts";
import type { Probe, ProbeEnv, ProbeResult, WatchContext } from "../../engine/types.ts";
import { type ApiResource, collectionPath, resolveResource } from "./discovery.ts";
import { httpProblem, KubeError } from "./errors.ts";
import {
  judgeObject,
  judgeSelected,
  type KubeObject,
  objectLabel,
  str,
  wantPhrase,
} from "./judge.ts";
import { KubeClient } from "./kube.ts";
import { kubeClientLibrary } from "./kubeconfig.ts";
import { type OrchOptions, supports } from "./mod.ts";

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
 * How long after the API server was unreachable a 401/403 is still pending:
 * a restarted server refuses every user but the admins until its
 * authorization data is loaded (docs/contract.md §5 orch).
 */
export const AUTH_GRACE_MS = 30_000;

/** The parts of the API client a probe uses (KubeClient; a fake in tests). */
export type KubeApi = Pick<KubeClient, "connection" | "discover" | "get" | "getJson" | "watch">;

/** One condition's checks and watch. */
export class OrchProbe {
  /** The uid of the named object when first seen (`--for delete`: a new object is not the old one). */
  #uid: string | undefined;
  /** When an attempt last found the API server unreachable (engine clock). */
  #unreachableAt: number | undefined;

  constructor(
    readonly options: OrchOptions,
    readonly client: KubeApi,
    readonly clock: Clock,
  ) {}

  /**
   * The resource type of the target (discovery is fetched again when it is
   * unknown and older than `attemptStart`), its namespace and collection path.
   */
  async resolve(signal: AbortSignal, attemptStart: number): Promise<Resolved> {
    const conn = await this.client.connection(signal);
    let d = await this.client.discover(signal);
    let res = resolveResource(d.resources, this.options.resource);
    if (!res && d.fetchedAt < attemptStart) {
      d = await this.client.discover(signal, true);
      res = resolveResource(d.resources, this.options.resource);
    }
    if (!res) {
      throw new KubeError(
        "context",
        `the server has no resource type ${JSON.stringify(this.options.resource)} ` +
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
   * are thrown as `FatalError`s; other API failures are pending with their
   * text; anything else is thrown for the engine to report.
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
      const hint = hintOf(e);
      if (e.fatal) throw withHint(new FatalError(e.message), hint);
      return hint === undefined
        ? { status: "pending", error: e.message }
        : { status: "pending", error: e.message, hint };
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
    const got = await this.client.get(`${r.path}/${encodeURIComponent(name)}`, signal);
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
    const v = await judgeObject(obj, r.res, want);
    const text = `${label} ${v.text}`;
    if (v.state === "ok") return { status: "satisfied", detail: text };
    return { status: v.state === "fail" ? "fatal" : "pending", error: text };
  }

  /** Judges the objects a selector (or `--all`) selects. */
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
    if (this.options.want.type === "delete") {
      if (items.length === 0) return { status: "satisfied", detail: `no ${what}` };
      const names = items.slice(0, 3).map((o) => objectLabel(r.res, o)).join(", ");
      const more = items.length > 3 ? `, ... (${items.length} in all)` : "";
      return { status: "pending", error: `${items.length} ${what} still exist: ${names}${more}` };
    }
    const judged = [];
    for (const o of items) {
      judged.push({
        label: objectLabel(r.res, o),
        verdict: await judgeObject(o, r.res, this.options.want),
      });
    }
    return judgeSelected(judged, all, what, wantPhrase(this.options.want));
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
        const sel = this.options.selection;
        if (sel.by === "name") q.fieldSelector = `metadata.name=${sel.name}`;
        else if (sel.selector) q.labelSelector = sel.selector;
        const list = await this.client.getJson(
          `${r.path}?${new URLSearchParams({ ...q, limit: "1" })}`,
          signal,
        );
        const rv = str(list, "metadata", "resourceVersion") ?? "";
        yield;
        const started = this.clock.now();
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

/** Makes the probe of one orch condition: its own API client, closed with it. */
export async function create(o: OrchOptions, env: ProbeEnv): Promise<Probe> {
  await kubeClientLibrary.get();
  const client = new KubeClient(
    { kubeconfig: o.kubeconfig, context: o.context, env: env.env },
    env.clock,
  );
  const probe = new OrchProbe(o, client, env.clock);
  return {
    check: ({ signal }) => settle(signal, () => probe.check(signal)),
    watch: (ctx) => probe.watch(ctx),
    close: () => client.close(),
  };
}
