/**
 * Groups and run limits through the CLI (docs/contract.md §1, §4):
 * `any [ … ]` / `all [ … ]` nested, in recipes and in --explain;
 * `--max-attempts` and `--timeout-exit-code` with their variables and
 * recipe keys. Targets are local (TCP listeners and files made here).
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import {
  assertUsageErrors,
  cliTest,
  expectJson,
  runCli,
  runJson,
  timing,
  usageErrorLine,
  writeRecipe,
} from "./_cli.ts";
import { acceptingPort, closedPort, inTempDir } from "../services/_util.ts";

const withDir = inTempDir("waitcmd-groups-");

cliTest(
  "any [ … ]: one member that holds satisfies the group; the report lists leaves with group",
  async () => {
    const up = acceptingPort();
    const down = closedPort();
    try {
      const args = [
        ...["-t", "10s", "tcp", `127.0.0.1:${up.port}`],
        ...["--", "any", "[", "tcp", `127.0.0.1:${down}`],
        ...["--", "tcp", `127.0.0.1:${up.port}`, "--label", "b", "]"],
      ];
      const r = await expectJson(args, { code: 0, status: "satisfied" });
      assertEquals(
        r.json.conditions.map((c) => [c.name, (c as { group?: string }).group, c.satisfied]),
        [
          [`tcp 127.0.0.1:${up.port}`, undefined, true],
          [`tcp 127.0.0.1:${down}`, "2.any", false],
          ["b", "2.any", true],
        ],
      );
      const text = await runCli(args);
      assertEquals(text.code, 0);
      assertMatch(text.stderr, new RegExp(`\\[ok\\] any\\[tcp 127\\.0\\.0\\.1:${down}, b\\] \\(`));
      assertStringIncludes(text.stderr, "waitcmd: satisfied in");
    } finally {
      up.close();
    }
  },
);

cliTest(
  "all [ … ] nested in any [ … ]: pending until its members hold, then satisfied",
  () =>
    withDir(async (dir) => {
      const r = await expectJson(
        [
          ...timing("20s", "200ms"),
          ...["any", "[", "file", `${dir}/never`],
          ...["--", "all", "[", "file", `${dir}/a`],
          ...["--", "file", `${dir}/b`, "]", "]"],
        ],
        { code: 0, status: "satisfied" },
        {
          started: async () => {
            await new Promise((res) => setTimeout(res, 600));
            await Deno.writeTextFile(`${dir}/a`, "");
            await new Promise((res) => setTimeout(res, 600));
            await Deno.writeTextFile(`${dir}/b`, "");
          },
        },
      );
      const groups = r.json.conditions.map((c) => (c as { group?: string }).group);
      assertEquals(groups, ["1.any", "1.any.2.all", "1.any.2.all"]);
      assert(r.json.conditions[2]!.attempts >= 1);
    }),
);

cliTest(
  "a group that never holds times out; the summary names the group and its members",
  async () => {
    const a = closedPort();
    const b = closedPort();
    const args = [
      ...timing("1s", "200ms"),
      ...["any", "[", "tcp", `127.0.0.1:${a}`],
      ...["--", "tcp", `127.0.0.1:${b}`, "]", "--label", "web"],
    ];
    const r = await runCli(args);
    assertEquals(r.code, 1);
    const summary = r.stderr.trimEnd().split("\n").filter((l) => l.startsWith("waitcmd: timed"));
    assertEquals(summary.length, 2);
    assertStringIncludes(summary[0]!, `not satisfied: web: tcp 127.0.0.1:${a}: connection refused`);
    const j = await expectJson(args, { code: 1, status: "timeout" });
    assertEquals(j.json.conditions.map((c) => (c as { group?: string }).group), ["1.any", "1.any"]);
  },
);

cliTest("a guard inside a group ends the whole run with exit 3", () =>
  withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/boom`, "");
    const r = await runCli([
      ...["-t", "10s", "tcp", `127.0.0.1:${closedPort()}`],
      ...["--", "all", "[", "guard", "file", `${dir}/boom`],
      ...["--", "tcp", `127.0.0.1:${closedPort()}`, "]"],
    ]);
    assertEquals(r.code, 3);
    assertStringIncludes(r.stderr, `waitcmd: guard file ${dir}/boom matched`);
  }));

cliTest("groups: malformed groups are usage errors, found before anything is probed", async () => {
  const rows: [string[], string][] = [
    [["any", "[", "]"], "group 1.any: empty group"],
    [["all", "[", "tcp", "a:1"], `missing "]"`],
    [["not", "any", "[", "tcp", "a:1", "]"], "not any [ A -- B ] is all [ not A -- not B ]"],
    [["any", "[", "--mode", "all", "tcp", "a:1", "]"], "--mode applies to the whole run"],
    [["tcp", "a:1", "]"], `unexpected "]": no group is open`],
  ];
  await assertUsageErrors(rows);
});

cliTest(
  "groups in a recipe, and --explain showing the tree, labels, flags and then quoted",
  () =>
    withDir(async (dir) => {
      const recipe = await writeRecipe(dir, [
        "timeout: 30s",
        "conditions:",
        "  - kind: tcp",
        "    target: db:5432",
        "    label: db",
        "  - any:",
        "      - kind: http",
        "        target: http://a/health",
        "        flags: { status: 200 }",
        "      - kind: http",
        "        target: http://b/health",
        "    label: web",
        "then: [sh, -c, echo stack is up]",
      ]);
      const r = await runCli(["--explain", "-f", recipe]);
      assertEquals(r.code, 0);
      assertEquals(r.stdout.split("\n").slice(0, 6), [
        // A group counts once, as the summary counts it.
        "waitcmd: would wait for 2 conditions (timeout 30s, interval 2s)",
        "  1. db: tcp db:5432",
        "  group 2.any: web (one member must hold)",
        "    2. http http://a/health --status=200",
        "    3. http http://b/health",
        "then: sh -c 'echo stack is up'",
      ]);
      const j = JSON.parse((await runCli(["--explain", "-o", "json", "-f", recipe])).stdout);
      assertEquals(j.plan[1].name, "web");
      assertEquals(j.conditions[1].group, "2.any");
      assertEquals(j.conditions[1].flags, ["--status=200"]);
      assertEquals(j.then, ["sh", "-c", "echo stack is up"]);
    }),
);

cliTest(
  "--max-attempts: a condition that fails its Nth attempt ends the run, exhausted (exit 1)",
  async () => {
    const port = closedPort();
    const args = ["-t", "30s", "-i", "100ms", "--max-attempts", "3", "tcp", `127.0.0.1:${port}`];
    const r = await runCli(args);
    assertEquals(r.code, 1);
    assertStringIncludes(
      r.stderr,
      `waitcmd: gave up on tcp 127.0.0.1:${port} after 3 attempts: connection refused\n`,
    );
    const j = await runJson(args);
    assertEquals([j.code, j.json.status, j.json.conditions[0]!.attempts], [1, "exhausted", 3]);
    const env = await runJson(["-i", "100ms", "tcp", `127.0.0.1:${port}`], {
      env: { WAITCMD_MAX_ATTEMPTS: "2", WAITCMD_TIMEOUT_EXIT_CODE: "124" },
    });
    assertEquals([env.code, env.json.status, env.json.conditions[0]!.attempts], [
      124,
      "exhausted",
      2,
    ]);
  },
);

cliTest(
  "--max-attempts in mode any waits for every condition to give up; a success wins",
  () =>
    withDir(async (dir) => {
      await expectJson(
        [
          ...timing("30s", "200ms"),
          ...["--mode", "any", "--max-attempts", "2", "tcp", `127.0.0.1:${closedPort()}`],
          ...["--", "file", `${dir}/late`],
        ],
        { code: 0, status: "satisfied" },
        {
          started: async () => {
            await new Promise((res) => setTimeout(res, 150));
            await Deno.writeTextFile(`${dir}/late`, "");
          },
        },
      );
    }),
);

cliTest(
  "--timeout-exit-code replaces exit 1 of a timeout; recipes set both limits",
  () =>
    withDir(async (dir) => {
      const port = closedPort();
      const t = await runCli([
        ...["-t", "300ms", "--timeout-exit-code", "124", "tcp", `127.0.0.1:${port}`],
      ]);
      assertEquals(t.code, 124);
      assertStringIncludes(t.stderr, "waitcmd: timed out after 300ms");
      const recipe = await writeRecipe(
        dir,
        `interval: 100ms\nmax-attempts: 2\ntimeout-exit-code: 75\nconditions:\n  - kind: tcp\n    target: 127.0.0.1:${port}\n`,
        "r.yaml",
      );
      await expectJson(["-f", recipe], { code: 75, status: "exhausted" });
      const rows: [string[], Record<string, string>, string][] = [
        [["--max-attempts", "0", "tcp", "a:1"], {}, "--max-attempts: expected a whole number"],
        [["--timeout-exit-code", "200", "tcp", "a:1"], {}, "from 1 to 125"],
        [
          ["--timeout-exit-code", "2", "tcp", "a:1"],
          {},
          "--timeout-exit-code: 2 is the exit code of a usage error; expected a whole number from 1 to 125 other than 2 and 3",
        ],
        [
          ["--timeout-exit-code=3", "tcp", "a:1"],
          {},
          "--timeout-exit-code: 3 is the exit code of a fatal run",
        ],
        [["tcp", "a:1"], { WAITCMD_TIMEOUT_EXIT_CODE: "3" }, "3 is the exit code of a fatal run"],
        [["tcp", "a:1"], { WAITCMD_TIMEOUT_EXIT_CODE: "abc" }, "WAITCMD_TIMEOUT_EXIT_CODE"],
        [["tcp", "a:1"], { WAITCMD_MAX_ATTEMPTS: "-1" }, "WAITCMD_MAX_ATTEMPTS"],
      ];
      for (const [args, env, want] of rows) {
        assertStringIncludes(usageErrorLine(await runCli(args, { env })), want);
      }
    }),
);

/** `any [ file <dir>/1 -- … -- file <dir>/n ]`: a group of n members that never hold. */
function wideGroup(dir: string, n: number): string[] {
  const words = ["any", "["];
  for (let i = 1; i <= n; i++) words.push(...(i > 1 ? ["--"] : []), "file", `${dir}/${i}`);
  return [...words, "]"];
}

/** `any [ file <dir>/1 -- all [ file <dir>/2 -- any [ … ] ] ]`: groups nested `depth` deep. */
function deepGroup(dir: string, depth: number): string[] {
  const words: string[] = [];
  for (let i = 1; i <= depth; i++) {
    words.push(i % 2 ? "any" : "all", "[", "file", `${dir}/${i}`, "--");
  }
  words.push("file", `${dir}/last`);
  for (let i = 1; i <= depth; i++) words.push("]");
  return words;
}

cliTest(
  "a wide or deep group: the summary, --explain and the report grow linearly (a group's name is bounded, not its members' names in full on every member's line)",
  () =>
    withDir(async (dir) => {
      const sizes = async (args: string[]) => {
        const text = await runCli(["-q", "-t", "300ms", ...args]);
        assertEquals(text.code, 1, text.stderr.slice(0, 500));
        const explain = await runCli(["--explain", ...args]);
        assertEquals(explain.code, 0, explain.stderr);
        const json = await runCli(["-o", "json", "-t", "300ms", ...args]);
        assertEquals(json.code, 1, json.stderr);
        const longest = (out: string) => Math.max(...out.split("\n").map((l) => l.length));
        return {
          text: text.stderr.length,
          explain: explain.stdout.length,
          json: json.stdout.length,
          longest: Math.max(longest(explain.stdout), longest(json.stdout)),
        };
      };
      // Four times the members: about four times the output (quadratic: sixteen).
      const [s, b] = [await sizes(wideGroup(dir, 500)), await sizes(wideGroup(dir, 2000))];
      for (const k of ["text", "explain", "json"] as const) {
        assert(b[k] < s[k] * 5, `${k}: ${s[k]} bytes, then ${b[k]} bytes for four times as many`);
      }
      // Four times as deep: the summary four times larger; --explain's lines are indented by
      // depth, and they and the report name a group's path (docs/contract.md §1), but no line
      // holds the names of every group below it.
      const [sd, bd] = [await sizes(deepGroup(dir, 20)), await sizes(deepGroup(dir, 80))];
      assert(bd.text < sd.text * 5, `${sd.text} bytes, then ${bd.text} bytes four times as deep`);
      assert(bd.longest < 1000, `an --explain or report line of ${bd.longest} characters`);
      const one = await runCli(["-q", "-t", "300ms", ...wideGroup(dir, 2000)]);
      assertStringIncludes(one.stderr, `not satisfied: any[file ${dir}/1`);
      assertStringIncludes(one.stderr, " more]: file ");
    }),
);

/** `any [ any [ … file /x … ] ]`: `depth` groups, each the only member of the one around it. */
function chain(depth: number): string[] {
  return [...Array(depth).fill(["any", "["]).flat(), "file", "/x", ...Array(depth).fill("]")];
}

/** A recipe of `depth` groups in flow style, one inside the other. */
function chainRecipe(depth: number): string {
  return `conditions: ${"[{any: ".repeat(depth)}[{kind: file, target: /x}]${"}]".repeat(depth)}\n`;
}

cliTest(
  "groups nest at most 100 deep: deeper is one usage-error line (exit 2), on the command line and in a recipe",
  () =>
    withDir(async (dir) => {
      const deep = await runCli(["--explain", ...chain(100)]);
      assertEquals([deep.code, deep.stderr], [0, ""]);
      const limit = "groups nest at most 100 deep";
      for (const depth of [101, 3000]) {
        const line = usageErrorLine(await runCli(["--explain", ...chain(depth)]));
        assertStringIncludes(line, `waitcmd: group at depth 101: ${limit}`);
      }
      const ok = await writeRecipe(dir, chainRecipe(100), "ok.yaml");
      assertEquals((await runCli(["--explain", "-f", ok])).code, 0);
      for (const depth of [101, 450, 3000]) {
        const file = await writeRecipe(dir, chainRecipe(depth), `deep${depth}.yaml`);
        const line = usageErrorLine(await runCli(["--explain", "-f", file]));
        assertMatch(line, new RegExp(`^waitcmd: ${file}(:1)?: .*${limit}`));
      }
    }),
);

cliTest(
  "--timeout-exit-code 2 or 3 in a recipe is a usage error: a timeout never reads as a usage error or a fatal run",
  () =>
    withDir(async (dir) => {
      const recipe = await writeRecipe(
        dir,
        "timeout-exit-code: 2\nconditions:\n  - kind: tcp\n    target: a:1\n",
        "r.yaml",
      );
      assertStringIncludes(
        usageErrorLine(await runCli(["-f", recipe])),
        "2 is the exit code of a usage error",
      );
    }),
);
