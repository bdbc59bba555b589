/**
 * The worker's side of an isolated kind (docs/contract.md §2, isolation;
 * docs/reliability.md): the probes of one kind live in a Web Worker, which
 * imports the kind's probe module and its libraries, makes the probes, runs
 * their checks and watchers, and closes them, while the main thread keeps the
 * clock and the signals (engine/isolate.ts). This module is the worker's
 * runtime; the entry module (conditions/isolate_worker.ts) only says how a kind
 * is found. The messages of both sides are declared in engine/isolate_messages.ts.
 *
 * Inside the worker nothing a library prints reaches waitcmd's streams (the
 * console is silenced), and an error that escapes every await is the
 * worker's: it ends the attempts in flight as pending with its text (a
 * server's bytes are never fatal, docs/contract.md §8).
 *
 * @module
 */

import { Aborter } from "./abort.ts";
import { attempt } from "./attempt.ts";
import { cliClock } from "./clock.ts";
import { describeError } from "./errors.ts";
import { follow } from "./follow.ts";
import { Interner } from "./intern.ts";
import { detachHelpers } from "./helper_procs.ts";
import { SecretRegistry } from "./masking.ts";
import { capSocketReads } from "./socket_cap.ts";
import { isHarmlessStray } from "./strays.ts";
import type { ConditionKind, Probe, ProbeFactory, ProbeResult, WatchContext } from "./types.ts";
import { Batcher, type FromWorker, type Invalid, type ToWorker } from "./isolate_messages.ts";

/** What a worker's global scope offers the runtime. */
export interface WorkerScope {
  postMessage(message: FromWorker): void;
  onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
  addEventListener(type: "error" | "unhandledrejection", listener: (e: Event) => void): void;
}

/** Finds a kind by its name (the entry module's job: the registry, or a test's kinds). */
export type FindKind = (name: string) => Promise<ConditionKind>;

/** The console's printing methods, all silenced in a worker. */
const PRINTING = [
  "log",
  "info",
  "warn",
  "error",
  "debug",
  "trace",
  "dir",
  "dirxml",
  "table",
  "group",
  "groupCollapsed",
  "assert",
  "count",
  "time",
  "timeLog",
  "timeEnd",
] as const;

/**
 * Serves the probes of one kind in this worker: answers the main thread's messages
 * (`ToWorker`) until the worker is terminated.
 */
export function serveProbes(scope: WorkerScope, findKind: FindKind): void {
  silenceWorker();
  const batcher = new Batcher<FromWorker>(
    (m) => scope.postMessage(m),
    new Set(["result", "change"]),
  );
  const post = (m: FromWorker) => batcher.post(m);
  // Before any kind's library loads and captures `child_process`'s functions.
  detachHelpers({
    started: (pid) => post({ t: "helper", pid }),
    exited: (pid) => post({ t: "helperExited", pid }),
  });
  const server = new ProbeServer(post, findKind);
  scope.addEventListener("error", (e) => server.stray(e, (e as ErrorEvent).error));
  scope.addEventListener(
    "unhandledrejection",
    (e) => server.stray(e, (e as PromiseRejectionEvent).reason),
  );
  scope.onmessage = (e) => server.receive(e.data);
  post({ t: "ready", tid: threadId() });
}

/** Silences the console and stops capturing stacks, for the whole worker. */
function silenceWorker(): void {
  // A library's console output never reaches waitcmd's streams (mysql2 prints "Warning:
  // got packets out of order" on stderr; docs/reliability.md).
  const quiet = console as unknown as Record<string, unknown>;
  for (const name of PRINTING) quiet[name] = () => {};
  // No stack trace is ever shown (docs/contract.md §8), so none is captured: a driver that
  // makes an Error per packet of a hostile stream (mysql2's "packets out of order") would
  // otherwise spend its thread on them, about 60 µs each, and never catch up.
  Error.stackTraceLimit = 0;
}

/**
 * The probes of one kind in a worker: the kind (imported once), the probes made, the attempts
 * in flight (by call) and the watchers running (by probe).
 */
class ProbeServer {
  readonly #post: (m: FromWorker) => void;
  readonly #findKind: FindKind;
  readonly #probes = new Map<number, Probe>();
  readonly #inFlight = new Map<number, Aborter>();
  readonly #watchers = new Map<number, Aborter>();
  #kind: Promise<ConditionKind> | undefined;
  #factory: Promise<ProbeFactory<unknown>> | undefined;

  constructor(post: (m: FromWorker) => void, findKind: FindKind) {
    this.#post = post;
    this.#findKind = findKind;
  }

  /** Answers one message of the main thread. */
  receive(m: ToWorker): void {
    switch (m.t) {
      case "validate":
        return void this.#validate(m);
      case "prepare":
        return void this.#prepare(m);
      case "check":
        return this.#check(m);
      case "abort":
        return this.#inFlight.get(m.call)?.abort(new Error(m.reason));
      case "watch":
        return void this.#watch(m.id);
      case "unwatch":
        return this.#watchers.get(m.id)?.abort();
      case "close":
        return void this.#close();
      case "batch":
        for (const item of m.items) this.receive(item);
        return;
    }
  }

  /** An error that escaped every await ends the attempts in flight as pending with its text. */
  stray(e: Event, reason: unknown): void {
    e.preventDefault();
    if (isHarmlessStray(reason)) return;
    const error = `the driver failed: ${describeError(reason)}`;
    for (const [call, ctl] of this.#inFlight) {
      this.#inFlight.delete(call);
      ctl.whenAborted = undefined;
      this.#post({ t: "result", call, result: { status: "pending", error } });
    }
  }

  /** Runs the kind's `validate` on each options; a failure is a usage error's flag and text. */
  async #validate(m: ToWorker & { t: "validate" }): Promise<void> {
    try {
      this.#kind ??= this.#findKind(m.kind);
      const k = await this.#kind;
      const failures: (Invalid | undefined)[] = [];
      for (const options of m.options) failures.push(await invalidOf(k, options));
      this.#post({ t: "validated", failures });
    } catch (e) {
      this.#post({ t: "failed", error: describeError(e) });
    }
  }

  /** Imports the kind's probe module (once) and makes the probes. */
  async #prepare(m: ToWorker & { t: "prepare" }): Promise<void> {
    try {
      const kind = this.#kind ??= this.#findKind(m.kind);
      this.#factory ??= kind.then((k) => {
        if (k.socketReadMax !== undefined) capSocketReads(k.socketReadMax);
        return k.load();
      });
      const make = await this.#factory;
      const secrets = new ForwardedSecrets(m.secrets, this.#post);
      const env = { clock: cliClock, env: m.env, secrets };
      // One copy of each string of the options, not one per condition (engine/intern.ts).
      const interner = new Interner();
      const made = await Promise.all(
        m.probes.map(async (p) => [p.id, await make(interner.value(p.options), env)]),
      );
      for (const [id, probe] of made as [number, Probe][]) this.#probes.set(id, probe);
      this.#post({ t: "prepared" });
    } catch (e) {
      this.#post({ t: "failed", error: describeError(e) });
    }
  }

  /** Runs one attempt of a probe and answers with its result, unless already answered. */
  #check(m: ToWorker & { t: "check" }): void {
    const probe = this.#probes.get(m.id);
    if (probe === undefined) {
      const result: ProbeResult = { status: "pending", error: "no such probe" };
      this.#post({ t: "result", call: m.call, result });
      return;
    }
    const ctl = new Aborter();
    this.#inFlight.set(m.call, ctl);
    // The error rule applies here as in the runner: a thrown FatalError is fatal, any other
    // throw pending; an abort ends the attempt at once, the probe finishing in the background.
    attempt(probe, ctl, m.attempt, (): ProbeResult => ({
      status: "pending",
      error: ctl.signal.reason instanceof Error ? ctl.signal.reason.message : "aborted",
    })).then((result) => {
      if (!this.#inFlight.delete(m.call)) return; // already answered (a stray error)
      this.#post({ t: "result", call: m.call, result });
    });
  }

  /**
   * Runs probe `id`'s watcher until it ends or is stopped, passing on its changes. Not an async
   * function, and the probe's `listen` when it has one: nothing suspended per condition while
   * no change comes (docs/reliability.md, large manifests).
   */
  #watch(id: number): void {
    const probe = this.#probes.get(id);
    if (probe === undefined || this.#watchers.has(id)) return;
    const served = new ServedWatch(id, this.#post);
    const following = follow(probe, served, served.change);
    if (following === undefined) return;
    this.#watchers.set(id, served.ctl);
    following.then(() => this.#unwatched(served), (e) => this.#unwatched(served, e));
  }

  /** Probe `id`'s watcher ended: when it failed on its own, with `error`. */
  #unwatched(served: ServedWatch, error?: unknown): void {
    const id = served.id;
    if (this.#watchers.get(id) === served.ctl) this.#watchers.delete(id);
    this.#post(
      error === undefined || served.signal.aborted
        ? { t: "unwatched", id }
        : { t: "unwatched", id, error: describeError(error) },
    );
  }

  /** Stops every watcher and attempt, closes every probe, and says so. */
  async #close(): Promise<void> {
    for (const ctl of this.#watchers.values()) ctl.abort();
    for (const ctl of this.#inFlight.values()) ctl.abort(new Error("run ended"));
    await Promise.allSettled([...this.#probes.values()].map(async (p) => await p.close?.()));
    this.#post({ t: "closed" });
  }
}

/** What the kind's `validate` finds wrong with `options`, or undefined when they are valid. */
async function invalidOf(kind: ConditionKind, options: unknown): Promise<Invalid | undefined> {
  try {
    await kind.validate?.(options, (flag, message) => {
      throw new InvalidOptions({ flag, message });
    });
    return undefined;
  } catch (e) {
    if (!(e instanceof InvalidOptions)) throw e;
    return e.invalid;
  }
}

/**
 * One watcher the worker runs for the main thread: its context (signal and notices) and where
 * its changes go. An object with its methods on its prototype, not closures: a manifest's every
 * object has one (docs/reliability.md, large manifests).
 */
class ServedWatch implements WatchContext {
  /**
   * Its stop. An Aborter: a watcher's signal that `onAbort` listens to holds no event listener
   * (engine/abort.ts).
   */
  readonly ctl = new Aborter();
  /** Its stop's signal: an own field, as a context a kind copies keeps it. */
  readonly signal = this.ctl.signal;
  /** Passed on as `onChange`. */
  readonly change: () => void;
  /** Bound, as `change`: a kind's watcher may take it out of its context. */
  readonly notice: (message: string) => void;

  constructor(readonly id: number, readonly post: (m: FromWorker) => void) {
    this.change = this.#changed.bind(this);
    this.notice = this.#noticed.bind(this);
  }

  #noticed(message: string): void {
    this.post({ t: "notice", id: this.id, message });
  }

  #changed(): void {
    this.post({ t: "change", id: this.id });
  }
}

/**
 * The run's secrets as a worker's probes see them: those known when the probes were made, and
 * each one a probe registers, which is also sent to the main thread's registry (the output's).
 */
class ForwardedSecrets extends SecretRegistry {
  /** Set once constructed: the values given to the constructor are the main thread's already. */
  forward: ((m: FromWorker) => void) | undefined;

  constructor(values: readonly string[], post: (m: FromWorker) => void) {
    super(values);
    this.forward = post;
  }

  override add(value: string | undefined): void {
    super.add(value);
    if (value !== undefined) this.forward?.({ t: "secret", value });
  }
}

/** Thrown by the `fail` a kind's `validate` gets in a worker. */
class InvalidOptions extends Error {
  constructor(readonly invalid: Invalid) {
    super(invalid.message);
  }
}

/**
 * This thread's id (Linux: `/proc/thread-self` names it), so that the main thread can tell
 * whether a worker it terminated has really stopped (engine/isolate.ts).
 */
function threadId(): number | undefined {
  try {
    const m = /\/task\/(\d+)$/.exec(Deno.readLinkSync("/proc/thread-self"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
