/**
 * docs/recipe.schema.json is what scripts/recipe_schema.ts makes from the run-level flags'
 * declarations: a flag added, renamed or given another type changes the recipe's schema with it.
 *
 * @module
 */

import { assertEquals } from "./_assert.ts";
import { RUN_FLAGS } from "../engine/options.ts";
import { RECIPE_SCHEMA_PATH, recipeSchema } from "../scripts/recipe_schema.ts";

const repoRootDir = new URL("../", import.meta.url).pathname;

Deno.test("docs/recipe.schema.json is made from RUN_FLAGS (deno task schema rewrites it)", async () => {
  const file = JSON.parse(await Deno.readTextFile(`${repoRootDir}${RECIPE_SCHEMA_PATH}`));
  assertEquals(file, recipeSchema(), "run `deno task schema`");
});

Deno.test("the recipe schema's run-level keys are the flags a recipe may set, described as in help", () => {
  const properties = recipeSchema().properties as Record<string, { description?: string }>;
  const recipeFlags = RUN_FLAGS.filter((f) => !f.cliOnly);
  const keys = Object.keys(properties).filter((k) => !["conditions", "guards", "then"].includes(k));
  assertEquals(keys, recipeFlags.map((f) => f.name));
  for (const f of recipeFlags) assertEquals(properties[f.name]!.description, f.description);
  assertEquals(Object.keys(properties).includes("config"), false);
  assertEquals(Object.keys(properties).includes("explain"), false);
});
