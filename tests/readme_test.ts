/**
 * The README stays a short user guide. Its kinds table is generated from the declarations and
 * checked by tests/docs_test.ts.
 */

import { assertEquals } from "./_assert.ts";

const README = await Deno.readTextFile(new URL("../README.md", import.meta.url));

Deno.test("README stays short and keeps the two set-up commands near the top", () => {
  const lines = README.split("\n");
  const setup = lines.indexOf(
    "scripts/demo   # the main job: installs what the CLI runs, then a real wait on a target it starts late",
  );
  assertEquals(setup > 0 && setup < 30, true, `set-up at line ${setup + 1}`);
  assertEquals(
    lines[setup + 1],
    "scripts/test   # the whole test suite: installs what the tests need, runs each test once",
  );
  assertEquals(lines.length <= 230, true, `${lines.length} lines`);
});
