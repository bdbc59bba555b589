import { assert, assertEquals } from "../tests/_assert.ts";
import { Interner } from "./intern.ts";

Deno.test("Interner.value() keeps the data, rebuilt, and other values as they are", () => {
  const i = new Interner();
  const bytes = new Uint8Array([1, 2]);
  const a = i.value({ kind: "ConfigMap", nested: { list: ["v1", "x"] }, n: 3, bytes, none: null });
  const b = i.value(structuredClone({ kind: "ConfigMap", nested: { list: ["v1"] } }));
  assertEquals(a, { kind: "ConfigMap", nested: { list: ["v1", "x"] }, n: 3, bytes, none: null });
  assertEquals(b, { kind: "ConfigMap", nested: { list: ["v1"] } });
  assert(a.bytes === bytes);
  assertEquals(i.value("alone"), "alone");
});

Deno.test("Interner.value() rebuilds data nested deeper than the stack", () => {
  let deep: unknown = "end";
  for (let n = 0; n < 100_000; n++) deep = { next: deep };
  let out = new Interner().value(deep) as { next: unknown } | string;
  let depth = 0;
  while (typeof out !== "string") {
    out = out.next as { next: unknown } | string;
    depth++;
  }
  assertEquals([depth, out], [100_000, "end"]);
});
