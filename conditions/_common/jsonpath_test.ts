import { assert, assertEquals } from "../../tests/_assert.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "./jsonpath.ts";
import { normalizePath } from "./jsonpath_path.ts";
import { evaluateJsonPath, jsonPathProblem, truthy } from "./jsonpath_lib.ts";

const DOC = {
  status: "ok",
  replicas: 3,
  count: "5",
  ready: true,
  empty: [],
  version: "1.2.3",
  labels: { "app.kubernetes.io/name": "web" },
  conditions: [
    { type: "Ready", status: "True" },
    { type: "Progressing", status: "False" },
  ],
  startedAt: "2026-01-02T03:04:05Z",
};

function parse(text: string): JsonPathExpr {
  return parseJsonPathExpr(text);
}

/** The usage problem of `text`: the grammar's (parse), else the library's (validate). */
async function problemOf(text: string): Promise<string | undefined> {
  let e: JsonPathExpr;
  try {
    e = parseJsonPathExpr(text);
  } catch (err) {
    return (err as Error).message;
  }
  return await jsonPathProblem(e);
}

Deno.test("parseJsonPathExpr() evaluates comparisons, bare paths and junctions", async (t) => {
  const rows: [string, boolean, string][] = [
    ['$.status == "ok"', true, '$.status == "ok" (got "ok")'],
    [".status == ok", true, '.status == "ok" (got "ok")'],
    ["{.status}=ok", true, '{.status} == "ok" (got "ok")'],
    ["$.status != ok", false, '$.status != "ok" (got "ok")'],
    ["$.replicas >= 3", true, "$.replicas >= 3 (got 3)"],
    ["$.replicas > 3", false, "$.replicas > 3 (got 3)"],
    ["$.replicas < 4", true, "$.replicas < 4 (got 3)"],
    ["$.replicas <= 2", false, "$.replicas <= 2 (got 3)"],
    ["$.count > 4", true, '$.count > 4 (got "5")'],
    ['$.replicas == "3"', true, '$.replicas == "3" (got 3)'],
    ["$.ready == true", true, "$.ready == true (got true)"],
    ["$.missing == null", false, "$.missing == null (got nothing)"],
    ["$.version == 1.2.3", true, '$.version == "1.2.3" (got "1.2.3")'],
    ['$.startedAt > "2026-01-01"', true, '$.startedAt > "2026-01-01" (got "2026-01-02T03:04:05Z")'],
    ["$.status =~ ^o", true, '$.status =~ /^o/ (got "ok")'],
    ["$.status =~ /^OK$/i", true, '$.status =~ /^OK$/i (got "ok")'],
    ['$.status =~ "^(ok|up)$"', true, '$.status =~ /^(ok|up)$/ (got "ok")'],
    ["$.status =~ ^(ok|up)$", true, '$.status =~ /^(ok|up)$/ (got "ok")'],
    ["$.ready", true, "$.ready (got true)"],
    ["$.empty", false, "$.empty (got [])"],
    ["$.missing", false, "$.missing (got nothing)"],
    [
      '$.conditions[?(@.type=="Ready")].status == True',
      true,
      '$.conditions[?(@.type=="Ready")].status == "True" (got "True")',
    ],
    [
      "$.conditions[*].status == False",
      true,
      '$.conditions[*].status == "False" (got "True", "False")',
    ],
    [
      "$.conditions[?(@.type=='Progressing')].status",
      false,
      "$.conditions[?(@.type=='Progressing')].status (got \"False\")",
    ],
    [
      ".labels.app\\.kubernetes\\.io/name == web",
      true,
      '.labels.app\\.kubernetes\\.io/name == "web" (got "web")',
    ],
    [
      "$.labels['app.kubernetes.io/name'] == web",
      true,
      '$.labels[\'app.kubernetes.io/name\'] == "web" (got "web")',
    ],
    ["$.replicas == 3 && $.ready", true, "$.replicas == 3 (got 3) && $.ready (got true)"],
    ["$.replicas == 4 && $.ready", false, "$.replicas == 4 (got 3)"],
    ["$.replicas == 4 || $.status == ok", true, '$.status == "ok" (got "ok")'],
    [
      "$.replicas == 4 || $.status == up",
      false,
      '$.replicas == 4 (got 3) || $.status == "up" (got "ok")',
    ],
    [
      "($.replicas == 4 || $.ready) && $.status == ok",
      true,
      '$.ready (got true) && $.status == "ok" (got "ok")',
    ],
    [
      "$.ready && ($.replicas == 4 || $.status == up)",
      false,
      '$.replicas == 4 (got 3) || $.status == "up" (got "ok")',
    ],
    [
      "($.replicas == 3 && $.ready) || $.empty",
      true,
      "$.replicas == 3 (got 3) && $.ready (got true)",
    ],
    ["$..status == False", true, '$..status == "False" (got "ok", "True", "False")'],
    ["$.conditions[0].type == Ready", true, '$.conditions[0].type == "Ready" (got "Ready")'],
    [
      "$.conditions[-1:].type == Progressing",
      true,
      '$.conditions[-1:].type == "Progressing" (got "Progressing")',
    ],
  ];
  for (const [text, ok, detail] of rows) {
    await t.step(text, async () => {
      const r = await evaluateJsonPath(parse(text), DOC);
      assertEquals({ ok: r.ok, detail: r.detail }, { ok, detail });
      assertEquals("value" in r, ok, "a value exactly when it holds");
    });
  }
});

Deno.test("parseJsonPathExpr() and jsonPathProblem() give the usage error for bad syntax", async (t) => {
  const rows: [string, string][] = [
    ["", 'expected an expression like $.status == "ok", got nothing'],
    ["status == ok", 'expected a path like $.status, .status or {.status}, got "status"'],
    ["$.a ==", "expected a value after $.a =="],
    ["$.a == && $.b", "expected a value after $.a =="],
    ["$.a[0", 'unbalanced "[" in "$.a[0"'],
    ["{.a", 'unbalanced "{" in "{.a"'],
    ["($.a == 1", 'unbalanced "(" at position 1'],
    ["$.a == 1)", 'unbalanced ")" at position 9'],
    ["$.a == 1 $.b", 'expected && or || at position 10, got "$.b"'],
    ["$.a =~ x(", "invalid regular expression /x(/: unterminated group"],
    ["$.a ! 1", "unknown operator at position 5; use ==, !=, >, >=, <, <= or =~"],
    ["$.a.", 'bad path "$.a.": a name is missing after "."'],
    [
      "$.a[abc]",
      'bad path "$.a[abc]": expected an index, a slice, a quoted name or a filter in brackets, got [abc]',
    ],
    ["$.a[]", 'bad path "$.a[]": empty brackets []'],
    ["$.a[?(@.b==)]", 'bad path "$.a[?(@.b==)]": bad filter (@.b==): it ends with an operator'],
    [
      "$.a[?(@.b ~ 1)]",
      'bad path "$.a[?(@.b ~ 1)]": bad filter (@.b ~ 1): expected an operator at "~ 1"',
    ],
    [
      "$.a[?(foo)]",
      'bad path "$.a[?(foo)]": bad filter (foo): expected @.name, a number, a quoted text, true, false or null at "foo"',
    ],
    ['$.a == "open', "unterminated text starting at position 8"],
    ["$.a =~ /x", "unterminated regular expression at position 8"],
    ["$.a && ", 'expected a path like $.status after "$.a && "'],
  ];
  for (const [text, message] of rows) {
    await t.step(JSON.stringify(text), async () => {
      assertEquals(await problemOf(text), message);
    });
  }
});

Deno.test("parseJsonPathExpr() keeps the source and accepts filters with && inside", async () => {
  const e = parse('$.conditions[?(@.type == "Ready" && @.status == "True")].type == Ready');
  assertEquals(e.source, '$.conditions[?(@.type == "Ready" && @.status == "True")].type == Ready');
  assertEquals(await jsonPathProblem(e), undefined);
  assertEquals((await evaluateJsonPath(e, DOC)).ok, true);
});

Deno.test("evaluate() of a non-object document compares the root", async () => {
  assertEquals(await evaluateJsonPath(parse("$ == ok"), "ok"), {
    ok: true,
    detail: '$ == "ok" (got "ok")',
    value: "ok",
  });
  assertEquals(await evaluateJsonPath(parse("$[1] == 2"), [1, 2]), {
    ok: true,
    detail: "$[1] == 2 (got 2)",
    value: 2,
  });
  assertEquals((await evaluateJsonPath(parse("$.a"), null)).ok, false);
});

Deno.test("evaluate() abbreviates many and long values", async () => {
  const doc = { xs: [1, 2, 3, 4, 5], long: "y".repeat(100) };
  assertEquals(
    (await evaluateJsonPath(parse("$.xs[*] == 9"), doc)).detail,
    "$.xs[*] == 9 (got 1, 2, 3, … (5 values))",
  );
  const d = (await evaluateJsonPath(parse("$.long == x"), doc)).detail;
  assert(d.length < 100, d);
});

Deno.test("normalizePath() rewrites kubectl forms and escaped names for jsonpath-plus", () => {
  assertEquals(normalizePath(".a.b"), "$.a.b");
  assertEquals(normalizePath("{.a.b[0]}"), "$.a.b[0]");
  assertEquals(normalizePath("[0].a"), "$[0].a");
  assertEquals(normalizePath("$.a\\.b.c"), "$['a.b'].c");
  assertEquals(normalizePath("$..name"), "$..name");
  assertEquals(normalizePath("$.*"), "$.*");
});

Deno.test("truthy() treats false-like values as false", () => {
  for (const v of [null, false, 0, "", "false", "False", [], {}]) {
    assertEquals(truthy(v), false, JSON.stringify(v));
  }
  for (const v of [true, 1, "x", "True", [0], { a: 1 }]) {
    assertEquals(truthy(v), true, JSON.stringify(v));
  }
});

Deno.test("parseJsonPathExpr() does not load jsonpath-plus", async () => {
  const src = await Deno.readTextFile(new URL("./jsonpath.ts", import.meta.url));
  const staticImports = src.split("\n").filter((l) => /^import\s/.test(l));
  assertEquals(staticImports.filter((l) => l.includes("jsonpath-plus")), []);
});

Deno.test("jsonPathProblem() accepts the filters and scripts the library evaluates", async () => {
  for (
    const text of [
      '$.a[?(@.b == "x" && (@.c > 1 || !@.d))]',
      "$.a[?(@.name.match(/^w/))]",
      "$.a[(@.length-1)]",
      "$.a[?(@property == 'b')]",
      "$.a[?(@.t == $.x)] == 1",
      "$.a[?(@.n === null || @.n === undefined)]",
    ]
  ) {
    assertEquals(await jsonPathProblem(parse(text)), undefined, text);
  }
  assertEquals(
    await jsonPathProblem(parse("$.a[?(@.b = 1)]")),
    'bad path "$.a[?(@.b = 1)]": bad filter (@.b = 1): expected an operator at "= 1"',
  );
  assertEquals(
    (await evaluateJsonPath(parse("$.xs[(@.length-1)] == 3"), { xs: [1, 2, 3] })).ok,
    true,
  );
});

Deno.test("evaluateJsonPath() gives the value that satisfied it, for captures", async () => {
  const doc = { items: [{ n: 1 }, { n: 5 }], name: "web", tags: ["a"] };
  assertEquals((await evaluateJsonPath(parse("$.items[*].n > 2"), doc)).value, 5);
  assertEquals((await evaluateJsonPath(parse("$.name"), doc)).value, "web");
  assertEquals((await evaluateJsonPath(parse("$.tags"), doc)).value, ["a"]);
  assertEquals((await evaluateJsonPath(parse("$.name == web && $.items[0].n == 1"), doc)).value, 1);
  assertEquals((await evaluateJsonPath(parse("$.name =~ /^w/"), doc)).value, "web");
});
