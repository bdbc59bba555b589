import { assertEquals, assertStringIncludes } from "../tests/_assert.ts";
import { registry } from "../conditions/all.ts";
import { UsageError } from "./errors.ts";
import { parseArgv } from "./grammar.ts";
import { expandRecipe, takeConfig } from "./recipe.ts";
import { GLOBAL_FLAGS } from "./options.ts";
import { repoRootDir } from "../tests/_kit.ts";
import { assertRecipeSchema } from "../tests/_schema.ts";

/** The usage-error line of a recipe with the command line's `rest`, or "" when it parses. */
async function recipeError(text: string, rest: string[] = []): Promise<string> {
  try {
    const x = await expandRecipe(text, "r.yaml", rest, registry);
    try {
      parseArgv(x.argv, registry, {});
    } catch (e) {
      if (e instanceof UsageError) throw x.locate(e);
      throw e;
    }
    return "";
  } catch (e) {
    if (e instanceof UsageError) return e.format();
    throw e;
  }
}

Deno.test("takeConfig() takes --config/-f from the global options only", () => {
  assertEquals(takeConfig(["-t", "5s", "-f", "r.yaml", "tcp", "a:1"]), {
    file: "r.yaml",
    rest: ["-t", "5s", "tcp", "a:1"],
  });
  assertEquals(takeConfig(["--config=-", "--quiet"]), { file: "-", rest: ["--quiet"] });
  assertEquals(takeConfig(["tcp", "a:1", "-f", "x"]), {
    file: undefined,
    rest: ["tcp", "a:1", "-f", "x"],
  });
});

Deno.test("expandRecipe() turns a YAML recipe into one command line", async () => {
  const text = [
    "timeout: 2m",
    "interval: 500ms",
    "conditions:",
    "  - kind: tcp",
    "    target: db:5432",
    "  - kind: http",
    "    target: http://localhost:8080/health",
    "    label: api",
    "    flags:",
    "      status: 200",
    "      header: ['A: 1', 'B: 2']",
    "  - kind: file",
    "    target: /tmp/lock",
    "    not: true",
    "  - kind: exec",
    "    command: [test, -f, /tmp/x]",
    "guards:",
    "  - kind: log",
    "    target: app.log",
    "    flags: { contains: FATAL, from-start: true }",
    "then: [./start.sh, --port, '8080']",
  ].join("\n");
  const x = await expandRecipe(text, "r.yaml", ["-i", "1s"], registry);
  assertEquals(x.argv, [
    ...["-i", "1s", "--timeout=2m", "tcp", "db:5432"],
    ...["--", "http", "http://localhost:8080/health", "--label=api", "--status=200"],
    ...["--header=A: 1", "--header=B: 2"],
    ...["--", "not", "file", "/tmp/lock"],
    ...["--", "exec"],
    ...["--", "test", "-f", "/tmp/x"],
    ...["--", "guard", "log", "app.log", "--contains=FATAL", "--from-start"],
    ...["--", "then", "./start.sh", "--port", "8080"],
  ]);
  const c = parseArgv(x.argv, registry, {});
  if (c.type !== "run") throw new Error(c.type);
  assertEquals(c.plan.options.intervalMs, 1000, "the command line's --interval wins");
  assertEquals(c.plan.options.timeoutMs, 120_000);
  assertEquals(c.plan.conditions.map((k) => k.name), [
    "tcp db:5432",
    "api",
    "not file /tmp/lock",
    "exec test -f /tmp/x",
    "log app.log",
  ]);
  assertEquals(c.plan.conditions[4]!.guard, true);
  assertEquals(c.plan.then, ["./start.sh", "--port", "8080"]);
});

Deno.test("expandRecipe() takes a condition's own attempt-timeout (or attempt_timeout)", async () => {
  const text = [
    "attempt-timeout: 10s",
    "conditions:",
    "  - kind: tcp",
    "    target: a:1",
    "    attempt-timeout: 2s",
    "  - kind: tcp",
    "    target: b:2",
    "    attempt_timeout: 500ms",
    "  - kind: tcp",
    "    target: c:3",
    "    flags: { attempt-timeout: 3 }",
    "  - kind: tcp",
    "    target: d:4",
  ].join("\n");
  const x = await expandRecipe(text, "r.yaml", [], registry);
  const c = parseArgv(x.argv, registry, {});
  if (c.type !== "run") throw new Error(c.type);
  assertEquals(
    [c.plan.options.attemptTimeoutMs, ...c.plan.conditions.map((k) => k.attemptTimeoutMs)],
    [10_000, 2000, 500, 3000, undefined],
  );
  await assertRecipeSchema((await import("yaml")).parse(text));
  assertStringIncludes(
    await recipeError("conditions:\n  - kind: tcp\n    target: a:1\n    attempt_timeout: {x: 1}"),
    "waitcmd: r.yaml:4: conditions[0]: attempt_timeout: expected a text",
  );
  assertStringIncludes(
    await recipeError("conditions:\n  - kind: tcp\n    target: a:1\n    attempt-timeout: 0s"),
    "waitcmd: r.yaml:4: condition 1 (tcp): --attempt-timeout: must be longer than 0",
  );
});

Deno.test("expandRecipe() reads JSON and adds the command line's conditions after the file's", async () => {
  const x = await expandRecipe(
    '{"conditions": [{"kind": "tcp", "target": "a:1"}]}',
    "r.json",
    ["--", "tcp", "b:2"],
    registry,
  );
  assertEquals(x.argv, ["tcp", "a:1", "--", "tcp", "b:2"]);
});

Deno.test("expandRecipe() errors name the file, the line and the condition", async (t) => {
  const rows: [string, string][] = [
    [
      "timout: 5s\nconditions: []",
      `waitcmd: r.yaml:1: unknown key "timout" (did you mean timeout?)`,
    ],
    [
      "conditions:\n  - kind: tcp\n    taget: a:1",
      `waitcmd: r.yaml:3: conditions[0]: unknown key "taget" (did you mean target?)`,
    ],
    ["a: [1, 2\nb: c", "waitcmd: r.yaml:2: not valid YAML or JSON: "],
    ["just some text", "waitcmd: r.yaml:1: expected a mapping of options and conditions"],
    [
      "conditions:\n  - kind: glob\n    target: '*.x'\n    flags:\n      min-count: many",
      `waitcmd: r.yaml:5: condition 1 (glob): --min-count: expected a whole number of at least 0, got "many"`,
    ],
    [
      "conditions:\n  - kind: tcp\n    target: a:1\n  - kind: tpc\n    target: b:2",
      `waitcmd: r.yaml:4: conditions[1]: unknown kind "tpc" (did you mean tcp?)`,
    ],
    [
      "interval: soon\nconditions: [{kind: tcp, target: 'a:1'}]",
      "waitcmd: r.yaml:1: --interval: expected a duration",
    ],
    [
      "conditions:\n  - kind: tcp\n    target: a:1\n    flags: {label: [1, {x: 2}]}",
      "waitcmd: r.yaml:4: conditions[0]: label: expected a text, a number, true/false or a list of them, got object",
    ],
    ["conditions: {kind: tcp}", "waitcmd: r.yaml:1: conditions: expected a list of conditions"],
  ];
  for (const [text, want] of rows) {
    await t.step(want, async () => assertStringIncludes(await recipeError(text), want));
  }
});

Deno.test("every example recipe in docs/ matches docs/recipe.schema.json and parses", async (t) => {
  const { parse } = await import("yaml");
  const dir = `${repoRootDir}/docs/examples`;
  let n = 0;
  for await (const e of Deno.readDir(dir)) {
    if (!/\.(ya?ml|json)$/.test(e.name)) continue;
    n++;
    await t.step(e.name, async () => {
      const text = await Deno.readTextFile(`${dir}/${e.name}`);
      await assertRecipeSchema(parse(text));
      assertEquals(await recipeError(text), "");
    });
  }
  assertEquals(n >= 3, true, "docs/examples holds the example recipes");
});

Deno.test("expandRecipe() nests any:/all: groups in place of a condition, with a label", async () => {
  const text = [
    "conditions:",
    "  - kind: tcp",
    "    target: db:5432",
    "  - any:",
    "      - kind: tcp",
    "        target: a:1",
    "      - all:",
    "          - kind: file",
    "            target: /x",
    "          - kind: tcp",
    "            target: b:2",
    "        label: pair",
    "    label: web",
  ].join("\n");
  const x = await expandRecipe(text, "r.yaml", [], registry);
  assertEquals(x.argv, [
    ...["tcp", "db:5432"],
    ...["--", "any", "[", "tcp", "a:1"],
    ...["--", "all", "[", "file", "/x"],
    ...["--", "tcp", "b:2", "]", "--label=pair", "]", "--label=web"],
  ]);
  const c = parseArgv(x.argv, registry, {});
  if (c.type !== "run") throw new Error("expected a run");
  assertEquals(c.plan.root.children.map((n) => n.type === "group" ? n.name : n.condition.name), [
    "tcp db:5432",
    "web",
  ]);
});

Deno.test("expandRecipe() locates a group's bad member and rejects then as one text", async () => {
  const member = await recipeError(
    ["conditions:", "  - any:", "      - kind: tcpp", "        target: a:1"].join("\n"),
  );
  assertStringIncludes(member, `r.yaml:3: conditions[0].any[0]: unknown kind "tcpp"`);
  const empty = await recipeError(["conditions:", "  - all: []"].join("\n"));
  assertStringIncludes(empty, "r.yaml:2: conditions[0]: all: expected a list of conditions");
  const guard = await recipeError(
    ["conditions:", "  - kind: tcp", "    target: a:1", "guards:", "  - any:", "      - kind: tcp"]
      .join("\n"),
  );
  assertStringIncludes(guard, "guards[0]: a guard is one condition, not a group");
  const then = await recipeError(
    ["conditions:", "  - kind: tcp", "    target: a:1", "then: npm test"].join("\n"),
  );
  assertStringIncludes(
    then,
    `r.yaml:4: then: expected a list of words, not one text: then: ["npm","test"]`,
  );
});

Deno.test("docs/recipe.schema.json names every global option a recipe takes", async () => {
  const schema = JSON.parse(await Deno.readTextFile(`${repoRootDir}/docs/recipe.schema.json`));
  const keys = Object.keys(schema.properties);
  const missing = GLOBAL_FLAGS.map((f) => f.name)
    .filter((n) => !["config", "explain"].includes(n) && !keys.includes(n));
  assertEquals(missing, []);
});

Deno.test("a recipe's backoff-factor is a number or a text of one, at least 1", async () => {
  const recipe = (factor: string) =>
    `backoff: exponential\nbackoff-factor: ${factor}\nconditions: [{kind: tcp, target: "a:1"}]\n`;
  const { parse } = await import("yaml");
  for (const ok of ["1.5", "'1.5'", "3", "1"]) {
    await assertRecipeSchema(parse(recipe(ok)));
    assertEquals(await recipeError(recipe(ok)), "");
  }
  const x = await expandRecipe(recipe("1.5"), "r.yaml", [], registry);
  assertEquals(parseArgv(x.argv, registry, {}).type, "run");
  for (const bad of ["0.5", "'x'", "-1"]) {
    let refused = false;
    await assertRecipeSchema(parse(recipe(bad))).catch(() => (refused = true));
    assertEquals(refused, true, `the schema refuses ${bad}`);
    assertStringIncludes(
      await recipeError(recipe(bad)),
      "backoff-factor: expected a number of at least 1 (like 1.5 or 2)",
    );
  }
});
