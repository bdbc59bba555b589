/**
 * The layers of docs/development.md ("Layout"): a module imports only from
 * its own layer and the layers below it, so that a lower layer never
 * depends on a higher one. Tests and in-process fakes may reach anywhere.
 *
 * @module
 */

import { assertEquals } from "./_assert.ts";

/** What each layer may import, besides itself. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  engine: [],
  conditions: ["engine"],
  output: ["engine"],
  cli: ["engine", "output"],
};

const root = new URL("../", import.meta.url);

async function* modules(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(new URL(dir, root))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* modules(path);
    else if (/\.ts$/.test(e.name) && !/_test\.ts$|\/_fake[^/]*$/.test(path)) yield path;
  }
}

/** The repository-relative paths a module imports, statically or by a literal `import()`. */
function importsOf(path: string, text: string): string[] {
  const specs = [...text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => m[1]!);
  return specs.map((s) => new URL(s, new URL(path, root)).pathname.slice(root.pathname.length));
}

Deno.test("no module imports from a layer above its own (docs/development.md, Layout)", async () => {
  const upward: string[] = [];
  for (const layer of Object.keys(MAY_IMPORT)) {
    for await (const path of modules(layer)) {
      for (const target of importsOf(path, await Deno.readTextFile(new URL(path, root)))) {
        const to = target.split("/")[0]!;
        if (to === layer || !(to in MAY_IMPORT)) continue;
        if (!MAY_IMPORT[layer]!.includes(to)) upward.push(`${path} imports ${target}`);
      }
    }
  }
  assertEquals(upward, []);
});

/** A kind's test material: its rows of the shared suites and its test server's starter. */
const TEST_MATERIAL = /\/(_suite|_service)\.ts$/;

Deno.test("no shipped module imports tests/ or a kind's test material (_suite.ts, _service.ts)", async () => {
  const reached: string[] = [];
  for (const layer of Object.keys(MAY_IMPORT)) {
    for await (const path of modules(layer)) {
      if (TEST_MATERIAL.test(path)) continue;
      for (const target of importsOf(path, await Deno.readTextFile(new URL(path, root)))) {
        if (target.startsWith("tests/") || TEST_MATERIAL.test(target)) {
          reached.push(`${path} imports ${target}`);
        }
      }
    }
  }
  assertEquals(reached, []);
});

/** Every `.ts` file under `dir`, tests included. */
async function* allModules(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(new URL(dir, root))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* allModules(path);
    else if (e.name.endsWith(".ts")) yield path;
  }
}

Deno.test("no kind's folder imports from another kind's folder: what two kinds share is in conditions/_common/ (docs/development.md, Layout)", async () => {
  const across: string[] = [];
  for await (const e of Deno.readDir(new URL("conditions", root))) {
    if (!e.isDirectory || e.name.startsWith("_")) continue;
    for await (const path of allModules(`conditions/${e.name}`)) {
      for (const target of importsOf(path, await Deno.readTextFile(new URL(path, root)))) {
        const [top, folder] = target.split("/");
        if (
          top === "conditions" && folder !== e.name && target.split("/").length > 2 &&
          !folder!.startsWith("_")
        ) {
          across.push(`${path} imports ${target}`);
        }
      }
    }
  }
  assertEquals(across, []);
});
