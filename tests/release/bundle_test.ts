/**
 * The release bundle (scripts/bundle.ts), which `deno compile` embeds and the
 * e2e suite runs with `WAITCMD_UNDER_TEST=bundle`: what it holds, what a
 * start loads, and that it needs nothing from any package cache. These need
 * a bundle of this tree's sources (`scripts/deno task bundle`, which
 * scripts/test runs first); without one they are ignored outside CI.
 */

import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
  assertThrows,
} from "../_assert.ts";
import { cachedPackages, ignoreWithout } from "../_kit.ts";
import { makeRedis } from "../../conditions/redis/_service.ts";
import { attribute, packageOf } from "../../scripts/bundle_costs.ts";
import { checkParses, LEFT_OUT, leftOutPath } from "../../scripts/bundle_fixups.ts";
import {
  BUNDLE_DIR,
  bundleState,
  LAUNCHER,
  type Manifest,
  readManifest,
} from "../../scripts/bundle_manifest.ts";
import { WORKERS } from "../../engine/workers.ts";
import { eagerWrappers } from "../../scripts/eager_wrappers.ts";

const state = await bundleState();
const noBundle = state === "fresh"
  ? undefined
  : `dist/bundle is ${state} (scripts/deno task bundle)`;
const manifest = (await readManifest()) as Manifest;

/**
 * The modules `entry` imports statically, itself included (of main.js, the default: what every
 * start loads).
 */
async function staticClosure(entry = manifest.entry): Promise<string[]> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await Deno.readTextFile(`${BUNDLE_DIR}/${file}`);
    // Static imports only: `import{...}from"./x.js"`, `import"./x.js"`, `export{...}from"./x.js"`.
    for (
      const m of text.matchAll(
        /(?:^|[;}])\s*(?:import|export)\s*(?:[^"'();]*?from\s*)?"\.\/([^"]+)"/g,
      )
    ) {
      todo.push(m[1]!);
    }
  }
  return [...seen];
}

Deno.test({
  name:
    "bundle: a start loads only waitcmd's own modules: no node: module and no library (tcp and file load no driver)",
  ignore: ignoreWithout("a bundle of these sources", noBundle),
  async fn() {
    assert(noBundle === undefined, noBundle);
    const closure = await staticClosure();
    assert(closure.length > 1, "main.js imports its shared chunks");
    for (const file of closure) {
      const text = await Deno.readTextFile(`${BUNDLE_DIR}/${file}`);
      assert(!/from\s*"node:|import\s*"node:/.test(text), `${file} imports a node: module`);
      const holds = manifest.files.find((f) => f.path === file)?.holds ?? [];
      for (const h of holds) {
        assert(h === "waitcmd" || h === "(bundler)", `${file}, loaded at every start, holds ${h}`);
      }
    }
  },
});

Deno.test({
  name:
    "bundle: the main thread's side of an isolated kind (engine/isolate.ts) loads no node: module",
  ignore: ignoreWithout("a bundle of these sources", noBundle),
  async fn() {
    assert(noBundle === undefined, noBundle);
    // Loading one starts Deno's Node compatibility layer on the main thread, tens of ms before
    // every isolated kind's first attempt (docs/performance.md), for nothing it uses there.
    const chunks = new Set<string>();
    for (const file of await staticClosure()) {
      const text = await Deno.readTextFile(`${BUNDLE_DIR}/${file}`);
      for (const m of text.matchAll(/import\("\.\/(isolate-[\w]+\.js)"\)/g)) chunks.add(m[1]!);
    }
    assertEquals(chunks.size, 1, "main.js's graph imports engine/isolate.ts's chunk");
    for (const file of await staticClosure([...chunks][0])) {
      const text = await Deno.readTextFile(`${BUNDLE_DIR}/${file}`);
      assert(!/from\s*"node:|import\s*"node:/.test(text), `${file} imports a node: module`);
    }
  },
});

Deno.test({
  name:
    "bundle: with an empty Deno cache, a kind with npm packages runs from the bundle alone and downloads nothing",
  ignore: ignoreWithout("a bundle of these sources", noBundle),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    assert(noBundle === undefined, noBundle);
    const denoDir = await Deno.makeTempDir({ prefix: "waitcmd-empty-deno-dir-" });
    const redis = await makeRedis();
    try {
      const out = await new Deno.Command(`${BUNDLE_DIR}/${LAUNCHER}`, {
        args: ["--output", "json", "--timeout", "20s", "redis", redis.url()],
        env: { NO_COLOR: "1", DENO_DIR: denoDir },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assertEquals(out.code, 0, stderr);
      assertEquals(JSON.parse(new TextDecoder().decode(out.stdout)).status, "satisfied");
      assertEquals(await cachedPackages(denoDir), [], "running the bundle downloaded packages");
    } finally {
      await redis.remove();
      await Deno.remove(denoDir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "bundle: every worker and asset is in it, every user may run it, and a left-out module throws, naming itself",
  ignore: ignoreWithout("a bundle of these sources", noBundle),
  async fn() {
    assert(noBundle === undefined, noBundle);
    const files = new Set(manifest.files.map((f) => f.path));
    for (const [name, path] of Object.entries(WORKERS)) {
      assertEquals(manifest.workers[name], path.replace(/\.ts$/, ".js"));
      assert(files.has(manifest.workers[name]!), `worker ${name}`);
    }
    for (const a of manifest.assets) assert(files.has(a), `asset ${a}`);
    // Every user may run it, as the binary (the fault tests run waitcmd as nobody).
    assertEquals((await Deno.stat(BUNDLE_DIR)).mode! & 0o055, 0o055, "dist/bundle is private");
    assertEquals((await Deno.stat(`${BUNDLE_DIR}/${LAUNCHER}`)).mode! & 0o055, 0o055);
    assert(![...files].some((f) => /\.(map|ts|node)$/.test(f)), "no maps, sources or add-ons");
    for (const l of LEFT_OUT) {
      const mod = await import(`${BUNDLE_DIR}/${leftOutPath(l.module)}`);
      const names = Object.keys(mod);
      assert(names.length > 0, `${l.module} stands in for nothing`);
      for (const n of names) {
        try {
          (mod[n] as () => void)();
          throw new Error(`${l.module}.${n} did not throw`);
        } catch (e) {
          assertStringIncludes((e as Error).message, `${l.module}.${n} is left out`);
        }
      }
    }
  },
});

Deno.test("attribute() gives each generated span to its source's package", () => {
  // Two sources; "AAAA" maps column 0 to source 0, "MCAA" maps column 6 to source 1 (delta +1).
  const map = {
    sources: [
      "../../root/.cache/deno/npm/registry.npmjs.org/pg/8.23.1/lib/client.js",
      "../../repo/engine/runner.ts",
    ],
    mappings: "AAAA,MCAA",
  };
  assertEquals(
    Object.fromEntries(attribute("abcdefghij", map)),
    { pg: 6, waitcmd: 4 },
  );
  assertEquals(
    packageOf("x/registry.npmjs.org/@redis/client/6.3.1/dist/index.js"),
    "@redis/client",
  );
  assertEquals(packageOf("x/node_modules/ws/lib/a.js"), "ws");
  assertEquals(packageOf("../../conditions/tcp/probe.ts"), "waitcmd");
});

Deno.test("eagerWrappers() puts top-level module wrappers in parentheses and changes nothing else", () => {
  // As Deno's bundler writes CommonJS modules: a helper that runs each wrapper at its first call.
  const src = [
    "var H=(f,m)=>()=>(m||f((m={exports:{}}).exports,m),m.exports);",
    'var A=H(e=>{e.x="}"+`${1}`;e.f=function(){return/}/.source}}),',
    "B=H((e,t)=>{t.exports=[A().x,A().f(),g(e=>{return e})]}),",
    "C=H(()=>{});function g(f){return f(2)}var D=H(e=>{},1);",
    "out=[B(),C(),D()];",
  ].join("");
  const eager = eagerWrappers(src);
  assertEquals(eager.wrappers, 3);
  assertStringIncludes(eager.text, "A=H((e=>{");
  assertStringIncludes(eager.text, "B=H(((e,t)=>{");
  assertStringIncludes(eager.text, "C=H((()=>{}))");
  assertStringIncludes(eager.text, "g(e=>{return e})", "an arrow inside a wrapper is left");
  assertStringIncludes(eager.text, "D=H(e=>{},1)", "a call with two arguments is left");
  const run = (text: string) => new Function(`let out;${text};return out`)();
  assertEquals(run(eager.text), run(src));
  assertEquals(eagerWrappers("var a=1;").wrappers, 0);
  // What acorn cannot parse fails the build rather than being rewritten blindly.
  assertThrows(() => eagerWrappers("var A=H(e=>{);"), SyntaxError);
});

Deno.test({
  name: "bundle: the libraries' module wrappers are in parentheses (compiled with their chunk)",
  ignore: ignoreWithout("a bundle of these sources", noBundle),
  async fn() {
    assert(noBundle === undefined, noBundle);
    const redis = manifest.files.find((f) => f.holds?.[0] === "@redis/client");
    assert(redis !== undefined, "a chunk holds @redis/client");
    const text = await Deno.readTextFile(`${BUNDLE_DIR}/${redis.path}`);
    const wrapped = text.match(/[=,][\w$]{1,3}\(\((?:[\w$]+|\([\w$,]*\))=>\{/g) ?? [];
    // @redis/client is about 480 CommonJS modules.
    assert(wrapped.length > 400, `${redis.path}: ${wrapped.length} wrappers in parentheses`);
  },
});

Deno.test("checkParses() fails the build on a module the entry reaches that does not parse", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-parses-" });
  try {
    await Deno.writeTextFile(`${dir}/main.js`, 'import "./a.js";\nawait import("./b.js");\n');
    await Deno.writeTextFile(`${dir}/a.js`, "export const a = ((x) => x);\n");
    await Deno.writeTextFile(`${dir}/b.js`, "var b = (() => {);\n");
    await assertRejects(() => checkParses(dir, ["main.js"]), Error, "b.js: SyntaxError");
    await Deno.writeTextFile(`${dir}/b.js`, "var b = (() => {});\n");
    await checkParses(dir, ["main.js"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
