import { assertEquals } from "../../tests/_assert.ts";
import { expandBraces, glob, segmentMatcher } from "./glob.ts";

Deno.test("expandBraces() expands alternatives, nested and escaped", () => {
  assertEquals(expandBraces("a.{js,map}"), ["a.js", "a.map"]);
  assertEquals(expandBraces("{a,b{1,2}}/x"), ["a/x", "b1/x", "b2/x"]);
  assertEquals(expandBraces("{single}"), ["{single}"]);
  assertEquals(expandBraces("\\{a,b}"), ["\\{a,b}"]);
});

Deno.test("segmentMatcher() follows bash rules for *, ?, classes and dot files", () => {
  const m = (p: string, names: string[]) => names.filter(segmentMatcher(p));
  assertEquals(m("*.log", ["a.log", ".b.log", "c.txt", "log"]), ["a.log"]);
  assertEquals(m(".*", [".b", "a"]), [".b"]);
  assertEquals(m("?.x", ["a.x", "ab.x"]), ["a.x"]);
  assertEquals(m("[ab]*", ["a1", "b2", "c3"]), ["a1", "b2"]);
  assertEquals(m("[!ab]*", ["a1", "c3"]), ["c3"]);
  assertEquals(m("a\\*", ["a*", "ab"]), ["a*"]);
});

Deno.test("glob() walks ** without entering dot directories", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const f of ["x.ts", "a/y.ts", "a/b/z.ts", ".git/h.ts", "a/n.md"]) {
      await Deno.mkdir(`${dir}/${f}`.replace(/\/[^/]*$/, ""), { recursive: true });
      await Deno.writeTextFile(`${dir}/${f}`, "");
    }
    assertEquals(await glob(`${dir}/**/*.ts`), [`${dir}/a/b/z.ts`, `${dir}/a/y.ts`, `${dir}/x.ts`]);
    assertEquals(await glob("a/*", { cwd: dir }), ["a/b", "a/n.md", "a/y.ts"]);
    assertEquals(await glob(`${dir}/a/**`), [
      `${dir}/a/b`,
      `${dir}/a/b/z.ts`,
      `${dir}/a/n.md`,
      `${dir}/a/y.ts`,
    ]);
    assertEquals(await glob(`${dir}/missing/*.ts`), []);
    assertEquals(await glob(`${dir}/x.ts`), [`${dir}/x.ts`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
