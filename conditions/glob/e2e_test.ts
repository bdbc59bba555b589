import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { usageRows } from "../../tests/_suite.ts";
import {
  assertKindUsageErrors,
  assertOutcome,
  expectJson,
  runLate,
  timing,
} from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/glob/_suite.ts). */
const USAGE = await usageRows("glob");

async function tree(files: string[]): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-glob-" });
  for (const f of files) {
    await Deno.mkdir(`${dir}/${f}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(`${dir}/${f}`, "x");
  }
  return dir;
}

Deno.test("glob matches ** at any depth, braces and classes", async () => {
  const dir = await tree([
    "a.js",
    "src/b.js",
    "src/deep/c.map",
    "src/deep/d.txt",
    ".hidden/e.js",
    "src/.f.js",
  ]);
  try {
    const r = await expectJson([
      ...["--timeout", "5s", "glob", `${dir}/**/*.{js,map}`, "--min-count", "3"],
    ], { code: 0 });
    // Like bash globstar: dot files and dot directories are not matched by wildcards.
    assertEquals(
      r.json.conditions[0]!.detail,
      `3 matches: ${dir}/a.js, ${dir}/src/b.js, ${dir}/src/deep/c.map`,
    );
    await expectJson([
      ...["--timeout", "5s", "glob", `${dir}/src/deep/[cd].*`, "--min-count", "2"],
      ...["--max-count", "2"],
    ], { code: 0 });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("glob waits for enough matches, then times out with the count", async () => {
  const dir = await tree(["out/1.csv"]);
  try {
    // The second file comes once an attempt has seen one (not after a guessed delay: a busy
    // machine may start waitcmd later than that).
    const r = await runLate(
      [...timing("10s", "100ms"), "glob", `${dir}/out/*.csv`, "--min-count", "2"],
      () => Deno.writeTextFile(`${dir}/out/2.csv`, "x"),
    );
    assertOutcome(r, { code: 0, error: "1 match, need at least 2" });
    await expectJson([
      ...timing("300ms", "100ms"),
      ...["glob", `${dir}/out/*.csv`, "--max-count", "1"],
    ], { code: 1, error: "2 matches, need at most 1" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("glob --absent waits until nothing matches", async () => {
  const dir = await tree(["locks/a.lock"]);
  try {
    const r = await runLate(
      [...timing("10s", "100ms"), "glob", `${dir}/locks/*.lock`, "--absent"],
      () => Deno.remove(`${dir}/locks/a.lock`),
    );
    assertOutcome(r, { code: 0, detail: "no matches" });
    assertStringIncludes(r.report.conditions[0]!.last_error, "1 match: ");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("glob validates flags", () => assertKindUsageErrors("glob", USAGE));
