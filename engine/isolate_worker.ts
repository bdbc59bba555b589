/**
 * The entry module of an isolated kind's worker (engine/isolate.ts starts it
 * with `new Worker(workerUrl("isolate"))`, engine/workers.ts): it
 * serves one kind's probes (engine/isolate_serve.ts), finding the kind in
 * the registry. Like main.ts, an entry point sits above the rest: it is the
 * one engine module that imports the registry, dynamically, by its literal
 * path, so that bundlers see it; the registry then imports the kind's
 * declaration and the declaration its probe module (literal `import()`s).
 *
 * @module
 */

import { serveProbes, type WorkerScope } from "./isolate_serve.ts";

serveProbes(self as unknown as WorkerScope, async (name) => {
  const { KINDS } = await import("../conditions/mod.ts");
  const entry = KINDS.find((k) => k.name === name);
  if (entry === undefined) throw new Error(`no kind named ${JSON.stringify(name)}`);
  return await entry.load();
});
