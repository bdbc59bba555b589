import { assert, assertEquals } from "../tests/_assert.ts";
import { commonJsExports } from "./commonjs.ts";
import { Pacer, Stopped } from "./pace.ts";
import { fromPieces, PIECE_ITEMS, toPieces } from "./pieces.ts";
import { documentsOf, DUPLICATE_KEY, INLINE_YAML_MAX, lineAt, readYaml } from "./yaml.ts";

const yaml = commonJsExports(await import("yaml"));

/** A recipe of `n` conditions, one a line from line 2. */
function recipe(n: number): string {
  const lines = ["conditions:"];
  for (let i = 0; i < n; i++) lines.push(`  - {kind: tcp, target: "h${i}:1", flags: {x: .inf}}`);
  return lines.join("\n") + "\n";
}

Deno.test("readYaml: a long text read in the worker gives what the inline reader gives", async () => {
  const text = recipe(4_000);
  assert(text.length > INLINE_YAML_MAX);
  const opts = { all: false, uniqueKeys: true, lines: true };
  const inWorker = await readYaml(text, opts);
  // As JSON: the inline line trees have no prototype, the worker's plain objects do.
  assertEquals(JSON.stringify(inWorker), JSON.stringify(documentsOf(yaml, text, opts)));
  const doc = inWorker[0]!;
  assertEquals(lineAt(doc.lines, ["conditions", 0]), 2);
  assertEquals(lineAt(doc.lines, ["conditions", 3_999, "target"]), 4_001);
  assertEquals(lineAt(doc.lines, ["conditions", 3_999, "constructor"]), undefined);
  const value = doc.value as { conditions: { flags: { x: number } }[] };
  assertEquals(value.conditions[17]!.flags.x, Infinity);
});

Deno.test("readYaml: errors and values without a use keep their lines and reasons", async () => {
  const long = "# " + "x".repeat(INLINE_YAML_MAX) + "\n";
  const [bad] = await readYaml(long + "a: [1, 2\n", { all: false });
  assertEquals(bad!.error?.line, 3);
  const bomb =
    'a: &a ["x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n' +
    "d: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n";
  const [b] = await readYaml(long + bomb, { all: false });
  assertEquals(b!.valueError, "its aliases expand too far (an alias bomb?)");
  const docs = await readYaml(long + "a: 1\n---\nb: 2\n", { all: true });
  assertEquals(docs.map((d) => [d.line, d.value]), [[2, { a: 1 }], [3, { b: 2 }]]);
});

Deno.test("documentsOf: a repeated key is refused as the package refused it, at the first in the text", () => {
  /** The first error of each document, as the readers show it: its message's first line. */
  const errors = (text: string, all: boolean, uniqueKeys?: boolean) =>
    documentsOf(yaml, text, { all, uniqueKeys }).map((d) =>
      d.error &&
      [d.error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, ""), d.error.line]
    );
  for (const all of [false, true]) {
    const dup = (line: number) => [[DUPLICATE_KEY, line]];
    assertEquals(errors("a: 1\nb: 2\na: 3\n", all), dup(3));
    // The inner mapping's repeat comes first in the text: reported first, as the package did.
    assertEquals(errors("a:\n  x: 1\n  x: 2\nb: 1\nb: 2\n", all), dup(3));
    assertEquals(errors("- {a: 1, a: 2}\n", all), dup(1));
    // Scalars of the same value are equal (`~` and `null`); 1 and '1', or two NaNs, are not.
    assertEquals(errors("~: 1\nnull: 2\n", all), dup(2));
    assertEquals(errors("a: 1\n1: 2\n'1': 3\n.nan: 4\n.nan: 5\n", all), [undefined]);
    // Collections as keys are equal only as the same node: never in a text.
    assertEquals(errors("? [a]\n: 1\n? [a]\n: 2\n", all), [undefined]);
    // A syntax error before the repeat is the first; a repeat before a syntax error is.
    assertEquals(errors("a: 1\nb: [\na: 2\n", all)[0]![1], 3);
    assertEquals(errors("a: 1\na: 2\nb: [\n", all), dup(2));
    // Without uniqueKeys: false, keys must differ (the package's default, manifests).
    assertEquals(errors("a: 1\na: 2\n", all, false), [undefined]);
  }
  assertEquals(errors("a: 1\n---\nb: 1\nb: 2\n", true), [undefined, [DUPLICATE_KEY, 4]]);
});

Deno.test("readYaml: an aborted signal terminates the worker and rejects with Stopped", async () => {
  const ctl = new AbortController();
  const reading = readYaml(recipe(30_000), { all: false, lines: true }, ctl.signal);
  setTimeout(() => ctl.abort("SIGTERM"), 20);
  const e = await reading.then(() => undefined, (e) => e);
  assert(e instanceof Stopped, String(e));
  assertEquals(e.reason, "SIGTERM");
});

Deno.test("pieces: large arrays and objects cross in pieces and come back equal", async () => {
  const map: Record<string, unknown> = {};
  for (let i = 0; i < PIECE_ITEMS * 3; i++) map[`k${i}`] = [i, -Infinity, NaN, { deep: [i] }];
  Object.defineProperty(map, "__proto__", { value: 5, enumerable: true });
  const value = {
    list: Array.from({ length: PIECE_ITEMS * 5 + 3 }, (_, i) => ({ i, s: `${i}` })),
    map,
    nested: [[Array.from({ length: PIECE_ITEMS + 1 }, (_, i) => i)]],
  };
  const pieces = toPieces(value);
  assert(pieces.pieces.length > 8, "cut into pieces");
  const back = await fromPieces(pieces, new Pacer()) as typeof value;
  assertEquals(back.list, value.list);
  assertEquals(back.nested, value.nested);
  assertEquals(Object.keys(back.map), Object.keys(map));
  assertEquals(Object.getOwnPropertyDescriptor(back.map, "__proto__")?.value, 5);
  assertEquals(Object.getPrototypeOf(back.map), Object.prototype);
  assertEquals((back.map.k7 as unknown[]).slice(0, 2), [7, -Infinity]);
  assert(Number.isNaN((back.map.k7 as unknown[])[2]));
});
