/**
 * The entry module of an isolated kind's worker (engine/isolate.ts starts it
 * with `new Worker(workerUrl("isolate"))`, engine/workers.ts): it serves one
 * kind's probes (engine/isolate_serve.ts), finding the kind in the registry.
 * It sits in conditions/, beside the registry, so that the engine imports no
 * layer above it: the engine's serving loop receives the kind's loader from
 * here. The registry is imported by its literal path, so that bundlers see
 * it; the registry then imports the kind's declaration and the declaration
 * its probe module (literal `import()`s).
 *
 * @module
 */

// First: its evaluation is the worker's first line of our code (the start-up trace).
import { mark } from "../engine/trace.ts";
import { serveProbes, type WorkerScope } from "../engine/isolate_serve.ts";

// The worker's static graph is evaluated: the runtime's `node:` modules (child_process, net)
// started Deno's Node compatibility layer, which every isolated kind's library needs anyway.
mark("serving");
serveProbes(self as unknown as WorkerScope, async (name) => {
  const { KINDS } = await import("./mod.ts");
  const entry = KINDS.find((k) => k.name === name);
  if (entry === undefined) throw new Error(`no kind named ${JSON.stringify(name)}`);
  const kind = await entry.load();
  mark("kind-loaded");
  // The probe module starts loading as soon as the kind is known (its first message, the
  // validation), so that its chunk and its libraries' own set-up overlap the main thread's
  // work up to the probes (docs/performance.md, "Where the time to a verdict goes").
  const probe = kind.load().then((make) => (mark("probe-imported"), make));
  probe.catch(() => {}); // a failure is the prepare's to report, never a stray rejection
  return { ...kind, load: () => probe };
});
