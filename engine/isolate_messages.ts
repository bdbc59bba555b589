/**
 * The messages between the main thread and an isolated kind's worker
 * (engine/isolate.ts, engine/isolate_serve.ts), and how a turn's messages
 * travel as one. Apart from the worker's runtime, which imports `node:`
 * modules: the main thread imports this module, and loading any `node:`
 * module there starts Deno's Node compatibility layer, tens of ms before an
 * isolated kind's first attempt that the main thread never needs
 * (docs/performance.md, "Where the time to a verdict goes").
 *
 * @module
 */

import type { ProbeResult } from "./types.ts";

/** A message from the main thread to a kind's worker. */
export type ToWorker =
  /** Run the kind's `validate` on each options (a library's checks, before the run). */
  | {
    readonly t: "validate";
    readonly kind: string;
    readonly options: readonly unknown[];
  }
  /** Import the kind's probe module and make these probes (again, in a fresh worker). */
  | {
    readonly t: "prepare";
    readonly kind: string;
    readonly env: Readonly<Record<string, string>>;
    /** The run's secrets known so far: the probes mask them before they cut a text. */
    readonly secrets: readonly string[];
    readonly probes: readonly { readonly id: number; readonly options: unknown }[];
  }
  /** Run one attempt of probe `id`; `call` names it in the answer. */
  | { readonly t: "check"; readonly call: number; readonly id: number; readonly attempt: number }
  /** The attempt `call` was aborted: end it at once and say so. */
  | { readonly t: "abort"; readonly call: number; readonly reason: string }
  /** Start probe `id`'s watcher. */
  | { readonly t: "watch"; readonly id: number }
  /** Stop probe `id`'s watcher. */
  | { readonly t: "unwatch"; readonly id: number }
  /** Close every probe (the run ended). */
  | { readonly t: "close" }
  /** Several of the above, in order ({@link Batcher}). */
  | { readonly t: "batch"; readonly items: readonly ToWorker[] };

/** A message from a kind's worker to the main thread. */
export type FromWorker =
  /** The worker runs; `tid` is its thread's id where the system tells (Linux). */
  | { readonly t: "ready"; readonly tid: number | undefined }
  /** What `validate` found, per options: undefined when they are valid. */
  | { readonly t: "validated"; readonly failures: readonly (Invalid | undefined)[] }
  /** The probes are made. */
  | { readonly t: "prepared" }
  /** Making them failed (a bug of ours, or a module that cannot load). */
  | { readonly t: "failed"; readonly error: string }
  /** What attempt `call` found (also the answer to its abort). */
  | { readonly t: "result"; readonly call: number; readonly result: ProbeResult }
  /** Probe `id`'s watcher saw a change. */
  | { readonly t: "change"; readonly id: number }
  /** Probe `id`'s watcher tells the user something. */
  | { readonly t: "notice"; readonly id: number; readonly message: string }
  /** Probe `id`'s watcher ended; with `error` when it failed. */
  | { readonly t: "unwatched"; readonly id: number; readonly error?: string }
  /** Every probe is closed. */
  | { readonly t: "closed" }
  /** A probe registered a secret (a kubeconfig's token): the run's output must mask it too. */
  | { readonly t: "secret"; readonly value: string }
  /** A library started a helper process, leading group `pid` (engine/helper_procs.ts). */
  | { readonly t: "helper"; readonly pid: number }
  /** The helper leading group `pid` exited. */
  | { readonly t: "helperExited"; readonly pid: number }
  /** Several of the above, in order ({@link Batcher}). */
  | { readonly t: "batch"; readonly items: readonly FromWorker[] };

/**
 * The messages of one turn between the main thread and a worker, sent as one: a message costs
 * each side an event, a promise and a buffer, which a run of 10,000 conditions paid twice per
 * attempt and once per condition after each list of a shared watch, faster than the runtime
 * collected them (docs/reliability.md, large manifests). The frequent messages (`batched`)
 * wait for the end of the current turn's microtasks; any other first sends those queued, so
 * that the order is kept.
 */
export class Batcher<M extends { readonly t: string }> {
  #queued: M[] | undefined;

  constructor(
    readonly send: (m: M | { readonly t: "batch"; readonly items: readonly M[] }) => void,
    readonly batched: ReadonlySet<string>,
  ) {}

  post(m: M): void {
    if (!this.batched.has(m.t)) {
      this.flush();
      return this.send(m);
    }
    if (this.#queued === undefined) {
      this.#queued = [];
      queueMicrotask(() => this.flush());
    }
    this.#queued.push(m);
  }

  /** Sends what is queued: alone when it is one message. */
  flush(): void {
    const items = this.#queued;
    this.#queued = undefined;
    if (items === undefined) return;
    this.send(items.length === 1 ? items[0]! : { t: "batch", items });
  }
}

/** A usage error that `validate` raised: the flag (or the target) and what is wrong. */
export interface Invalid {
  readonly flag: string | undefined;
  readonly message: string;
}
