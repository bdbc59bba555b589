/**
 * One list-then-watch of a collection (a resource type in a namespace) shared by the conditions
 * of a run that wait for named objects in it: the objects of `orch -f` manifests. Each object
 * used to have a watch and a GET per attempt of its own, and a manifest of 10,000 ConfigMaps
 * reached a gigabyte; now the objects a collection's members name are kept from its list and
 * its watch events, and an attempt judges the kept object (docs/contract.md §5 orch,
 * docs/reliability.md, large manifests).
 *
 * Only the objects a member names are kept; the others of a page are dropped as it is read.
 * While the list or the watch fails (an unreachable server, refused credentials), a lookup
 * says it does not know, and the attempt asks the server itself, which gives the attempt its
 * error as before.
 *
 * @module
 */

import { offAbort, onAbort } from "../../engine/abort.ts";
import type { Clock } from "../../engine/clock.ts";
import { KubeError } from "./errors.ts";
import { type KubeObject, str } from "./judge.ts";
import type { KubeClient } from "./kube.ts";

/** The parts of the API client a collection uses (KubeClient; a fake in tests). */
export type CollectionApi = Pick<KubeClient, "getJson" | "watch">;

/** Pause after a failed list or watch, doubling up to {@linkcode MAX_PAUSE_MS}. */
const MIN_PAUSE_MS = 250;
const MAX_PAUSE_MS = 5000;
/** A watch asks the server to end it after this long (then it lists and watches again). */
export const WATCH_SECONDS = 290;
/** Objects per page of the list: each page is one answer, under the answer cap. */
export const PAGE = 250;
/**
 * How long after the API server was unreachable a 401/403 is still pending:
 * a restarted server refuses every user but the admins until its
 * authorization data is loaded (docs/contract.md §5 orch).
 */
export const AUTH_GRACE_MS = 30_000;

/** What a collection knows of one named object: there (with it) or not there. */
export type Lookup = { readonly exists: true; readonly object: KubeObject } | {
  readonly exists: false;
};

/** A condition's membership of a collection: its object's changes and state. */
export interface Member {
  /**
   * Calls `onChange` when the object may have changed (and once after each list; at once when
   * a list was made already), never after `signal` aborted. What it returns settles when the
   * collection's watch ends for good or `signal` aborts. Nothing of it is suspended while it
   * waits: a manifest's every object has one (docs/reliability.md, large manifests).
   */
  listen(signal: AbortSignal, onChange: () => void): Promise<void>;
  /**
   * The object as the collection knows it, after the first list when one is under way;
   * undefined when the collection does not know (no list yet, or the list or watch failed).
   */
  lookup(signal: AbortSignal): Promise<Lookup | undefined>;
  /** Leaves the collection; the last member to leave ends its watch. Idempotent. */
  leave(): void;
}

/** A listener of one member: asked to wake on changes, told when the collection's watch ends. */
interface Listener {
  readonly change: () => void;
  end(): void;
}

/**
 * A member's listener in its name's list: an object with its methods on its prototype and one
 * bound function, not closures (a manifest's every object has one; docs/reliability.md, large
 * manifests).
 */
class Listening implements Listener {
  /** Leaves the list and settles the member's `listen`; what the signal's abort calls. */
  readonly end: () => void;

  /** The list it is in, if any. */
  list: Listener[] | undefined;

  constructor(
    readonly change: () => void,
    readonly signal: AbortSignal,
    readonly resolve: () => void,
  ) {
    this.end = this.#ended.bind(this);
  }

  #ended(): void {
    offAbort(this.signal, this.end);
    const at = this.list?.indexOf(this) ?? -1;
    if (at >= 0) this.list!.splice(at, 1);
    this.resolve();
  }
}

/** The listeners of a name that has none yet: shared, replaced at its first (never pushed to). */
const NO_LISTENERS: Listener[] = [];

/** The shared list-then-watch of the collection at `path`. */
export class SharedCollection {
  /**
   * The names members wait for, with their listeners: an array each, not a `Set` (a few
   * bytes against 150; most names have one listener).
   */
  readonly #members = new Map<string, Listener[]>();
  /** How many members hold each name. */
  readonly #holds = new Map<string, number>();
  /** The objects of the names waited for that exist. */
  readonly #objects = new Map<string, KubeObject>();
  /** The names whose state is known: listed by the current list, or seen in an event since. */
  readonly #known = new Set<string>();
  /** Whether a list succeeded and its watch has not failed since. */
  #live = false;
  /** Settles when the first list under way ends (or fails); undefined when none is. */
  #listing: Promise<void> | undefined;
  #ctl: AbortController | undefined;
  /** A fatal failure ended the watch: members' changes end, lookups say they do not know. */
  #ended = false;
  /** When the list or the watch last found the server unreachable (engine clock). */
  #unreachableAt: number | undefined;

  constructor(
    readonly client: CollectionApi,
    readonly clock: Clock,
    readonly path: string,
    /** Called once the last member left. */
    readonly onEmpty: () => void = () => {},
  ) {}

  /** Joins the collection as the condition waiting for the object `name`. */
  join(name: string): Member {
    this.#holds.set(name, (this.#holds.get(name) ?? 0) + 1);
    if (!this.#members.has(name)) this.#members.set(name, NO_LISTENERS);
    if (this.#ctl === undefined) this.#start();
    return new Membership(this, name);
  }

  /** A member of `name` left (once each). */
  leave(name: string): void {
    const n = (this.#holds.get(name) ?? 1) - 1;
    if (n > 0) return void this.#holds.set(name, n);
    this.#holds.delete(name);
    this.#members.delete(name);
    this.#objects.delete(name);
    this.#known.delete(name);
    if (this.#holds.size > 0) return;
    this.#ctl?.abort();
    this.#ctl = undefined;
    this.onEmpty();
  }

  /** `Member.lookup` of the member waiting for `name`. */
  async lookup(name: string, signal: AbortSignal): Promise<Lookup | undefined> {
    const listing = this.#listing;
    if (listing !== undefined && !this.#live && !signal.aborted) {
      let off = () => {};
      await Promise.race([
        listing,
        new Promise<void>((resolve) => off = onAbort(signal, resolve)),
      ]);
      off();
    }
    if (!this.#live || !this.#known.has(name)) return undefined;
    const object = this.#objects.get(name);
    return object === undefined ? { exists: false } : { exists: true, object };
  }

  /** `Member.listen` of the member waiting for `name`. */
  listen(name: string, signal: AbortSignal, onChange: () => void): Promise<void> {
    if (this.#ended || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const listener = new Listening(onChange, signal, resolve);
      const list = this.#members.get(name);
      // The first listener of a name gets an array of its own, of one slot: a push into an
      // empty array makes room for seventeen (about 150 bytes per object of a manifest).
      if (list === NO_LISTENERS) {
        this.#members.set(name, listener.list = [listener]);
      } else if (list !== undefined) {
        list.push(listener);
        listener.list = list;
      }
      // onAbort, not an event listener: one per condition of a manifest, and the engine's
      // watcher signals call it without an event (engine/abort.ts).
      onAbort(signal, listener.end);
      // A list already made counts as a change: the object may have changed since the start.
      if (this.#live) onChange();
    });
  }

  #notify(name?: string): void {
    const lists = name === undefined ? [...this.#members.values()] : [this.#members.get(name)];
    // A copy of each: a listener may leave while it is told.
    for (const list of lists) for (const l of list?.slice() ?? []) l.change();
  }

  #start(): void {
    const ctl = new AbortController();
    this.#ctl = ctl;
    this.#ended = false;
    this.#loop(ctl.signal).catch(() => {}).finally(() => {
      this.#live = false;
      if (ctl.signal.aborted) return;
      // Ended for good (refused credentials, an unknown type): the attempts report why.
      this.#ended = true;
      for (const list of this.#members.values()) for (const l of list.slice()) l.end();
    });
  }

  /**
   * List (page by page, keeping the objects members name), then watch from the list's
   * resourceVersion; list again after a 410, after the stream ends and after errors, the
   * latter with a growing pause. Refused credentials and unknown kinds end it.
   */
  async #loop(signal: AbortSignal): Promise<void> {
    let pauseMs = MIN_PAUSE_MS;
    while (!signal.aborted) {
      let pause = false;
      try {
        const rv = await this.#listOnce(signal);
        this.#notify();
        const started = this.clock.now();
        let events = 0;
        for await (
          const ev of this.client.watch(this.path, {
            resourceVersion: rv,
            timeoutSeconds: String(WATCH_SECONDS),
          }, signal)
        ) {
          events++;
          if (ev.type !== "BOOKMARK") this.#event(ev.type, ev.object as KubeObject);
        }
        // The stream ended: list again, but do not spin on a server that ends it at once.
        pause = events === 0 && this.clock.now() - started < 1000;
        if (!pause) pauseMs = MIN_PAUSE_MS;
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof KubeError && e.kind === "network") this.#unreachableAt = this.clock.now();
        // A restarted server refuses every user but its admins for a while (probe.ts).
        const restarting = e instanceof KubeError && e.kind === "auth" &&
          this.#unreachableAt !== undefined &&
          this.clock.now() - this.#unreachableAt < AUTH_GRACE_MS;
        if (e instanceof KubeError && e.fatal && !restarting) throw e;
        pause = !(e instanceof KubeError && e.status === 410);
      } finally {
        this.#live = false;
      }
      // What changed while the watch was down is found by the next list; attempts ask the
      // server meanwhile.
      this.#notify();
      if (pause) {
        await this.clock.sleep(pauseMs, signal).catch(() => {});
        pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
      }
    }
  }

  /** One list of the collection; returns its resourceVersion. */
  #listOnce(signal: AbortSignal): Promise<string> {
    const listing = this.#list(signal);
    const settled = listing.then(() => {}, () => {});
    this.#listing = settled;
    settled.then(() => {
      if (this.#listing === settled) this.#listing = undefined;
    });
    return listing;
  }

  async #list(signal: AbortSignal): Promise<string> {
    const objects = new Map<string, KubeObject>();
    // The names waited for once the first page is in: the conditions of a manifest join as
    // their first attempts resolve the type, together, and a list started by the first of
    // them covers them all.
    let names: Set<string> | undefined;
    let rv = "";
    let next: string | undefined = "";
    while (next !== undefined) {
      const q = new URLSearchParams({ limit: String(PAGE) });
      if (next) q.set("continue", next);
      const page = await this.client.getJson(`${this.path}?${q}`, signal) as {
        items?: unknown;
        metadata?: { continue?: unknown; resourceVersion?: unknown };
      };
      names ??= new Set(this.#members.keys());
      const items = Array.isArray(page.items) ? page.items as KubeObject[] : [];
      for (const o of items) {
        const name = str(o, "metadata", "name");
        if (name !== undefined && names.has(name)) objects.set(name, slim(o));
      }
      const cont = page.metadata?.continue;
      next = typeof cont === "string" && cont !== "" ? cont : undefined;
      if (typeof page.metadata?.resourceVersion === "string") rv = page.metadata.resourceVersion;
    }
    this.#objects.clear();
    this.#known.clear();
    for (const name of names ?? []) {
      if (!this.#members.has(name)) continue;
      this.#known.add(name);
      const o = objects.get(name);
      if (o !== undefined) this.#objects.set(name, o);
    }
    this.#live = true;
    return rv;
  }

  #event(type: string, object: KubeObject): void {
    const name = str(object, "metadata", "name");
    if (name === undefined || !this.#members.has(name)) return;
    if (type === "DELETED") this.#objects.delete(name);
    else this.#objects.set(name, slim(object));
    this.#known.add(name);
    this.#notify(name);
  }
}

/** The annotation `kubectl apply` (client-side) writes: the whole object once more. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * `o` without what no judgement reads and that is often most of its size: the server's
 * `managedFields` and the last-applied annotation (a copy of the object as applied).
 */
export function slim(o: KubeObject): KubeObject {
  const meta = o.metadata;
  if (typeof meta !== "object" || meta === null) return o;
  const { managedFields: _, annotations, ...rest } = meta as Record<string, unknown>;
  const kept: Record<string, unknown> = { ...rest };
  if (typeof annotations === "object" && annotations !== null) {
    const { [LAST_APPLIED]: _applied, ...others } = annotations as Record<string, unknown>;
    kept.annotations = others;
  }
  return { ...o, metadata: kept };
}

/**
 * A condition's membership of a collection: an object of two fields, no closures (a manifest's
 * every object has one; docs/reliability.md, large manifests).
 */
class Membership implements Member {
  #left = false;

  constructor(readonly collection: SharedCollection, readonly name: string) {}

  listen(signal: AbortSignal, onChange: () => void): Promise<void> {
    return this.collection.listen(this.name, signal, onChange);
  }

  lookup(signal: AbortSignal): Promise<Lookup | undefined> {
    return this.collection.lookup(this.name, signal);
  }

  leave(): void {
    if (this.#left) return;
    this.#left = true;
    this.collection.leave(this.name);
  }
}

/** The shared collections of one API client, by path. */
export class Collections {
  readonly #byPath = new Map<string, SharedCollection>();

  constructor(readonly client: CollectionApi, readonly clock: Clock) {}

  /** Joins the collection at `path` as the condition waiting for `name`. */
  join(path: string, name: string): Member {
    let c = this.#byPath.get(path);
    if (c === undefined) {
      const made = new SharedCollection(this.client, this.clock, path, () => {
        if (this.#byPath.get(path) === made) this.#byPath.delete(path);
      });
      this.#byPath.set(path, c = made);
    }
    return c.join(name);
  }
}
