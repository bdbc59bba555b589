import { expandBraces, glob, MAX_ALTERNATIVES, segmentMatcher } from "./glob.ts";
import { assert, assertEquals, assertThrows } from "../../tests/_assert.ts";

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
  // A class does not match a leading dot, and parentheses are literal (no extglobs), as in bash
  // (docs/development.md, Libraries considered: a regex-compiling matcher got both wrong).
  assertEquals(m("[!a-z]*", [".x", "1x"]), ["1x"]);
  assertEquals(m("report(1).*", ["report(1).pdf", "report1.pdf"]), ["report(1).pdf"]);
  assertEquals(m("!(a)", ["!(a)", "b"]), ["!(a)"]);
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

Deno.test("expandBraces() stops past MAX_ALTERNATIVES instead of growing exponentially", () => {
  assertEquals(expandBraces("{a,b}".repeat(10)).length, MAX_ALTERNATIVES);
  const e = assertThrows(() => expandBraces("{a,b}".repeat(11)), RangeError);
  assertEquals(e.message, "{a,b} groups expand to more than 1024 patterns");
  // 2^40 alternatives: refused after the first 1024, at once.
  assertThrows(() => expandBraces("{a,b}".repeat(40)), RangeError);
});

Deno.test("segmentMatcher() takes ranges, literal ] and - in classes, and code points", () => {
  const m = (p: string, names: string[]) => names.filter(segmentMatcher(p));
  assertEquals(m("[a-c]x", ["ax", "bx", "dx"]), ["ax", "bx"]);
  assertEquals(m("[]a]", ["]", "a", "b"]), ["]", "a"]);
  assertEquals(m("[a-]", ["a", "-", "b"]), ["a", "-"]);
  assertEquals(m("[^0-9]*", ["x1", "1x"]), ["x1"]);
  assertEquals(m("?", ["é", "😀", "ab"]), ["é", "😀"]);
  assertEquals(m("a[", ["a[", "ab"]), ["a["]);
  assertEquals(m("**x", ["x", "ax", "xa"]), ["x", "ax"]);
  assertEquals(m("*a*b*c", ["abc", "aXbYc", "acb", "cba"]), ["abc", "aXbYc"]);
});

Deno.test("segmentMatcher() is linear on names that almost match many stars", () => {
  // A regular expression with one .* per * backtracks for minutes on this (docs/development.md).
  const match = segmentMatcher("*a".repeat(50) + "*b");
  const timeOf = (n: number) => {
    const name = "a".repeat(n);
    const t0 = performance.now();
    assertEquals(match(name), false);
    return performance.now() - t0;
  };
  timeOf(1000); // warm-up
  const small = timeOf(4_000);
  const big = timeOf(16_000);
  // 4x the name: about 4x the work; a polynomial path would be 16x or more.
  assert(big < Math.max(small * 10, 50), `${small.toFixed(1)} ms -> ${big.toFixed(1)} ms`);
});
