/**
 * The isolation part of the kind contract (docs/contract.md §2): a kind
 * that declares `isolate` has its options cross to its worker by structured
 * clone, so every option its examples parse to must survive one unchanged;
 * and its probe module must load and make probes in the real worker
 * (conditions/isolate_worker.ts), where the registry finds it by name.
 */

import { kindSuites } from "../_suite.ts";
import { assertEquals } from "../_assert.ts";
import { registry } from "../../conditions/all.ts";
import { parseArgv } from "../../engine/grammar.ts";
import { KindIsolate, setMemoryCap } from "../../engine/isolate.ts";
import { DEFAULT_MEMORY_CAP } from "../../engine/memory.ts";
import { EXAMPLE_ENV, shellWords } from "../_kit.ts";

const isolated = registry.kinds.filter((k) => k.isolate);

/** The options of the conditions of `kind` in its examples. */
function exampleOptions(kind: (typeof isolated)[number]): unknown[] {
  return kind.examples.flatMap((ex) => {
    const c = parseArgv(shellWords(ex.args), registry, EXAMPLE_ENV);
    if (c.type !== "run") return [];
    return c.plan.conditions.filter((p) => p.kind === kind).map((p) => p.options);
  });
}

Deno.test("conformance: the kinds that run drivers and parsers are isolated", async () => {
  const { suites, missing } = await kindSuites();
  assertEquals(missing, []);
  assertEquals(
    isolated.map((k) => k.name).sort(),
    [...suites].filter(([, s]) => s.isolated).map(([name]) => name).sort(),
    "the kinds whose declaration says isolate against those whose suite (_suite.ts) says isolated",
  );
});

Deno.test("conformance: an isolated kind's options survive a structured clone unchanged", async (t) => {
  for (const kind of isolated) {
    await t.step(kind.name, () => {
      for (const options of exampleOptions(kind)) {
        assertEquals(structuredClone(options), options);
      }
    });
  }
});

Deno.test({
  name: "conformance: an isolated kind's probes are made in its worker from its examples",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    // The memory cap is the process's: a test process (with its type checker) is far larger
    // than the CLI, so it gets a cap of its own.
    setMemoryCap(4 * 2 ** 30);
    for (const kind of isolated) {
      await t.step(kind.name, async () => {
        const options = exampleOptions(kind);
        const isolate = new KindIsolate(kind.name, { env: EXAMPLE_ENV });
        try {
          const probes = await isolate.probes(options);
          assertEquals(probes.length, options.length);
        } finally {
          await isolate.close();
        }
      });
    }
    setMemoryCap(DEFAULT_MEMORY_CAP);
  },
});
