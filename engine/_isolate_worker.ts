/**
 * The worker entry of engine/isolate_test.ts: the runtime of isolated kinds
 * (engine/isolate_serve.ts) serving kinds that misbehave on purpose, the way
 * drivers do under a hostile server. The options of each kind are plain data.
 *
 * @module
 */

import { FatalError } from "./errors.ts";
import { serveProbes, type WorkerScope } from "./isolate_serve.ts";
import type { Probe, ProbeFactory } from "./types.ts";
import { fakeKind } from "./_fake_kind.ts";

/** Blocks this thread for `ms` (a driver caught in a synchronous loop that ends). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spinning
  }
}

const factories: Record<string, ProbeFactory<unknown>> = {
  /** Satisfied with its options as the detail; its env's variable WHO in the detail too. */
  echo: (options, env): Probe => ({
    check: () =>
      Promise.resolve({
        status: "satisfied",
        detail: `${JSON.stringify(options)} ${env.env.WHO ?? ""}`.trim(),
      }),
  }),
  /** An attempt that waits for its abort and then ends (a well-behaved driver). */
  hang: (): Probe => ({
    check: ({ signal }) =>
      new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
  }),
  /** An attempt that blocks the worker's thread for `options.ms` once aborted... or at once. */
  stall: (options): Probe => ({
    check: async () => {
      await new Promise((r) => setTimeout(r, 20));
      busy((options as { ms: number }).ms);
      return { status: "satisfied", detail: "stalled" };
    },
  }),
  /** Registers a secret it found, and masks the run's secrets it was given. */
  secretive: (_options, env): Probe => ({
    check: () => {
      env.secrets?.add("Zq9FoundAtRunTime");
      return Promise.resolve({
        status: "pending",
        error: `given ${env.secrets?.mask("Zq9KnownBefore") ?? "nothing"}`,
      });
    },
  }),
  /** A FatalError as a helper throws it (a client that cannot be set up), through check: fatal. */
  fatal: (): Probe => ({
    check: () => Promise.reject(new FatalError("no retry can fix this")),
  }),
  /** An error that escapes every await while the attempt waits (a driver's socket handler). */
  stray: (): Probe => ({
    check: () =>
      new Promise(() => {
        setTimeout(() => {
          throw new RangeError("Out of bounds");
        }, 10);
      }),
  }),
  /** Prints on every stream it can, then holds. */
  noisy: (): Probe => ({
    check: () => {
      console.log("noise on stdout");
      console.error("Warning: got packets out of order");
      return Promise.resolve({ status: "satisfied", detail: "quiet" });
    },
  }),
  /** Allocates on every turn of its event loop, without end (a read that stacks). */
  grow: (): Probe => ({
    check: () =>
      new Promise(() => {
        const kept: number[][] = [];
        const more = () => {
          for (let i = 0; i < 10; i++) kept.push(new Array(100_000).fill(i));
          setTimeout(more, 0);
        };
        more();
      }),
  }),
  /** A watcher that waits for its end, and an attempt that allocates without end (as `grow`). */
  growwatch: (): Probe => ({
    check: () =>
      new Promise(() => {
        const kept: number[][] = [];
        const more = () => {
          for (let i = 0; i < 10; i++) kept.push(new Array(100_000).fill(i));
          setTimeout(more, 0);
        };
        more();
      }),
    // deno-lint-ignore require-yield
    async *watch({ signal }) {
      await new Promise((r) => signal.addEventListener("abort", r));
    },
  }),
  /** A watcher that yields a change every 20 ms and tells one notice. */
  watcher: (): Probe => ({
    check: () => Promise.resolve({ status: "pending", error: "not yet" }),
    async *watch({ signal, notice }) {
      notice("watching by polling");
      while (!signal.aborted) {
        await new Promise((r) => setTimeout(r, 20));
        yield;
      }
    },
  }),
  /** A watcher that fails. */
  badwatch: (): Probe => ({
    check: () => Promise.resolve({ status: "pending", error: "not yet" }),
    // deno-lint-ignore require-yield
    async *watch() {
      await new Promise((r) => setTimeout(r, 10));
      throw new Error("the stream broke");
    },
  }),
};

serveProbes(self as unknown as WorkerScope, (name) => {
  const factory = factories[name];
  if (factory === undefined) return Promise.reject(new Error(`no test kind ${name}`));
  const kind = fakeKind(name, factory);
  // Every kind here validates: options with `bad` are refused at that flag.
  return Promise.resolve({
    ...kind,
    validate(options: unknown, fail: (flag: string | undefined, message: string) => never) {
      const bad = (options as { bad?: string }).bad;
      if (bad !== undefined) fail(bad, `refused in the worker: ${bad}`);
      return Promise.resolve();
    },
  });
});
