import { assert, assertEquals } from "../../tests/_assert.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { conditionOf, optionsOf, probeOf } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import type { GlobOptions } from "./mod.ts";

Deno.test("glob parse() rejects contradictions and bad counts", (t) => stepUsageErrors(t, "glob"));

Deno.test("glob parse() options: counts and their defaults", async (t) => {
  const rows: [string[], GlobOptions][] = [
    [["*.csv"], { pattern: "*.csv", absent: false, min: 1, max: undefined }],
    [["*.csv", "--min-count", "3"], { pattern: "*.csv", absent: false, min: 3, max: undefined }],
    [["*.csv", "--max-count", "2"], { pattern: "*.csv", absent: false, min: 0, max: 2 }],
    [["*.csv", "--min-count", "0"], { pattern: "*.csv", absent: false, min: 0, max: undefined }],
    [["*.csv", "--min-count", "2", "--max-count", "2"], {
      pattern: "*.csv",
      absent: false,
      min: 2,
      max: 2,
    }],
    [["/tmp/locks/*.lock", "--absent"], {
      pattern: "/tmp/locks/*.lock",
      absent: true,
      min: 1,
      max: undefined,
    }],
  ];
  for (const [flags, want] of rows) {
    await t.step(flags.join(" "), () => {
      assertEquals(optionsOf<GlobOptions>(["glob", ...flags]), want);
    });
  }
  const c = conditionOf(["glob", "build/**/*.{js,map}"]);
  assertEquals([c.name, c.target], ["glob build/**/*.{js,map}", "build/**/*.{js,map}"]);
});

Deno.test("glob check() counts matches against the bounds; watch is offered", () =>
  inTempDir("waitcmd-glob-")(async (dir) => {
    const signal = new AbortController().signal;
    const check = async (args: string[]) => checkOnce(await probeOf(["glob", ...args]), signal, 1);
    const p = `${dir}/*.csv`;
    assertEquals(await check([p]), { status: "pending", error: "no matches" });
    assertEquals(await check([p, "--absent"]), { status: "satisfied", detail: "no matches" });
    assertEquals(await check([p, "--max-count", "0"]), {
      status: "satisfied",
      detail: "no matches",
    });
    for (let i = 1; i <= 7; i++) await Deno.writeTextFile(`${dir}/${i}.csv`, "");
    const names = [1, 2, 3, 4, 5].map((i) => `${dir}/${i}.csv`).join(", ");
    assertEquals(await check([p, "--min-count", "8"]), {
      status: "pending",
      error: "7 matches, need at least 8",
    });
    assertEquals(await check([p, "--max-count", "6"]), {
      status: "pending",
      error: "7 matches, need at most 6",
    });
    assertEquals(await check([p, "--absent"]), {
      status: "pending",
      error: `7 matches: ${names}, ... (+2 more)`,
    });
    assertEquals(await check([p, "--min-count", "7", "--max-count", "7"]), {
      status: "satisfied",
      detail: `7 matches: ${names}, ... (+2 more)`,
    });
    assertEquals(await check([`${dir}/1.*`]), {
      status: "satisfied",
      detail: `1 match: ${dir}/1.csv`,
    });
    assert((await probeOf(["glob", p])).watch !== undefined, "glob conditions are event-driven");
  }));
