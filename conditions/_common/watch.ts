/**
 * Event-driven waiting for path-based kinds (docs/contract.md §10): a `Probe.watch`
 * implementation that yields whenever the file system reports a change that
 * concerns a path or a glob pattern.
 *
 * Each watched directory is the nearest existing ancestor of the directory
 * that matters (`Deno.watchFs`, not recursive unless the pattern needs it).
 * When a directory on the way is created, or the watched one is deleted or
 * replaced, the watch moves there and an attempt is asked for at once (and
 * once more shortly after, for changes that raced the move). If the system
 * cannot watch (too many watches, a file system without notifications), the
 * iterator says so once through `ctx.notice` and ends: the runner keeps
 * polling at `--interval`. It never fails the run, and it releases every
 * watcher and timer when `ctx.signal` aborts or the consumer stops. Its
 * delays run on the clock it is given (the engine's, `ProbeEnv.clock`).
 *
 * All conditions of the process share one watcher per (directory, recursive)
 * and watcher factory: a reference-counted hub hands each event to every
 * condition listening there, which filters and paces it on its own. The last
 * one to leave closes the watcher; a watcher that fails makes each of its
 * conditions fall back as above (one notice each); an event that moves the
 * watch (the directory itself deleted or replaced) retires the hub, so the
 * conditions re-arm together on one fresh watcher. Sharing matters at scale:
 * a thousand separate watchers of one busy directory each receive every
 * event of it, and Deno drops most of them.
 *
 * @module
 */

import { type Clock, realClock } from "../../engine/clock.ts";
import { describeError } from "../../engine/errors.ts";
import type { WatchContext } from "../../engine/types.ts";
import { expandBraces, segmentMatcher } from "./glob.ts";

/** What `Deno.watchFs` returns, as far as this module uses it. */
export interface Watcher extends AsyncIterable<Deno.FsEvent> {
  close(): void;
}

/** Creates a watcher; `Deno.watchFs` unless a test injects another. */
export type WatchFactory = (path: string, recursive: boolean) => Watcher;

/** Options of `watchPath` / `watchGlob`. */
export interface WatchOptions {
  /** While this returns true, any change in the path's directory counts (e.g. a rotated-away log). */
  readonly anyInDirectory?: () => boolean;
  /** Replaces `Deno.watchFs` (tests). */
  readonly watchFs?: WatchFactory;
  /** The clock that times settling and pacing: the engine's (`ProbeEnv.clock`); `realClock` if omitted. */
  readonly clock?: Clock;
}

/** A second attempt this long after a directory moved or appeared catches writes that raced it. */
export const SETTLE_MS = 100;
/**
 * Writes are reported at least this far apart: the first after a quiet
 * spell at once, a burst (a busy log) at most this often, and its last one
 * is never dropped. Creations, removals and renames (a rotation) are
 * reported at once.
 */
export const MIN_GAP_MS = 100;

const WINDOWS = Deno.build.os === "windows";
const SEP = WINDOWS ? "\\" : "/";

function rootOf(p: string): string {
  if (!WINDOWS) return p.startsWith("/") ? "/" : "";
  return /^[A-Za-z]:\\/.exec(p)?.[0] ?? (p.startsWith("\\") ? "\\" : "");
}

/** `p` made absolute against the working directory, without `.`, `..` or doubled separators. */
export function absolutePath(p: string): string {
  const native = WINDOWS ? p.replaceAll("/", "\\") : p;
  const full = rootOf(native) ? native : Deno.cwd() + SEP + native;
  const root = rootOf(full);
  const parts: string[] = [];
  for (const seg of full.slice(root.length).split(SEP)) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") parts.pop();
    else parts.push(seg);
  }
  return root + parts.join(SEP);
}

/** The directory containing `p` (the root for the root). */
export function parentDir(p: string): string {
  const root = rootOf(p);
  const i = p.lastIndexOf(SEP);
  return i < root.length ? root : p.slice(0, i);
}

/** Whether `p` lies below the directory `dir`. */
function isBelow(p: string, dir: string): boolean {
  const prefix = dir.endsWith(SEP) ? dir : dir + SEP;
  return p.length > prefix.length && p.startsWith(prefix);
}

/** The nearest existing directory at or above `dir`. */
function nearestDir(dir: string): string {
  let d = dir;
  while (true) {
    try {
      if (Deno.statSync(d).isDirectory) return d;
    } catch {
      // Missing or unreadable: look one level up.
    }
    const up = parentDir(d);
    if (up === d) return d;
    d = up;
  }
}

/** A directory whose changes concern the condition. */
interface Root {
  /** Absolute directory to watch once it exists. */
  readonly dir: string;
  /** Watch everything below it, not only its entries. */
  readonly recursive: boolean;
  /** Whether a change at this path (below `dir`) concerns the condition. */
  relevant(path: string): boolean;
}

/** Yields whenever `path` (a file or directory) may have changed. */
export function watchPath(
  path: string,
  ctx: WatchContext,
  opts: WatchOptions = {},
): AsyncIterable<void> {
  const abs = absolutePath(path);
  const any = opts.anyInDirectory;
  const targets = [abs];
  try {
    // A symlink (e.g. a container log) changes where its target lives: watch there too.
    const real = Deno.realPathSync(abs);
    if (real !== abs) targets.push(real);
  } catch {
    // Does not exist (yet) or is a dangling link: the link's own directory is enough.
  }
  return watchRoots(
    targets.map((t) => {
      const dir = parentDir(t);
      return {
        dir,
        recursive: false,
        relevant: (p: string) => p === t || (any !== undefined && any() && parentDir(p) === dir),
      };
    }),
    ctx,
    opts,
  );
}

/** Yields whenever the set of paths matching a glob pattern (as in ./glob.ts) may have changed. */
export function watchGlob(
  pattern: string,
  ctx: WatchContext,
  opts: WatchOptions = {},
): AsyncIterable<void> {
  const roots = new Map<string, Root>();
  for (const p of expandBraces(pattern)) {
    const segs = p.split("/").filter((s) => s !== "");
    let i = 0;
    const literal: string[] = [];
    while (i < segs.length - 1 && !/[*?[]/.test(segs[i]!)) {
      literal.push(segs[i]!.replace(/\\(.)/g, "$1"));
      i++;
    }
    const rest = segs.slice(i);
    if (rest.length === 0) continue;
    const dir = absolutePath((p.startsWith("/") ? "/" : "") + (literal.join("/") || "."));
    const recursive = rest.length > 1;
    const key = `${dir}\0${recursive}`;
    const seen = roots.get(key);
    if (recursive) {
      roots.set(key, { dir, recursive, relevant: () => true });
      continue;
    }
    const match = segmentMatcher(rest[0]!);
    const here = (q: string) => parentDir(q) === dir && match(q.slice(q.lastIndexOf(SEP) + 1));
    // `{a,b}` alternatives in the same directory share one watch.
    roots.set(key, { dir, recursive, relevant: seen ? (q) => seen.relevant(q) || here(q) : here });
  }
  return watchRoots([...roots.values()], ctx, opts);
}

/** Calls `fn` after `ms` on `clock` unless the returned function is called first. */
function later(clock: Clock, ms: number, fn: () => void): () => void {
  const ctl = new AbortController();
  clock.sleep(Math.max(0, Math.ceil(ms)), ctl.signal).then(() => {
    if (!ctl.signal.aborted) fn();
  });
  return () => ctl.abort();
}

/** A short reason for a watcher that cannot be created. */
function watchFailure(e: unknown): string {
  const text = describeError(e);
  if (/watch limit/i.test(text)) return "too many watches";
  return text;
}

/** Whether an event at `p` means the watched directory `at` itself was deleted, moved or replaced. */
function movesWatch(p: string, at: string): boolean {
  return p === at || !isBelow(p, at);
}

/** A condition's end of a shared watcher. */
interface Listener {
  event(ev: Deno.FsEvent): void;
  /** The shared watcher failed; it is closed and this listener removed. */
  fail(e: unknown): void;
}

/** One watcher of a directory, shared by every listener of the process that watches it. */
interface Hub {
  readonly table: Map<string, Hub>;
  readonly key: string;
  readonly dir: string;
  readonly watcher: Watcher;
  readonly listeners: Set<Listener>;
  /** Closed (by its last listener) or failed: delivers nothing more. */
  closed: boolean;
  /** Settles once the watcher's iteration has stopped. */
  pump: Promise<void>;
}

const denoWatchFs: WatchFactory = (path, recursive) => Deno.watchFs(path, { recursive });

/** The open hubs of each watcher factory, by directory and recursiveness. */
const hubs = new WeakMap<WatchFactory, Map<string, Hub>>();

/** Takes `h` out of its table: listeners arriving later get a watcher of their own. */
function retire(h: Hub): void {
  if (h.table.get(h.key) === h) h.table.delete(h.key);
}

async function pump(h: Hub): Promise<void> {
  try {
    for await (const ev of h.watcher) {
      if (h.closed) return;
      // Every listener re-arms on such an event: let them meet on a fresh watcher.
      if (ev.paths.some((p) => movesWatch(p, h.dir))) retire(h);
      // A snapshot: a listener may leave (or re-join a new hub) while it handles the event.
      for (const l of [...h.listeners]) if (h.listeners.has(l)) l.event(ev);
    }
  } catch (e) {
    if (h.closed) return;
    h.closed = true;
    retire(h);
    const listeners = [...h.listeners];
    h.listeners.clear();
    try {
      h.watcher.close();
    } catch {
      // Already released by its failure.
    }
    for (const l of listeners) l.fail(e);
  } finally {
    retire(h); // ended by itself: take no new listeners
  }
}

/**
 * Adds `l` to the shared watcher of `dir`, creating it (which may throw, as
 * the factory does) when there is none. Returns how to leave: leaving last
 * closes the watcher and returns a promise that settles once it stopped.
 */
function listen(
  make: WatchFactory,
  dir: string,
  recursive: boolean,
  l: Listener,
): () => Promise<void> | undefined {
  let table = hubs.get(make);
  if (table === undefined) hubs.set(make, table = new Map());
  const key = `${recursive ? "r" : "-"}${dir}`;
  let hub = table.get(key);
  if (hub === undefined) {
    const watcher = make(dir, recursive);
    hub = {
      table,
      key,
      dir,
      watcher,
      listeners: new Set(),
      closed: false,
      pump: Promise.resolve(),
    };
    hub.pump = pump(hub);
    table.set(key, hub);
  }
  const h = hub;
  h.listeners.add(l);
  return () => {
    if (!h.listeners.delete(l) || h.listeners.size > 0 || h.closed) return undefined;
    h.closed = true;
    retire(h);
    try {
      h.watcher.close();
    } catch {
      // Already released (it ended by itself).
    }
    return h.pump;
  };
}

interface Armed {
  readonly root: Root;
  /** Leaves the shared watcher this root listens to, if any. */
  leave: (() => Promise<void> | undefined) | undefined;
  /** The directory actually watched. */
  at: string;
  /** `at` is the root's directory itself (not an ancestor waiting for it). */
  exact: boolean;
}

async function* watchRoots(
  roots: readonly Root[],
  ctx: WatchContext,
  opts: WatchOptions,
): AsyncGenerator<void> {
  const { signal } = ctx;
  const make: WatchFactory = opts.watchFs ?? denoWatchFs;
  const clock = opts.clock ?? realClock;
  let pending = false;
  let wake: (() => void) | undefined;
  const pulse = () => {
    pending = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  /** Like `pulse`, but also cuts short the gap after the last yield. */
  const hurry = () => {
    pulse();
    endGap?.();
  };
  let cancelSettle: (() => void) | undefined;
  const settleSoon = () => {
    if (cancelSettle !== undefined || signal.aborted) return;
    cancelSettle = later(clock, SETTLE_MS, () => {
      cancelSettle = undefined;
      pulse();
    });
  };
  let failed = false;
  const armed: Armed[] = roots.map((root) => ({ root, leave: undefined, at: "", exact: false }));
  /** Shared watchers this iterator closed, until they have stopped. */
  const stopping = new Set<Promise<void>>();

  const leave = (a: Armed) => {
    const stopped = a.leave?.();
    a.leave = undefined;
    if (stopped === undefined) return;
    stopping.add(stopped);
    stopped.finally(() => stopping.delete(stopped));
  };

  const closeAll = () => {
    for (const a of armed) leave(a);
  };

  const fallBack = (dir: string, reason: string) => {
    if (failed) return;
    failed = true;
    closeAll();
    ctx.notice(`cannot watch ${dir} (${reason}); polling every interval`);
    hurry();
  };

  const onEvent = (a: Armed, ev: Deno.FsEvent) => {
    let rearm = false;
    let hit = false;
    let urgent = false;
    for (const p of ev.paths) {
      if (movesWatch(p, a.at)) {
        rearm = true; // the watched directory itself was deleted, moved or replaced
      } else if (!a.exact) {
        // Waiting for a.root.dir to appear: only directories on the way matter.
        if (p === a.root.dir || isBelow(a.root.dir, p)) rearm = true;
      } else if (a.root.relevant(p)) {
        hit = true;
        if (ev.kind !== "modify" && ev.kind !== "access") urgent = true;
        if (a.root.recursive && ev.kind === "create") settleSoon();
      }
    }
    if (rearm) {
      arm(a);
      hurry();
      settleSoon();
      return;
    }
    if (hit && urgent) hurry();
    else if (hit) pulse();
  };

  const arm = (a: Armed) => {
    leave(a);
    if (failed || signal.aborted) return;
    // A directory can vanish between finding it and watching it: look again a few times.
    for (let tries = 0; tries < 10; tries++) {
      const at = nearestDir(a.root.dir);
      const exact = at === a.root.dir;
      if (exact && a.root.recursive && at === rootOf(at)) {
        return fallBack(at, "a recursive watch of the root directory is too large");
      }
      const listener: Listener = {
        event: (ev) => onEvent(a, ev),
        fail: (e) => {
          if (!signal.aborted) fallBack(a.at, watchFailure(e));
        },
      };
      try {
        a.leave = listen(make, at, exact && a.root.recursive, listener);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue;
        return fallBack(at, watchFailure(e));
      }
      // A directory on the way that appeared after the look but before the
      // watch was in place sends no event: look once more, now that it is.
      if (!exact && nearestDir(a.root.dir) !== at) {
        leave(a);
        continue;
      }
      a.at = at;
      a.exact = exact;
      return;
    }
    fallBack(a.root.dir, "its directories keep disappearing");
  };

  let endGap: (() => void) | undefined;
  let lastYield = -Infinity;
  const onAbort = () => hurry();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (const a of armed) arm(a);
    while (!signal.aborted && !failed) {
      if (!pending) await new Promise<void>((resolve) => (wake = resolve));
      const early = lastYield + MIN_GAP_MS - clock.now();
      if (early > 0 && !signal.aborted && !failed) {
        // Too soon after the last yield: wait out the gap (changes meanwhile stay pending).
        let cancelGap: (() => void) | undefined;
        await new Promise<void>((resolve) => {
          endGap = resolve;
          cancelGap = later(clock, early, resolve);
        });
        cancelGap?.();
        endGap = undefined;
      }
      if (signal.aborted || failed) break;
      pending = false;
      lastYield = clock.now();
      yield;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    cancelSettle?.();
    cancelSettle = undefined;
    failed = true; // no re-arming from events still arriving
    closeAll();
    await Promise.allSettled([...stopping]);
  }
}
