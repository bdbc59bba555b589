import { assert, assertEquals } from "../tests/_assert.ts";
import { registry } from "../conditions/all.ts";
import { UsageError } from "./errors.ts";
import { parseArgv } from "./grammar.ts";
import { RESERVED_WORDS } from "./registry.ts";
import { EXAMPLE_ENV, shellWords } from "../tests/_kit.ts";

Deno.test("registry kinds each document a target, flags and two or more examples", () => {
  for (const kind of registry.kinds) {
    assert(kind.examples.length >= 2, `${kind.name} has ${kind.examples.length} examples`);
    assert(kind.summary.length > 0 && kind.description.length > 0, `${kind.name} has help text`);
    for (const f of kind.flags) {
      assert(f.description.length > 0, `${kind.name} --${f.name} is described`);
    }
    for (const word of [kind.name, ...kind.aliases]) assert(!RESERVED_WORDS.includes(word));
  }
});

Deno.test("registry examples all parse as valid command lines", async (t) => {
  for (const kind of registry.kinds) {
    for (const ex of kind.examples) {
      await t.step(`${kind.name}: ${ex.args}`, () => {
        const argv = shellWords(ex.args);
        let result;
        try {
          result = parseArgv(argv, registry, EXAMPLE_ENV);
        } catch (e) {
          if (e instanceof UsageError) throw new Error(`example does not parse: ${e.format()}`);
          throw e;
        }
        assertEquals(result.type, "run");
      });
    }
  }
});

Deno.test("registry accepts every settled alias that is registered", () => {
  const settled: Record<string, string> = {
    s3: "objstore",
    k8s: "orch",
    kubernetes: "orch",
    docker: "container",
    systemd: "svcmgr",
  };
  for (const [alias, canonical] of Object.entries(settled)) {
    const kind = registry.lookup(canonical);
    if (kind) assertEquals(registry.lookup(alias)?.name, canonical, `${alias} names ${canonical}`);
  }
});

Deno.test("loadRegistry() loads the kinds a command line names, by name or alias, and no others", async () => {
  const { KINDS, loadRegistry } = await import("../conditions/mod.ts");
  const some = await loadRegistry(["--timeout", "1s", "pg", "localhost", "--", "tcp", "h:1", "x"]);
  assertEquals(some.kinds.map((k) => k.name), ["tcp", "postgres"]);
  assertEquals(some.lookup("postgresql")?.name, "postgres");
  assertEquals(some.lookup("http"), undefined);
  assertEquals((await loadRegistry([])).kinds, []);
  // Every line of the list matches the declaration it loads (loadRegistry throws otherwise).
  assertEquals((await loadRegistry()).kinds.map((k) => k.name), KINDS.map((e) => e.name));
});
