/**
 * Isolation (docs/contract.md §2, docs/reliability.md): the probes of a kind
 * that declares `isolate` run in a Web Worker of their own, one per kind per
 * run, so that a third-party protocol or parser that spins, blocks or
 * allocates without end can hold neither the deadline nor a signal. The
 * main thread keeps the clock and the signals; it sees each probe through a
 * proxy that forwards attempts, aborts, watchers and closing to the worker
 * (engine/isolate_serve.ts is the worker's side).
 *
 * - An aborted attempt ends on the main thread at once (engine/attempt.ts).
 *   The worker must answer the abort within `ABORT_ANSWER_MS`; a worker that
 *   does not is terminated, the other attempts it held end as pending with
 *   an error that says so, and the next attempt starts a fresh worker.
 * - A memory watchdog samples the process's RSS while workers run; as it
 *   nears the cap (`WAITCMD_MEMORY_CAP`, default 512 MiB; engine/memory.ts)
 *   the workers with work in flight are terminated and their attempts end as
 *   pending, naming the cap.
 * - Closing at the run's end asks each worker to close its probes and
 *   terminates it after `CLOSE_ANSWER_MS` at most.
 *
 * A limit of the runtime: Deno 2.9's `Worker.terminate()` does not stop a
 * worker caught in a synchronous loop (denoland/deno#35657, comment of
 * 2026-08-05): it keeps its thread until the process exits, which the
 * deadline and signals still decide. So that such threads do not pile up,
 * no fresh worker of a kind starts while one it terminated still runs
 * (Linux tells, through /proc; elsewhere at most `BLIND_RESTARTS` are
 * started); attempts meanwhile end as pending, saying why.
 *
 * @module
 */

import { offAbort, onAbort } from "./abort.ts";
import { Batcher, type FromWorker, type Invalid, type ToWorker } from "./isolate_messages.ts";
import type { SecretRegistry } from "./masking.ts";
import type { AttemptContext, Probe, ProbeResult, WatchContext } from "./types.ts";
import { workerUrl } from "./workers.ts";
import { after } from "./timers.ts";
import { formatCap, MEMORY_CAP_VARIABLE, MemoryWatchdog } from "./memory.ts";
import { groupAlive, killGroup, killStrayChildren } from "./process_group.ts";
import { mark } from "./trace.ts";

/** How long a worker may take to answer an aborted attempt before it is terminated. */
export const ABORT_ANSWER_MS = 500;
/** How long a worker may take to close its probes at the run's end before it is terminated. */
export const CLOSE_ANSWER_MS = 20;
/**
 * Fresh workers started, per kind, after terminating one whose thread cannot be seen
 * (outside Linux); after that, attempts end as pending.
 */
export const BLIND_RESTARTS = 2;
/** The least time between two watchers' lines saying the memory cap stopped a kind's worker. */
export const MEMORY_NOTICE_MS = 10_000;

/** Whether thread `tid` of this process still runs (Linux); undefined where it cannot be told. */
function threadAlive(tid: number | undefined): boolean | undefined {
  if (tid === undefined) return undefined;
  try {
    Deno.statSync(`/proc/self/task/${tid}`);
    return true;
  } catch {
    return false;
  }
}

/** How a kind's workers are started: the entry module (a test's own) and what they get. */
export interface IsolateOptions {
  /** The process environment, for the probes (`ProbeEnv.env`). */
  readonly env: Readonly<Record<string, string>>;
  /** The worker's entry module; default conditions/isolate_worker.ts. */
  readonly workerUrl?: URL;
}

/** An attempt in flight in a worker. */
interface Call {
  resolve(r: ProbeResult): void;
}

/**
 * A watcher's end on the main thread: where the worker's changes and notices for one probe go.
 * An object of few fields and one bound function, no closures: a manifest's every object has
 * one (docs/reliability.md, large manifests).
 */
class WatchSink {
  /** What the watcher's abort calls: it stops the watcher in the worker and ends this one. */
  readonly aborted: () => void;

  constructor(
    readonly live: Live,
    readonly id: number,
    readonly ctx: WatchContext,
    readonly onChange: () => void,
    readonly resolve: () => void,
    readonly reject: (e: Error) => void,
  ) {
    this.aborted = this.#stop.bind(this);
  }

  change(): void {
    this.onChange();
  }

  notice(message: string): void {
    this.ctx.notice(message);
  }

  /** The watcher ended: with `error` when it failed. */
  end(error?: string): void {
    offAbort(this.ctx.signal, this.aborted);
    if (error === undefined) this.resolve();
    else this.reject(new Error(error));
  }

  #stop(): void {
    const live = this.live;
    if (live.watches.get(this.id) === this) {
      live.watches.delete(this.id);
      live.post({ t: "unwatch", id: this.id });
    }
    this.end();
  }
}

/** One running worker and what it holds. */
class Live {
  readonly calls = new Map<number, Call>();
  readonly watches = new Map<number, WatchSink>();
  /** The process groups of the helpers its libraries started, ended with the worker. */
  readonly helpers = new Set<number>();
  tid: number | undefined;
  /** Called when the worker says its probes are closed. */
  closed: (() => void) | undefined;
  /** Waits for the worker's answer to a validation. */
  validated:
    | { resolve(f: readonly (Invalid | undefined)[]): void; reject(e: Error): void }
    | undefined;
  /** Resolves once the probes are made; rejects when making them failed. */
  readonly prepared: Promise<void>;
  #onPrepared!: { resolve(): void; reject(e: Error): void };

  constructor(readonly worker: Worker) {
    this.prepared = new Promise((resolve, reject) => this.#onPrepared = { resolve, reject });
    this.prepared.catch(() => {}); // also handled by every awaiter
  }

  /** Whether its probes are made (`prepared` resolved). */
  ready = false;

  settlePrepared(error?: string): void {
    this.ready ||= error === undefined;
    if (error === undefined) this.#onPrepared.resolve();
    else this.#onPrepared.reject(new Error(error));
  }

  /** The attempts of one turn go to the worker as one message. */
  readonly #out = new Batcher<ToWorker>((m) => {
    try {
      this.worker.postMessage(m);
    } catch {
      // terminated meanwhile
    }
  }, new Set(["check"]));

  post(m: ToWorker): void {
    this.#out.post(m);
  }

  /** The watchers it serves (the memory watchdog gives each room; engine/memory.ts). */
  get watchers(): number {
    return this.watches.size;
  }

  /** Whether anything waits on it: an attempt or a watcher. */
  get busy(): boolean {
    return this.calls.size > 0 || this.watches.size > 0;
  }
}

/**
 * The worker of one isolated kind in one run and the probes of its conditions, seen from
 * the main thread through proxies.
 */
export class KindIsolate {
  #live: Live | undefined;
  #options: readonly unknown[] = [];
  #secrets: SecretRegistry | undefined;
  #calls = 0;
  #closing: Promise<void> | undefined;
  /** Workers terminated (for not answering, or near the memory cap) whose threads may still run. */
  readonly #stuck: { tid: number | undefined }[] = [];
  #blindRestarts = 0;
  #started = 0;
  /** When a watcher last said that the memory cap stopped the worker (performance.now()). */
  #memoryNoticeAt: number | undefined;

  constructor(readonly kind: string, readonly opts: IsolateOptions) {}

  /** How many workers it started (the first, and fresh ones after one was stopped). */
  get started(): number {
    return this.#started;
  }

  /**
   * Runs the kind's `validate` on each options in the worker (which imports what it needs
   * there, and stays for the probes): per options, undefined or the usage error's flag and
   * text. Rejects when the kind cannot be loaded.
   */
  async validate(options: readonly unknown[]): Promise<readonly (Invalid | undefined)[]> {
    const live = this.#live ?? await this.#startInTurn();
    const answer = new Promise<readonly (Invalid | undefined)[]>((resolve, reject) => {
      live.validated = { resolve, reject };
    });
    live.post({ t: "validate", kind: this.kind, options });
    return await answer;
  }

  /**
   * Makes a probe per options (in order) in the worker, started if need be; rejects on
   * failure. `secrets` is the run's registry: the probes get what it holds, and what they
   * register reaches it.
   */
  async probes(options: readonly unknown[], secrets?: SecretRegistry): Promise<Probe[]> {
    this.#options = options;
    this.#secrets = secrets;
    const live = this.#live ?? await this.#startInTurn();
    this.#prepare(live);
    await live.prepared;
    return options.map((_, id) => new ProxyProbe(this, id));
  }

  /** Whether it was closed (a run's end): `kindIsolate` then makes another. */
  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /** Asks the worker to close its probes, and terminates it after `CLOSE_ANSWER_MS` at most. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const live = this.#live;
      if (live === undefined) return;
      await new Promise<void>((resolve) => {
        const cancel = after(CLOSE_ANSWER_MS, resolve);
        live.closed = () => {
          cancel();
          resolve();
        };
        live.post({ t: "close" });
      });
      // A helper a library started without going through `spawn` (so without a group of its
      // own) ends here too (engine/helper_procs.ts); before the worker, whose end takes its
      // direct children and leaves theirs to init, out of reach.
      killStrayChildren();
      this.#kill(live, "run ended");
    })();
    return this.#closing;
  }

  /**
   * Ends `live`: terminates it and ends what waits on it with `reason`. `watchReason`, when
   * given, is what its watchers end with instead (undefined: silently, the conditions poll).
   */
  #kill(
    live: Live,
    reason: string,
    stuck = false,
    watchReason: (first: boolean) => string | undefined = () => reason,
  ): void {
    if (this.#live === live) this.#live = undefined;
    live.worker.terminate();
    for (const pid of live.helpers) killGroup(pid, "SIGKILL");
    live.helpers.clear();
    watchdog.forget(this, live);
    live.settlePrepared(reason);
    live.validated?.reject(new Error(reason));
    for (const [call, c] of live.calls) {
      live.calls.delete(call);
      c.resolve({ status: "pending", error: reason });
    }
    let first = true;
    for (const [id, w] of live.watches) {
      live.watches.delete(id);
      w.end(watchReason(first));
      first = false;
    }
    if (stuck) this.#stuck.push({ tid: live.tid });
  }

  /**
   * Ends the worker for memory use near the cap (the watchdog's call). Its attempts end
   * pending, naming the cap; of its watchers, one says so (at most once per
   * `MEMORY_NOTICE_MS`), the others end silently: a run of ten thousand conditions gets one
   * line, not one per condition (docs/reliability.md).
   */
  killForMemory(live: Live, cap: number): void {
    const reason = `memory use reached the cap of ${formatCap(cap)} (${MEMORY_CAP_VARIABLE}): ` +
      `the ${this.kind} worker was stopped`;
    const now = performance.now();
    const say = this.#memoryNoticeAt === undefined ||
      now - this.#memoryNoticeAt >= MEMORY_NOTICE_MS;
    if (say) this.#memoryNoticeAt = now;
    this.#kill(live, reason, true, (first) => first && say ? reason : undefined);
  }

  /** A worker for the next attempt: the live one, a fresh one, or why there is none. */
  #worker(): Live | string {
    if (this.#live) return this.#live;
    if (this.#closing) return "run ended";
    const running = this.#stuck.filter((s) => threadAlive(s.tid) !== false);
    this.#stuck.splice(0, this.#stuck.length, ...running);
    if (running.some((s) => s.tid !== undefined)) {
      return `the ${this.kind} driver is still busy in a stopped worker (a worker in a ` +
        `synchronous loop cannot be ended before waitcmd exits); no attempt until it returns`;
    }
    if (running.length > 0) {
      if (this.#blindRestarts >= BLIND_RESTARTS) {
        return `the ${this.kind} worker stopped answering ${BLIND_RESTARTS + 1} times; ` +
          `no fresh one is started (a worker in a synchronous loop cannot be ended before ` +
          `waitcmd exits)`;
      }
      this.#blindRestarts++;
    }
    const live = this.#start();
    this.#prepare(live);
    return live;
  }

  /** Asks `live` to make the probes of the options given to `probes`. */
  #prepare(live: Live): void {
    live.post({
      t: "prepare",
      kind: this.kind,
      env: this.opts.env,
      secrets: this.#secrets ? [...this.#secrets.values()] : [],
      probes: this.#options.map((options, id) => ({ id, options })),
    });
  }

  /**
   * Starts the worker in its own turn of the event loop (see {@link startTurn}); the live one
   * when another call started it meanwhile.
   */
  async #startInTurn(): Promise<Live> {
    await startTurn();
    return this.#live ?? this.#start();
  }

  #start(): Live {
    mark("worker-new");
    const worker = this.opts.workerUrl
      ? new Worker(this.opts.workerUrl, { type: "module" })
      : new Worker(workerUrl("isolate"), { type: "module" });
    mark("worker-made");
    const live = new Live(worker);
    this.#live = live;
    this.#started++;
    worker.onmessage = (e: MessageEvent<FromWorker>) => this.#receive(live, e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      this.#kill(live, `the ${this.kind} worker failed: ${e.message || "unknown error"}`);
    };
    watchdog.watch(this, live);
    return live;
  }

  #receive(live: Live, m: FromWorker): void {
    switch (m.t) {
      case "ready":
        live.tid = m.tid;
        return;
      case "validated": {
        const v = live.validated;
        live.validated = undefined;
        return v?.resolve(m.failures);
      }
      case "prepared":
        mark("prepared");
        return live.settlePrepared();
      case "failed":
        return this.#kill(live, `cannot load the ${this.kind} probes: ${m.error}`);
      case "result": {
        const c = live.calls.get(m.call);
        live.calls.delete(m.call);
        return c?.resolve(m.result);
      }
      case "change":
        return live.watches.get(m.id)?.change();
      case "notice":
        return live.watches.get(m.id)?.notice(m.message);
      case "unwatched": {
        const w = live.watches.get(m.id);
        live.watches.delete(m.id);
        return w?.end(m.error);
      }
      case "closed":
        return live.closed?.();
      case "secret":
        return this.#secrets?.add(m.value);
      case "helper":
        return void live.helpers.add(m.pid);
      case "helperExited":
        // Its group ends with the worker while a child it left runs; else it is forgotten, so
        // that a group id the system gives out again is never signalled.
        if (!groupAlive(m.pid)) live.helpers.delete(m.pid);
        return;
      case "batch":
        for (const item of m.items) this.#receive(live, item);
        return;
    }
  }

  /** Attempt `n` of probe `id` in the worker (its `ProxyProbe`'s `check`). */
  async attempt(id: number, signal: AbortSignal, n: number): Promise<ProbeResult> {
    let live = this.#worker();
    // A worker just terminated needs a moment to end its thread: a short wait before saying
    // it is stuck.
    for (
      let i = 0;
      typeof live === "string" && !this.#closing && this.#stuck.length > 0 && i < 10;
      i++
    ) {
      await new Promise<void>((resolve) => after(25, resolve));
      if (signal.aborted) return { status: "pending", error: "aborted" };
      live = this.#worker();
    }
    if (typeof live === "string") return { status: "pending", error: live };
    try {
      // A fresh worker (after one was stopped) imports the kind and makes the probes again.
      await live.prepared;
    } catch (e) {
      return { status: "pending", error: (e as Error).message };
    }
    if (signal.aborted) return { status: "pending", error: "aborted" };
    const call = ++this.#calls;
    return await new Promise<ProbeResult>((resolve) => {
      let cancel: (() => void) | undefined;
      const off = onAbort(signal, () => {
        live.post({
          t: "abort",
          call,
          reason: signal.reason instanceof Error ? signal.reason.message : "aborted",
        });
        // A worker that cannot answer is caught in a loop: only terminating it frees the
        // attempts it holds (docs/reliability.md).
        cancel = after(ABORT_ANSWER_MS, () => {
          if (!live.calls.has(call)) return;
          this.#kill(
            live,
            `the ${this.kind} driver did not answer within ${ABORT_ANSWER_MS} ms of an ` +
              `aborted attempt: its worker was stopped`,
            true,
          );
        });
      });
      live.calls.set(call, {
        resolve: (r) => {
          off();
          cancel?.();
          resolve(r);
        },
      });
      live.post({ t: "check", call, id, attempt: n });
    });
  }

  /**
   * Passes the changes of probe `id`'s watcher in the worker to `onChange` (its `ProxyProbe`'s
   * `listen`). Not an async function: a frame suspended per condition costs more than its sink
   * (docs/reliability.md, large manifests).
   */
  listen(id: number, ctx: WatchContext, onChange: () => void): Promise<void> {
    const live = this.#worker();
    if (typeof live === "string") return Promise.reject(new Error(live));
    // Its probes are made before the run starts: no promise waits on another then.
    if (!live.ready) return live.prepared.then(() => this.listen(id, ctx, onChange));
    if (ctx.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const sink = new WatchSink(live, id, ctx, onChange, resolve, reject);
      live.watches.set(id, sink);
      live.post({ t: "watch", id });
      onAbort(ctx.signal, sink.aborted);
    });
  }
}

/**
 * The main thread's stand-in for probe `id` in the worker: two fields, its methods on its
 * prototype, no closures (a manifest's every object has one; docs/reliability.md, large
 * manifests).
 */
class ProxyProbe implements Probe {
  constructor(readonly isolate: KindIsolate, readonly id: number) {}

  check(ctx: AttemptContext): Promise<ProbeResult> {
    return this.isolate.attempt(this.id, ctx.signal, ctx.attempt);
  }

  listen(ctx: WatchContext, onChange: () => void): Promise<void> {
    return this.isolate.listen(this.id, ctx, onChange);
  }

  close(): Promise<void> {
    return this.isolate.close();
  }
}

/** The end of the last turn {@link startTurn} handed out. */
let lastStartTurn: Promise<void> = Promise.resolve();

/**
 * A turn of the event loop of its own for one worker's start. `new Worker` holds the calling
 * thread until the worker's runtime is made (tens of ms on a quiet machine, 300-600 ms measured on
 * one at a load of 20 on 2 cores): fifteen kinds started in one turn held a signal for all
 * of them. One per turn, a signal waits for one start at most (docs/contract.md §3,
 * docs/reliability.md).
 */
function startTurn(): Promise<void> {
  // A timer of 1 ms, not 0: one due at once fires before the event loop looks at what came
  // meanwhile (a signal during the last start), and would start one more worker first.
  const mine = lastStartTurn.then(() => new Promise<void>((resolve) => after(1, resolve)));
  lastStartTurn = mine;
  return mine;
}

/** The isolates of the run, by kind (and worker entry): one worker per kind per run. */
const isolates = new Map<string, KindIsolate>();

/**
 * The run's isolate of `kind`: the one its validation started, or a new one (once the run's
 * end closed the last). One worker per kind serves both the validation and the probes.
 */
export function kindIsolate(kind: string, opts: IsolateOptions): KindIsolate {
  const key = `${kind}\0${opts.workerUrl?.href ?? ""}`;
  let isolate = isolates.get(key);
  if (isolate === undefined || isolate.closed) {
    isolate = new KindIsolate(kind, opts);
    isolates.set(key, isolate);
  }
  return isolate;
}

const watchdog = new MemoryWatchdog<Live, KindIsolate>();

/** Sets the memory cap of every isolated kind's workers (from `memoryCap`). */
export function setMemoryCap(bytes: number): void {
  watchdog.setCap(bytes);
}

/**
 * Notes what the process holds once the run's probes are made (every kind's libraries
 * loaded, a worker each): a run of many isolated kinds may start near the cap, and then
 * keeps `MEMORY_ROOM` above that.
 */
export function noteMemoryFloor(): void {
  watchdog.noteFloor();
}
