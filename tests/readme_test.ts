/**
 * The README's kinds table lists every registered kind once, with its aliases, as the
 * registry (conditions/mod.ts) declares them.
 */

import { assertEquals } from "./_assert.ts";
import { registry } from "../conditions/all.ts";

const README = await Deno.readTextFile(new URL("../README.md", import.meta.url));

Deno.test("README's kinds table matches the registry: every kind once, with its aliases", () => {
  const rows = README.split("\n").filter((l) => /^\| `[a-z]+`( \(|\s+\|)/.test(l));
  const listed = rows.map((l) => {
    const cell = l.split("|")[1]!.trim();
    const [name, ...aliases] = [...cell.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!);
    return { name, aliases };
  });
  const byName = (a: { name?: string }, b: { name?: string }) => a.name! < b.name! ? -1 : 1;
  assertEquals(
    listed.sort(byName),
    registry.kinds.map((k) => ({ name: k.name, aliases: [...k.aliases] })).sort(byName),
  );
});

Deno.test("README stays short and keeps the two set-up commands near the top", () => {
  const lines = README.split("\n");
  const setup = lines.indexOf(
    "scripts/deno task demo   # the main job: a real wait on a target the demo starts itself, late",
  );
  assertEquals(setup > 0 && setup < 30, true, `set-up at line ${setup + 1}`);
  assertEquals(
    lines[setup + 1],
    "scripts/test             # the whole test suite, installing what the tests need",
  );
  assertEquals(lines.length <= 210, true, `${lines.length} lines`);
});
