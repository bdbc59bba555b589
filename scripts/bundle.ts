/**
 * `deno task bundle`: the release artefact. One bundled, minified program in
 * `dist/bundle/`, which `deno compile` embeds for every target
 * (scripts/compile.ts) and which the e2e suite runs with
 * `WAITCMD_UNDER_TEST=bundle` (tests/e2e/_cli.ts), so what ships is what is
 * tested.
 *
 * `deno bundle --platform deno --packages bundle --code-splitting --minify`
 * of main.ts and of each worker entry (engine/workers.ts). Code splitting
 * keeps every literal `import()` a chunk of its own: a kind's declaration,
 * its probe and its libraries load only when a command line uses the kind.
 * Then the bundle is put right where the bundler cannot:
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
 *   must then still parse (`deno info`), or the build fails.
 * - **Workers**: each entry of engine/workers.ts becomes
 *   `dist/bundle/<path>.js`, and `workerUrl()` learns its way to the bundle's
 *   root.
 *
 * The output also holds `bundle.json` (the files, the workers and assets,
 * and the digest of the sources it was built from, which the e2e switch
 * checks) and `waitcmd`, a launcher that runs the bundle with the pinned
 * Deno and the permissions the compiled binary has ({@link PERMISSIONS}),
 * reading neither a config nor a lockfile and never fetching anything.
 *
 * Usage: deno task bundle [--out DIR]
 *
 * @module
 */

import { WORKERS } from "../engine/workers.ts";
import { eagerWrappers } from "./eager_wrappers.ts";
import denoJson from "../deno.json" with { type: "json" };

/** The repository root (scripts/bundle.ts -> repo). */
export const repoRoot: string = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

/** Where the release artefact is built. */
export const BUNDLE_DIR = `${repoRoot}/dist/bundle`;

/** The bundle's entry module, inside the bundle directory. */
export const ENTRY = "main.js";

/** The launcher beside the bundle, inside the bundle directory. */
export const LAUNCHER = "waitcmd";

/** The manifest of the bundle, inside the bundle directory. */
export const MANIFEST = "bundle.json";

/** The permissions of the compiled binary, and of the launcher that runs the bundle. */
export const PERMISSIONS: readonly string[] = ["--allow-all"];

/**
 * The V8 flags waitcmd runs with, from the sources (scripts/waitcmd), the bundle's launcher and
 * the compiled binary alike: semi-spaces of 4 MiB (the young generation of each heap, the main
 * thread's and each worker's, is otherwise up to 48 MiB) and an old generation that grows by a
 * fifth of what it holds between two full collections (otherwise by up to four times), so that
 * the garbage of many attempts is collected before it weighs. A manifest of 10,000 objects
 * polled for 30 s peaked at 510-560 MiB without them, past the memory cap of 512 MiB, and at
 * 365-372 MiB with them, for about a third more CPU time in that run (docs/reliability.md,
 * large manifests).
 */
export const V8_FLAGS = "--v8-flags=--max-semi-space-size=4,--heap-growing-percent=20";

/**
 * What the launcher adds so that `deno run` of the bundle starts as the
 * compiled binary does: no config file or lockfile looked for (the binary
 * has none), nothing fetched, and a dynamic import resolved only when it runs.
 */
export const LAUNCHER_FLAGS: readonly string[] = [
  "--quiet",
  "--no-prompt",
  "--no-config",
  "--no-lock",
  "--cached-only",
  "--unstable-lazy-dynamic-imports",
  V8_FLAGS,
];

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

/** What `bundle.json` records. */
export interface Manifest {
  /** waitcmd's version (deno.json). */
  readonly version: string;
  /** The Deno that built it, and that the launcher runs. */
  readonly deno: string;
  /** {@link sourceDigest} of the tree it was built from. */
  readonly source: string;
  /** The entry module. */
  readonly entry: string;
  /** Worker entries by name, as bundle paths. */
  readonly workers: Record<string, string>;
  /** Files read at run time that no import names, as bundle paths. */
  readonly assets: readonly string[];
  /**
   * Every file of the program (launcher and manifest excepted) with its size,
   * largest first, and for a module what its bytes come from, largest first
   * (at most three).
   */
  readonly files: readonly { path: string; bytes: number; holds?: readonly string[] }[];
  /** What each npm package, and waitcmd's own code, costs in the bundle's modules, largest first. */
  readonly packages: readonly { name: string; bytes: number }[];
}

/** The files of the source folders that are tests or test material (docs/development.md). */
const TEST_MATERIAL = /_test\.ts$|^_suite\.ts$|^_service\.ts$/;

/**
 * The files the program is built from: main.ts, deno.json, deno.lock, the
 * non-test modules of engine/, conditions/, output/ and cli/ with the shell files
 * they import as text (output/completions/), and this script with the one it
 * rewrites the output with (scripts/eager_wrappers.ts), as paths from
 * the repository root, sorted. A kind's test material (`_suite.ts`, its rows of
 * the shared suites, and `_service.ts`, its test server's starter) is not among
 * them: nothing main.ts imports reaches it (tests/layers_test.ts).
 */
export async function sourceFiles(root = repoRoot): Promise<string[]> {
  const out = [
    "deno.json",
    "deno.lock",
    "main.ts",
    "scripts/bundle.ts",
    "scripts/eager_wrappers.ts",
  ];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(`${root}/${dir}`)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (/\.(ts|js|json|bash|zsh|fish)$/.test(e.name) && !TEST_MATERIAL.test(e.name)) {
        out.push(path);
      }
    }
  };
  for (const dir of ["engine", "conditions", "output", "cli"]) await walk(dir);
  return out.sort();
}

/** SHA-256 of the sources' paths and contents, as hex: what a bundle was built from. */
export async function sourceDigest(root = repoRoot): Promise<string> {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (const path of await sourceFiles(root)) {
    const data = await Deno.readFile(`${root}/${path}`);
    parts.push(enc.encode(`${path}\0${data.length}\0`), data);
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Reads a bundle's manifest, or undefined when there is none. */
export async function readManifest(dir = BUNDLE_DIR): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(`${dir}/${MANIFEST}`)) as Manifest;
  } catch {
    return undefined;
  }
}

/**
 * Whether `dir` holds a bundle of the current sources: `fresh`, `stale` (built
 * from other sources, or by another Deno) or `missing`.
 */
export async function bundleState(dir = BUNDLE_DIR): Promise<"fresh" | "stale" | "missing"> {
  const m = await readManifest(dir);
  if (!m) return "missing";
  return m.source === await sourceDigest() && m.deno === Deno.version.deno ? "fresh" : "stale";
}

// ---------------------------------------------------------------------------
// Building

/** The bundle path of worker entry `path` (`conditions/_common/regex_worker.js`). */
export function workerOutput(path: string): string {
  return path.replace(/\.ts$/, ".js");
}

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
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1" },
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).npmCache;
}

/** The file of `asset` in Deno's npm cache, at the version deno.lock pins. */
async function assetSource(asset: Asset): Promise<string> {
  const lock = JSON.parse(await Deno.readTextFile(`${repoRoot}/deno.lock`));
  const key = Object.keys(lock.npm ?? {}).find((k) => k.startsWith(`${asset.pkg}@`));
  if (!key) throw new Error(`${asset.pkg} is not in deno.lock: is ASSETS out of date?`);
  const version = key.slice(asset.pkg.length + 1).split("_")[0]!;
  return `${await npmCacheDir()}/registry.npmjs.org/${asset.pkg}/${version}/${asset.file}`;
}

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${dir}/${prefix}`)) {
    const path = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...await listFiles(dir, path));
    else out.push(path);
  }
  return out.sort();
}

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

/** Options of {@link bundle}. */
export interface BundleOptions {
  /** Output directory (default {@link BUNDLE_DIR}); replaced as a whole. */
  out?: string;
  /** A line of progress. */
  log?: (line: string) => void;
}

/**
 * Builds the bundle into `out`: into a directory beside it first, which then
 * replaces `out` in one rename, so a reader never sees half a bundle. Throws
 * an Error with a one-line reason when it cannot be built.
 */
export async function bundle(opts: BundleOptions = {}): Promise<Manifest> {
  const out = opts.out ?? BUNDLE_DIR;
  const log = opts.log ?? (() => {});
  const parent = out.slice(0, out.lastIndexOf("/")) || ".";
  await Deno.mkdir(parent, { recursive: true });
  const work = await Deno.makeTempDir({ dir: parent, prefix: ".bundle-" });
  // A temporary directory is private (0700); a build output is for every user, as the binary is
  // (tests run it as nobody).
  await Deno.chmod(work, 0o755);
  try {
    const workers = Object.values(WORKERS) as string[];
    const result = await new Deno.Command(Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--platform",
        "deno",
        "--packages",
        "bundle",
        "--code-splitting",
        "--minify",
        // Maps only to tell what each library costs; removed before anything is written out.
        "--sourcemap",
        "external",
        "--frozen",
        "--config",
        `${repoRoot}/deno.json`,
        ...[...EXTERNAL, ...LEFT_OUT.map((l) => l.module)].flatMap((e) => ["--external", e]),
        "--outdir",
        work,
        "main.ts",
        ...workers,
      ],
      cwd: repoRoot,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!result.success) {
      const text = new TextDecoder().decode(result.stderr).trim();
      throw new Error(`deno bundle failed: ${text.split("\n").slice(-8).join("\n")}`);
    }
    const costs = await attributeAndDropMaps(work);
    await postProcess(work);
    for (const asset of ASSETS) {
      await Deno.mkdir(`${work}/${asset.name.slice(0, asset.name.lastIndexOf("/"))}`, {
        recursive: true,
      });
      await Deno.copyFile(await assetSource(asset), `${work}/${asset.name}`);
    }
    await checkUrls(work);
    await checkParses(work, [ENTRY, ...workers.map(workerOutput)]);
    const files = await Promise.all(
      (await listFiles(work)).map(async (path) => ({
        path,
        bytes: (await Deno.stat(`${work}/${path}`)).size,
        ...(costs.byFile.has(path) ? { holds: costs.byFile.get(path)! } : {}),
      })),
    );
    files.sort((a, b) => b.bytes - a.bytes || a.path.localeCompare(b.path));
    const manifest: Manifest = {
      version: denoJson.version,
      deno: Deno.version.deno,
      source: await sourceDigest(),
      entry: ENTRY,
      workers: Object.fromEntries(
        Object.entries(WORKERS).map(([name, path]) => [name, workerOutput(path)]),
      ),
      assets: ASSETS.map((a) => a.name),
      files,
      packages: costs.packages,
    };
    for (const w of Object.values(manifest.workers)) {
      if (!files.some((f) => f.path === w)) throw new Error(`the bundle has no worker ${w}`);
    }
    await Deno.writeTextFile(`${work}/${MANIFEST}`, JSON.stringify(manifest, null, 2) + "\n");
    await Deno.writeTextFile(`${work}/${LAUNCHER}`, launcherScript(Deno.execPath()), {
      mode: 0o755,
    });
    await Deno.chmod(`${work}/${LAUNCHER}`, 0o755);
    const old = `${work}.old`;
    if (await exists(out)) await Deno.rename(out, old);
    await Deno.rename(work, out);
    await Deno.remove(old, { recursive: true }).catch(() => {});
    const total = files.reduce((n, f) => n + f.bytes, 0);
    log(
      `bundle: ${files.length} files, ${(total / 1e6).toFixed(2)} MB, into ${relative(out)}/ ` +
        `(largest: ${files.slice(0, 3).map((f) => `${f.path} ${kb(f.bytes)}`).join(", ")})`,
    );
    return manifest;
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
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
        `${path}: Deno's require shim has a shape scripts/bundle.ts does not know; update DENO_REQUIRE`,
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

/** What the bundled modules' bytes come from, read from the bundler's source maps. */
interface Costs {
  /** Bytes by npm package (`waitcmd` for the project's own code), largest first. */
  readonly packages: { name: string; bytes: number }[];
  /** The packages that make most of each module, largest first. */
  readonly byFile: Map<string, string[]>;
}

/**
 * Attributes every byte of each bundled module to the source it was made
 * from, by its source map, sums them by npm package, then deletes the maps
 * (nothing ships a source map).
 */
async function attributeAndDropMaps(dir: string): Promise<Costs> {
  const total = new Map<string, number>();
  const byFile = new Map<string, string[]>();
  for (const path of await listFiles(dir)) {
    if (!path.endsWith(".js.map")) continue;
    const js = path.slice(0, -".map".length);
    const map = JSON.parse(await Deno.readTextFile(`${dir}/${path}`)) as SourceMap;
    const mine = attribute(await Deno.readTextFile(`${dir}/${js}`), map);
    for (const [name, n] of mine) total.set(name, (total.get(name) ?? 0) + n);
    byFile.set(js, [...mine].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([name]) => name));
    await Deno.remove(`${dir}/${path}`);
  }
  const packages = [...total].map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  return { packages, byFile };
}

/** The parts of a source map (version 3) that {@link attribute} reads. */
export interface SourceMap {
  readonly sources: readonly string[];
  readonly mappings: string;
}

/** The npm package a bundled source belongs to, or `waitcmd` for the project's own modules. */
export function packageOf(source: string): string {
  const m = /registry\.npmjs\.org\/((?:@[^/]+\/)?[^/]+)\//.exec(source) ??
    /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
  return m ? m[1]! : "waitcmd";
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** The numbers of one mapping segment (base64 VLQ). */
function decodeSegment(seg: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of seg) {
    const digit = BASE64.indexOf(ch);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

/**
 * Bytes of `code` by npm package: each generated span belongs to the source
 * of the mapping segment that starts it; spans before the first segment of
 * a line or with no source are the bundler's (`(bundler)`).
 */
export function attribute(code: string, map: SourceMap): Map<string, number> {
  const enc = new TextEncoder();
  const out = new Map<string, number>();
  const add = (name: string, text: string) => {
    if (text.length > 0) out.set(name, (out.get(name) ?? 0) + enc.encode(text).length);
  };
  const lines = code.split("\n");
  const mapLines = map.mappings.split(";");
  let source = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]! + (i < lines.length - 1 ? "\n" : "");
    let col = 0;
    let at = 0;
    let owner = "(bundler)";
    for (const seg of (mapLines[i] ?? "").split(",")) {
      if (seg === "") continue;
      const f = decodeSegment(seg);
      col += f[0]!;
      add(owner, line.slice(at, col));
      at = col;
      if (f.length >= 4) {
        source += f[1]!;
        owner = packageOf(map.sources[source] ?? "");
      } else {
        owner = "(bundler)";
      }
    }
    add(owner, line.slice(at));
  }
  return out;
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
 * does not parse: a rewrite of {@link postProcess} gone wrong (scripts/eager_wrappers.ts reads the
 * bundler's output with a scanner of its own). `deno info` parses each module as Deno will.
 */
export async function checkParses(dir: string, entries: readonly string[]): Promise<void> {
  const bad: string[] = [];
  for (const entry of entries) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--no-config", "--no-lock", `${dir}/${entry}`],
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      const text = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" ");
      throw new Error(`deno info ${entry} failed: ${text}`);
    }
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
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

/** The launcher: `deno run` of the bundle as the compiled binary runs it. */
export function launcherScript(deno: string): string {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  return [
    "#!/bin/sh",
    "# waitcmd from its bundle (written by scripts/bundle.ts): the pinned Deno runs main.js with",
    "# the permissions of the compiled binary, reads no config or lockfile and fetches nothing.",
    "case $0 in */*) here=${0%/*} ;; *) here=. ;; esac",
    `exec ${q(deno)} run ${[...PERMISSIONS, ...LAUNCHER_FLAGS].join(" ")} "$here/${ENTRY}" "$@"`,
    "",
  ].join("\n");
}

function kb(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(0)} KB`;
}

function relative(path: string): string {
  const cwd = Deno.cwd();
  return path.startsWith(cwd + "/") ? path.slice(cwd.length + 1) : path;
}

if (import.meta.main) {
  const args = [...Deno.args];
  let out: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag === "--out" && (inline ?? args[i + 1]) !== undefined) {
      out = inline ?? args[++i];
    } else {
      console.error(`bundle: unknown argument "${args[i]}"`);
      console.error("usage: deno task bundle [--out DIR]");
      Deno.exit(2);
    }
  }
  try {
    await bundle({ out, log: (l) => console.error(l) });
  } catch (e) {
    console.error(`bundle: FAILED: ${e instanceof Error ? e.message : e}`);
    Deno.exit(1);
  }
}
