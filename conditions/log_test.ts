import { assert, assertEquals } from "../tests/_assert.ts";
import { UsageError } from "../engine/errors.ts";
import { parseArgv, type Plan } from "../engine/grammar.ts";
import { registry } from "./mod.ts";

/** The usage error line `waitcmd ARGS` would print, or "" when the arguments parse. */
function usageError(args: string[]): string {
  try {
    parseArgv(args, registry);
    return "";
  } catch (e) {
    if (e instanceof UsageError) return e.format();
    throw e;
  }
}

function plan(args: string[]): Plan {
  const c = parseArgv(args, registry);
  if (c.type !== "run") throw new Error(`expected a run, got ${c.type}`);
  return c.plan;
}

Deno.test("log parse() rejects what cannot match", async (t) => {
  const see = " (see: waitcmd help log)";
  const rows: [string[], string][] = [
    [["log", "a.log"], "condition 1 (log): expected --contains TEXT or --matches REGEX (or both)"],
    [
      ["log", "a.log", "--exclude", "x"],
      "condition 1 (log): expected --contains TEXT or --matches REGEX (or both)",
    ],
    [["log", "", "--contains", "x"], "condition 1 (log): expected a path, got an empty string"],
    [
      ["log", "a.log", "--contains", ""],
      "condition 1 (log): --contains: expected a text, got an empty string",
    ],
    [
      ["log", "a.log", "--contains", "a\nb"],
      "condition 1 (log): --contains: cannot contain a line break: lines are matched one at a time",
    ],
    [
      ["log", "a.log", "--contains", "a", "--exclude", "b\r\n"],
      "condition 1 (log): --exclude: cannot contain a line break: lines are matched one at a time",
    ],
    [
      ["log", "a.log", "--matches", ""],
      "condition 1 (log): --matches: expected a regular expression, got an empty string",
    ],
    [
      ["log", "a.log", "--matches", "(a"],
      "condition 1 (log): --matches: invalid regular expression: unterminated group",
    ],
    [
      ["log", "a.log", "--contains", "x", "--from-start", "--tail", "5"],
      "condition 1 (log): --tail: cannot be combined with --from-start",
    ],
    [
      ["log", "a.log", "--contains", "x", "--tail", "-1"],
      `condition 1 (log): --tail: expected a whole number of at least 0, got "-1"`,
    ],
    [
      ["log", "a.log", "--contains", "x", "--min-matches", "0"],
      `condition 1 (log): --min-matches: expected a whole number of at least 1, got "0"`,
    ],
  ];
  for (const [args, message] of rows) {
    await t.step(args.join(" "), () => assertEquals(usageError(args), `waitcmd: ${message}${see}`));
  }
});

Deno.test("log parse() accepts every flag and names the condition by its path", () => {
  const p = plan([
    "log",
    "/var/log/app.log",
    "--contains",
    "job",
    "--matches",
    "done in \\d+ms",
    "--exclude",
    "dry-run",
    "--exclude",
    "test",
    "--tail",
    "50",
    "--min-matches",
    "3",
  ]);
  const c = p.conditions[0]!;
  assertEquals([c.name, c.target], ["log /var/log/app.log", "/var/log/app.log"]);
  assert(c.probe.watch !== undefined, "log conditions are event-driven");
  c.probe.close?.();
});

Deno.test("log check() reports progress as n/N and succeeds with the last line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-log-" });
  const path = `${dir}/app.log`;
  try {
    await Deno.writeTextFile(path, "job 1 done\nother\n");
    const p = plan(["log", path, "--from-start", "--contains", "done", "--min-matches", "2"]);
    const probe = p.conditions[0]!.probe;
    const signal = new AbortController().signal;
    try {
      assertEquals(await probe.check({ signal, attempt: 1 }), {
        status: "pending",
        error: "1/2 matches",
      });
      await Deno.writeTextFile(path, "job 2 done\r\n", { append: true });
      assertEquals(await probe.check({ signal, attempt: 2 }), {
        status: "satisfied",
        detail: "job 2 done",
        summary: "2/2 matches; last: job 2 done",
      });
    } finally {
      await probe.close?.();
    }
    const missing = plan(["log", `${dir}/none.log`, "--contains", "x"]).conditions[0]!.probe;
    try {
      assertEquals(await missing.check({ signal, attempt: 1 }), {
        status: "pending",
        error: "does not exist",
      });
    } finally {
      await missing.close?.();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
