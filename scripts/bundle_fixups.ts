/**
 * The bundler's output put right where `deno bundle` cannot (scripts/bundle.ts
 * runs it, then {@link fixUp}), failing the build when what it looks for has
 * changed shape:
 *
 * - **`require` of Node built-ins.** Deno's bundler gives CommonJS code a
 *   `require` made by `createRequire` from `node:module`, imported by the
 *   chunk of shared helpers that main.js itself imports. Loading any `node:`
 *   module starts Deno's Node compatibility layer, about 15 ms and 9 MB at
 *   every start, which a `tcp` or `file` wait never needs. It is replaced by
 *   a `require` that fetches `createRequire` at its first call.
 * - **`__filename` and `__dirname`**, which CommonJS code expects, are given
 *   to each chunk that uses them.
 * - **Files that a package reads beside its module** (`new URL("x.wasm",
 *   import.meta.url)`) are copied into the bundle and the URLs rewritten
 *   ({@link ASSETS}); any other such URL that points nowhere fails the build.
 * - **The libraries' module wrappers** (the arrow function that runs a
 *   CommonJS module at its first `require`) are put in parentheses, so that
 *   V8 compiles them with their chunk and its code cache holds them
 *   (scripts/eager_wrappers.ts); every module the entry or a worker reaches
 *   must then still parse ({@link checkParses}), or the build fails.
 * - **Workers**: each entry of engine/workers.ts becomes
 *   `dist/bundle/<path>.js`, and `workerUrl()` learns its way to the bundle's
 *   root.
 * - **Left out and external modules** ({@link LEFT_OUT}, {@link EXTERNAL}):
 *   what the bundle does not hold, each failing clearly if ever used.
 *
 * @module
 */

import { WORKERS } from "../engine/workers.ts";
import { listFiles } from "./bundle_manifest.ts";
import { eagerWrappers } from "./eager_wrappers.ts";
import { repoRoot, runDeno, tail } from "./targets.ts";

/**
 * Modules the bundle leaves to `require` at run time, each failing there as
 * it does from the sources:
 * - `x11`: dbus-next loads this optional package only to find a session bus
 *   from an X display; it is not installed (svcmgr reports the bus error);
 * - `*.node`: native add-ons that ssh2 (sshcrypto, cpu-features) tries in
 *   `try` and falls back from to JavaScript; Deno never builds them (it runs
 *   no install scripts), and no other platform's build is shipped.
 */
export const EXTERNAL: readonly string[] = ["x11", "*.node"];

/** A module that a bundled library imports for code that waitcmd never calls. */
export interface LeftOut {
  /** The module, as imported. */
  readonly module: string;
  /** Which library imports it, and what for. */
  readonly why: string;
}

/**
 * Modules left out of the bundle, each replaced by one whose exports throw
 * when called, so that a use nobody foresaw fails with a clear error:
 * - `undici` (0.73 MB of the bundle): @kubernetes/client-node imports it for
 *   its own HTTP client (`createAgent`, `applyToFetchOptions`, watch, log,
 *   metrics). The orch kind calls only `KubeConfig`'s loading and
 *   credentials and sends its requests itself (conditions/orch/k8s_lib.ts).
 * - `avsc` (0.10 MB): @platformatic/kafka's Confluent schema registry
 *   imports it (a default import) to decode Avro records; the kafka kind
 *   asks the cluster's metadata and reads no record. A default import gets
 *   a stand-in that throws on any use.
 */
export const LEFT_OUT: readonly LeftOut[] = [{
  module: "undici",
  why: "@kubernetes/client-node imports it for its HTTP client, which the orch kind does not use",
}, {
  module: "avsc",
  why:
    "@platformatic/kafka's schema registry decodes Avro records with it; the kafka kind reads none",
}];

/** Where the stand-in of a left-out module is written, inside the bundle. */
export function leftOutPath(module: string): string {
  return `left-out/${module.replaceAll("/", "+")}.js`;
}

/** A file that a bundled package reads beside its own module. */
export interface Asset {
  /** The npm package that holds it. */
  readonly pkg: string;
  /** Its path inside the package. */
  readonly file: string;
  /** The URL the package's module builds from `import.meta.url`, as written there. */
  readonly reference: string;
  /** Its name inside the bundle. */
  readonly name: string;
}

/** Every file that a bundled package reads beside its module (kafka's CRC-32C and compression). */
export const ASSETS: readonly Asset[] = [{
  pkg: "@platformatic/wasm-utils",
  file: "dist/native.wasm",
  reference: "../dist/native.wasm",
  name: "assets/platformatic-wasm-utils.wasm",
}];

/** The marker engine/workers.ts leaves for the way back to the bundle's root. */
export const ROOT_MARKER = "<waitcmd:bundle-root>";

/** `./` for a file at the bundle's root, `../../` for one two folders down. */
function rootPrefix(path: string): string {
  const depth = path.split("/").length - 1;
  return depth === 0 ? "./" : "../".repeat(depth);
}

/**
 * Deno's `require` for bundled CommonJS: the minified and the readable forms
 * of its bundler (`import{createRequire as __deno_internal_createRequire}from
 * "node:module";var m=__deno_internal_createRequire(import.meta.url);`).
 */
const DENO_REQUIRE =
  /import\s*\{\s*createRequire as __deno_internal_createRequire\s*\}\s*from\s*"node:module";?\s*var (\w+)\s*=\s*__deno_internal_createRequire\(import\.meta\.url\);/g;

/**
 * The same `require`, made at its first call: `process.getBuiltinModule` is
 * synchronous, as `require` must be, and loads `node:module` only then.
 */
function lazyRequire(name: string): string {
  const make =
    `(__waitcmd_require??=process.getBuiltinModule("node:module").createRequire(import.meta.url))`;
  return `var __waitcmd_require,${name}=new Proxy(function(id){return ${make}(id)},` +
    `{get(_,key){return ${make}[key]}});`;
}

/** `__filename` or `__dirname` as a free name: CommonJS code that the bundler left as it was. */
const FREE_CJS_PATH = /(?<![\w$.])__(?:filename|dirname)(?![\w$])/;

/**
 * What Node's CommonJS wrapper gives a module, and Deno's too when it runs a
 * package from the sources: the paths of the module's file and folder. In
 * the bundle they are the chunk's. Libraries use them to find files beside
 * their modules (none of which a kind reads) or to tell their own stack
 * frames from their callers' (dbus-next).
 */
const CJS_PATHS = "var __filename=import.meta.filename,__dirname=import.meta.dirname;";

/** `new URL("…", import.meta.url)` as the minifier writes it. */
const META_URL = /new URL\("([^"]+)",import\.meta\.url\)/g;

/** Where Deno keeps its npm packages (`deno info --json`). */
async function npmCacheDir(): Promise<string> {
  return JSON.parse((await runDeno(["info", "--json"])).stdout).npmCache;
}

/** The file of `asset` in Deno's npm cache, at the version deno.lock pins. */
async function assetSource(asset: Asset): Promise<string> {
  const lock = JSON.parse(await Deno.readTextFile(`${repoRoot}/deno.lock`));
  const key = Object.keys(lock.npm ?? {}).find((k) => k.startsWith(`${asset.pkg}@`));
  if (!key) throw new Error(`${asset.pkg} is not in deno.lock: is ASSETS out of date?`);
  const version = key.slice(asset.pkg.length + 1).split("_")[0]!;
  return `${await npmCacheDir()}/registry.npmjs.org/${asset.pkg}/${version}/${asset.file}`;
}

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

/**
 * Makes the bundler's output in `dir` runnable as it stands: rewrites its
 * modules, copies the files packages read beside their modules, and checks
 * that every file a module builds a URL to is there.
 */
export async function fixUp(dir: string): Promise<void> {
  await postProcess(dir);
  for (const asset of ASSETS) {
    await Deno.mkdir(`${dir}/${asset.name.slice(0, asset.name.lastIndexOf("/"))}`, {
      recursive: true,
    });
    await Deno.copyFile(await assetSource(asset), `${dir}/${asset.name}`);
  }
  await checkUrls(dir);
}

/** The bundler's output made runnable as it stands (see the module's comment). */
async function postProcess(dir: string): Promise<void> {
  let requires = 0;
  let markers = 0;
  let wrappers = 0;
  const leftOutNames = new Map<string, Set<string>>();
  const assetsFound = new Map<string, number>();
  for (const path of await listFiles(dir)) {
    if (!path.endsWith(".js")) continue;
    const file = `${dir}/${path}`;
    let text = await Deno.readTextFile(file);
    const before = text;
    try {
      const eager = eagerWrappers(text);
      text = eager.text;
      wrappers += eager.wrappers;
    } catch (e) {
      throw new Error(
        `${path}: cannot find its module wrappers (scripts/eager_wrappers.ts): ${
          e instanceof Error ? e.message : e
        }`,
      );
    }
    text = text.replace(DENO_REQUIRE, (_, name: string) => {
      requires++;
      return lazyRequire(name);
    });
    if (text.includes("__deno_internal_createRequire")) {
      throw new Error(
        `${path}: Deno's require shim has a shape scripts/bundle_fixups.ts does not know; update DENO_REQUIRE`,
      );
    }
    if (FREE_CJS_PATH.test(text)) {
      if (/\b(?:var|let|const|function)\s+__(?:filename|dirname)\b/.test(text)) {
        throw new Error(`${path} both declares and uses __filename or __dirname`);
      }
      text = CJS_PATHS + text;
    }
    const quotedMarker = JSON.stringify(ROOT_MARKER);
    if (text.includes(quotedMarker)) {
      markers++;
      text = text.replaceAll(quotedMarker, JSON.stringify(rootPrefix(path)));
    }
    for (const l of LEFT_OUT) {
      const from = `from${JSON.stringify(l.module)}`;
      if (!text.includes(from)) continue;
      const names = leftOutNames.get(l.module) ?? new Set<string>();
      leftOutNames.set(l.module, names);
      for (const m of text.matchAll(new RegExp(`import\\{([^}]*)\\}${escapeRegExp(from)}`, "g"))) {
        for (const spec of m[1]!.split(",")) names.add(spec.trim().split(/\s+as\s+/)[0]!);
      }
      // `import X from"m"` (minified): the default export.
      if (new RegExp(`import [\\w$]+ ?${escapeRegExp(from)}`).test(text)) names.add("default");
      text = text.replaceAll(
        from,
        `from${JSON.stringify(rootPrefix(path) + leftOutPath(l.module))}`,
      );
    }
    for (const asset of ASSETS) {
      const from = `new URL(${JSON.stringify(asset.reference)},import.meta.url)`;
      if (!text.includes(from)) continue;
      assetsFound.set(asset.name, (assetsFound.get(asset.name) ?? 0) + 1);
      text = text.replaceAll(
        from,
        `new URL(${JSON.stringify(rootPrefix(path) + asset.name)},import.meta.url)`,
      );
    }
    if (text !== before) await Deno.writeTextFile(file, text);
  }
  if (requires === 0) throw new Error("no require shim found: has Deno's bundler changed?");
  if (wrappers === 0) {
    throw new Error(
      "no module wrapper found: has Deno's bundler changed? (scripts/eager_wrappers.ts)",
    );
  }
  if (Object.keys(WORKERS).length > 0 && markers === 0) {
    throw new Error(`no ${ROOT_MARKER} marker found: engine/workers.ts is not in the bundle`);
  }
  for (const l of LEFT_OUT) {
    const names = leftOutNames.get(l.module);
    if (!names) throw new Error(`nothing imports ${l.module} any more: update LEFT_OUT`);
    if (names.has("*")) {
      throw new Error(`${l.module} is imported whole: LEFT_OUT cannot stand in for it`);
    }
    await Deno.mkdir(`${dir}/left-out`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/${leftOutPath(l.module)}`,
      leftOutModule(l, [...names].sort()),
    );
  }
  for (const asset of ASSETS) {
    if (!assetsFound.has(asset.name)) {
      throw new Error(
        `${asset.pkg} no longer reads ${asset.reference} beside its module: update ASSETS`,
      );
    }
  }
}

/** The stand-in of a left-out module: each export throws, naming what was left out and why. */
export function leftOutModule(l: LeftOut, names: readonly string[]): string {
  const why = JSON.stringify(`is left out of waitcmd's bundle (scripts/bundle.ts): ${l.why}`);
  return [
    `// Written by scripts/bundle.ts in place of ${l.module}: ${l.why}.`,
    `const leftOut = (name) => function () { throw new Error(${
      JSON.stringify(l.module + ".")
    } + name + " " + ${why}); };`,
    ...names.filter((n) => n !== "default").map((n) =>
      `export const ${n} = leftOut(${JSON.stringify(n)});`
    ),
    // A default import is used as an object (`avro.Type`): any use of it throws.
    ...(names.includes("default")
      ? [
        `export default new Proxy(leftOut("default"), { get: (_, p) => leftOut("default." + String(p))() });`,
      ]
      : []),
    "",
  ].join("\n");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Fails when a bundled module builds a URL to a file that the bundle does not hold. */
async function checkUrls(dir: string): Promise<void> {
  const missing: string[] = [];
  for (const path of await listFiles(dir)) {
    if (!path.endsWith(".js")) continue;
    const text = await Deno.readTextFile(`${dir}/${path}`);
    for (const m of text.matchAll(META_URL)) {
      const target = new URL(m[1]!, `file:///bundle/${path}`).pathname.slice("/bundle/".length);
      if (!(await exists(`${dir}/${target}`))) missing.push(`${path}: ${m[1]}`);
    }
  }
  if (missing.length > 0) {
    throw new Error(
      `bundled code reads files the bundle does not hold (a package reading beside its module: add it to ASSETS; a worker: use workerUrl()): ${
        missing.join("; ")
      }`,
    );
  }
}

/**
 * Fails when a module that the entry or a worker reaches (statically or by a literal `import()`)
 * does not parse: a rewrite of {@link postProcess} gone wrong. `deno info` parses each module as
 * Deno will.
 */
export async function checkParses(dir: string, entries: readonly string[]): Promise<void> {
  const bad: string[] = [];
  for (const entry of entries) {
    const out = await runDeno(["info", "--json", "--no-config", "--no-lock", `${dir}/${entry}`]);
    if (!out.success) {
      throw new Error(`deno info ${entry} failed: ${tail(out.stderr, 3).replaceAll("\n", " ")}`);
    }
    const info = JSON.parse(out.stdout) as {
      modules: { specifier: string; error?: string }[];
    };
    for (const m of info.modules) {
      if (m.error === undefined) continue;
      const where = m.specifier.startsWith(`file://${dir}/`)
        ? m.specifier.slice(`file://${dir}/`.length)
        : m.specifier;
      bad.push(`${where}: ${m.error.split("\n")[0]}`);
    }
  }
  if (bad.length > 0) throw new Error(`modules of the bundle do not load: ${bad.join("; ")}`);
}
