/**
 * The Web Worker entry modules of waitcmd, and where to start each from.
 *
 * `new Worker(url)` loads a module that no `import` names, so neither the
 * bundler nor `deno compile` finds it by itself. This list is the one place
 * that names them: the release build (scripts/bundle.ts) makes each an entry
 * point of the bundle, and `deno compile` embeds each (scripts/compile.ts).
 * Code starts a worker with `new Worker(workerUrl("name"), { type: "module" })`,
 * which resolves from the sources and from the bundle alike
 * (docs/development.md, "Workers").
 *
 * @module
 */

/** Worker entry modules by name, as paths from the repository root. */
export const WORKERS = {
  /** Runs one user regular expression on a large text (conditions/_common/regex.ts). */
  regex: "conditions/_common/regex_worker.ts",
  /** Parses a large document and evaluates XPath expressions on it (conditions/_common/xpath.ts). */
  xpath: "conditions/_common/xpath_worker.ts",
  /** Runs an isolated kind's probes off the main thread (engine/isolate.ts). */
  isolate: "conditions/isolate_worker.ts",
  /** Reads a long YAML text (a recipe, a manifest) off the main thread (engine/yaml.ts). */
  yaml: "engine/yaml_worker.ts",
  /** Hears the cancelling signals of a run of many conditions (cli/off_thread_signals.ts). */
  signals: "cli/signal_worker.ts",
} as const;

/** The name of a worker entry in {@link WORKERS}. */
export type WorkerName = keyof typeof WORKERS;

/**
 * The path from this module to the bundle's root once bundled. The bundler
 * inlines this module into some output file; scripts/bundle_fixups.ts then replaces
 * this marker in that file with the file's own way back to the root (`./`,
 * `../../`), and refuses a bundle where it is left.
 */
const BUNDLE_ROOT = "<waitcmd:bundle-root>";

/**
 * The URL of worker `name`'s entry module: from the sources, the `.ts` file
 * under the repository root; from the bundle, the `.js` file that
 * scripts/bundle.ts made of it under the bundle's root (`dist/bundle/`, or
 * the same files embedded in a compiled binary).
 */
export function workerUrl(name: WorkerName): URL {
  const path = WORKERS[name];
  if (import.meta.url.endsWith("/engine/workers.ts")) {
    return new URL(`../${path}`, import.meta.url);
  }
  return new URL(BUNDLE_ROOT + path.replace(/\.ts$/, ".js"), import.meta.url);
}

/**
 * Runs one job in a fresh worker `name`: posts `job` and resolves with the
 * worker's first message, then ends the worker. An abort of `signal` ends it
 * at once and rejects with `stopped(reason)` (the reason itself by default);
 * a worker that fails rejects with an error naming `what`. Long work that a
 * signal or the deadline must be able to cut runs this way (a user's regular
 * expression, XPath, a long YAML text; docs/development.md, "Workers").
 */
export function runOnce<Reply>(
  name: WorkerName,
  job: unknown,
  what: string,
  signal: AbortSignal | undefined,
  stopped: (reason: unknown) => unknown = (reason) => reason,
): Promise<Reply> {
  if (signal?.aborted) return Promise.reject(stopped(signal.reason));
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl(name), { type: "module" });
    const end = () => {
      signal?.removeEventListener("abort", onAbort);
      worker.terminate();
    };
    const onAbort = () => {
      end();
      reject(stopped(signal!.reason));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    worker.onmessage = (e: MessageEvent<Reply>) => {
      end();
      resolve(e.data);
    };
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      end();
      reject(new Error(`${what} worker failed: ${e.message}`));
    };
    worker.postMessage(job);
  });
}
