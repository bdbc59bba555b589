/**
 * CI logs (docs/contract.md §6, CI logs), byte for byte: GitHub's group, endgroup and error
 * workflow commands, GitLab's collapsed section on an injected wall clock, the step summary's
 * Markdown table, and which environment turns which on.
 */

import { assertEquals } from "../tests/_assert.ts";
import { DEFAULT_OPTIONS } from "../engine/options.ts";
import { type ConditionPlan, flatRoot, type Plan } from "../engine/plan.ts";
import type { ConditionReport, Report, RunEvent } from "../engine/report.ts";
import { ciFold, ciSystem, escapeData, stepSummary } from "./ci.ts";
import { makeRedactor } from "./redact.ts";
import { type Fold, LineRenderer, plainStyle } from "./text.ts";
import { tcp } from "../conditions/tcp/mod.ts";

const cond = (index: number, name: string): ConditionPlan => ({
  index,
  kind: tcp,
  kindWord: "tcp",
  guard: false,
  negate: false,
  name,
  target: name,
  options: undefined,
  captures: [],
});

const CONDS = [cond(1, "tcp db:5432"), cond(2, "tcp a|b%c:1")];
const PLAN: Plan = {
  options: { ...DEFAULT_OPTIONS, timeoutMs: 60_000 },
  conditions: CONDS,
  root: flatRoot("all", CONDS),
  then: undefined,
  secrets: [],
};

const row = (over: Partial<ConditionReport>): ConditionReport => ({
  index: 1,
  name: "tcp db:5432",
  kind: "tcp",
  target: "db:5432",
  guard: false,
  satisfied: false,
  attempts: 3,
  detail: "",
  lastError: "connection refused",
  fatal: false,
  exhausted: false,
  stopped: false,
  elapsedMs: null,
  captures: {},
  group: undefined,
  groupName: undefined,
  ...over,
});

const report = (status: Report["status"], conditions: ConditionReport[]): Report => ({
  status,
  elapsedMs: 60_000,
  mode: "all",
  timeoutMs: 60_000,
  conditions,
  decidedBy: status === "fatal" ? 2 : undefined,
  signal: status === "cancelled" ? "SIGINT" : undefined,
});

const TIMEOUT = report("timeout", [
  row({}),
  row({
    index: 2,
    name: "tcp a|b%c:1",
    lastError: "status 503\r\npw db://u:hunter22@h",
    hint: "x: y",
  }),
]);

const attempt = (c: ConditionPlan, error: string): RunEvent => ({
  type: "attempt",
  condition: c,
  attempt: 1,
  result: { status: "pending", error },
  elapsedMs: 0,
  decisive: false,
  streak: undefined,
});

/** The lines a run of `events` then `end` prints with `fold`. */
function render(fold: Fold, end: Report, quiet = false): string {
  const out: string[] = [];
  const r = new LineRenderer((l) => out.push(l + "\n"), makeRedactor(["hunter22"]), {
    quiet,
    style: plainStyle,
    fold,
  });
  r.onEvent({ type: "start", plan: PLAN });
  r.onEvent(attempt(CONDS[0]!, "connection refused"));
  r.onEvent({ type: "notice", condition: CONDS[1]!, message: "polling" });
  r.onEvent({ type: "end", report: end });
  return out.join("");
}

Deno.test("ciFold(github): the progress lines in one group, the summary after, then one ::error", () => {
  assertEquals(
    render(ciFold("github", () => 0), TIMEOUT),
    "::group::waitcmd: waiting for 2 conditions (timeout 1m, interval 2s)\n" +
      "[..] tcp db:5432 attempt 1 (0.0s): connection refused\n" +
      "waitcmd: tcp a|b%c:1: polling\n" +
      "::endgroup::\n" +
      "waitcmd: timed out after 1m; not satisfied: tcp db:5432: connection refused\n" +
      "waitcmd: timed out after 1m; not satisfied: tcp a|b%c:1: status 503\r\npw db://u:***@h (hint: x: y)\n" +
      // One annotation for both summary lines; %, CR and LF escaped; no secret.
      "::error title=waitcmd::timed out after 1m; not satisfied: tcp db:5432: connection refused" +
      "%0Atimed out after 1m; not satisfied: tcp a|b%25c:1: status 503%0D%0Apw db://u:***@h (hint: x: y)\n",
  );
});

Deno.test("ciFold(github): exhausted and fatal add the ::error line; satisfied and cancelled do not", () => {
  const fold = ciFold("github", () => 0);
  const fatal = report("fatal", [row({}), row({ index: 2, name: "exec x", lastError: "gone" })]);
  const last = (r: Report) => render(fold, r).trimEnd().split("\n").at(-1);
  assertEquals(last(fatal), "::error title=waitcmd::fatal: exec x: gone");
  const exhausted = report("exhausted", [row({ exhausted: true })]);
  assertEquals(
    last(exhausted),
    "::error title=waitcmd::gave up on tcp db:5432 after 3 attempts: connection refused",
  );
  const satisfied = report("satisfied", [row({ satisfied: true, elapsedMs: 1500 })]);
  assertEquals(last(satisfied), "waitcmd: satisfied in 60.0s (1/1 conditions)");
  assertEquals(
    last(report("cancelled", [row({})])),
    "waitcmd: cancelled by SIGINT after 60.0s; not satisfied: tcp db:5432",
  );
});

Deno.test("ciFold(github) with --quiet: no group, the summary and the ::error line", () => {
  assertEquals(
    render(ciFold("github", () => 0), report("timeout", [row({})]), true),
    "waitcmd: timed out after 1m; not satisfied: tcp db:5432: connection refused\n" +
      "::error title=waitcmd::timed out after 1m; not satisfied: tcp db:5432: connection refused\n",
  );
});

Deno.test("ciFold(gitlab): a collapsed section stamped with the wall clock's seconds", () => {
  let now = 1_700_000_000_999;
  const fold = ciFold("gitlab", () => now);
  const out: string[] = [];
  const r = new LineRenderer((l) => out.push(l + "\n"), makeRedactor([]), {
    quiet: false,
    style: plainStyle,
    fold,
  });
  r.onEvent({ type: "start", plan: PLAN });
  r.onEvent(attempt(CONDS[0]!, "connection refused"));
  now += 61_000;
  r.onEvent({ type: "end", report: report("timeout", [row({})]) });
  assertEquals(
    out.join(""),
    "\x1b[0Ksection_start:1700000000:waitcmd[collapsed=true]\r\x1b[0K" +
      "waitcmd: waiting for 2 conditions (timeout 1m, interval 2s)\n" +
      "[..] tcp db:5432 attempt 1 (0.0s): connection refused\n" +
      "\x1b[0Ksection_end:1700000061:waitcmd\r\x1b[0K\n" +
      "waitcmd: timed out after 1m; not satisfied: tcp db:5432: connection refused\n",
  );
});

Deno.test("stepSummary(): the summary and a Markdown table, cells escaped, secrets removed", () => {
  const r = report("timeout", [
    // Its last error is from an attempt before it held: not shown.
    row({ satisfied: true, elapsedMs: 1234, lastError: "connection refused", hint: "start it" }),
    ...TIMEOUT.conditions.slice(1),
    row({ index: 3, name: "log x", guard: true, attempts: 7, lastError: "" }),
  ]);
  assertEquals(
    stepSummary(r, makeRedactor(["hunter22"])),
    "**waitcmd**: timed out after 1m; not satisfied: tcp a\\|b%c:1: status 503<br>pw db://u:***@h (hint: x: y)\n" +
      "\n" +
      "| condition | verdict | attempts | time | last error |\n" +
      "| --- | --- | --- | --- | --- |\n" +
      "| tcp db:5432 | satisfied | 3 | 1.2s |  |\n" +
      "| tcp a\\|b%c:1 | not satisfied | 3 |  | status 503<br>pw db://u:***@h (hint: x: y) |\n" +
      "| log x | guard, did not match | 7 |  |  |\n" +
      "\n",
  );
});

Deno.test("ciSystem() reads GITHUB_ACTIONS, GITLAB_CI and WAITCMD_CI=off", () => {
  const rows: [Record<string, string>, string | undefined][] = [
    [{}, undefined],
    [{ GITHUB_ACTIONS: "true" }, "github"],
    [{ GITHUB_ACTIONS: "false" }, undefined],
    [{ GITLAB_CI: "true" }, "gitlab"],
    [{ GITHUB_ACTIONS: "true", GITLAB_CI: "true" }, "github"],
    [{ GITHUB_ACTIONS: "true", WAITCMD_CI: "off" }, undefined],
    [{ GITLAB_CI: "true", WAITCMD_CI: "OFF" }, undefined],
  ];
  for (const [env, want] of rows) assertEquals(ciSystem(env), want, JSON.stringify(env));
  assertEquals(escapeData("100% done\r\nnext"), "100%25 done%0D%0Anext");
});
