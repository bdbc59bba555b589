import { assert, assertEquals, assertStringIncludes } from "../tests/_assert.ts";
import type { ConditionPlan, Plan } from "../engine/plan.ts";
import { flatPlan } from "../engine/_fake_plan.ts";
import { createRegistry } from "../engine/registry.ts";
import type { ConditionReport, Report, RunEvent, Streak } from "../engine/runner.ts";
import type { ProbeResult } from "../engine/types.ts";
import { completionScript } from "./completions.ts";
import { kindHelp, mainHelp } from "./help.ts";
import { jsonReport, renderJsonlEvent, renderJsonReport } from "./json.ts";
import { LiveRenderer, rowText } from "./live.ts";
import { makeRedactor } from "./redact.ts";
import { attemptLine, headerLine, LineRenderer, plainStyle, summaryLines } from "./text.ts";
import { tcp } from "../conditions/tcp/mod.ts";
import { file } from "../conditions/file/mod.ts";
import { exec } from "../conditions/exec/mod.ts";

const noop = makeRedactor([]);

function cond(index: number, name: string, guard = false): ConditionPlan {
  return {
    index,
    kind: tcp,
    kindWord: "tcp",
    guard,
    negate: false,
    name,
    target: name.split(" ")[1] ?? "",
    options: undefined,
    captures: [],
  };
}

function plan(n: number, options = {}): Plan {
  return flatPlan(Array.from({ length: n }, (_, i) => cond(i + 1, `tcp db${i + 1}:5432`)), options);
}

/**
 * Attempt `n` of `condition`, `elapsedMs` into the run: decisive when it is satisfied and no
 * streak (`--successes`, `--stable-for`) is still running.
 */
function attempt(
  condition: ConditionPlan,
  n: number,
  elapsedMs: number,
  result: ProbeResult,
  streak?: Streak,
): Extract<RunEvent, { type: "attempt" }> {
  const decisive = result.status === "satisfied" && streak === undefined;
  return { type: "attempt", condition, attempt: n, elapsedMs, decisive, streak, result };
}

function cr(over: Partial<ConditionReport>): ConditionReport {
  return {
    index: 1,
    name: "tcp db:5432",
    kind: "tcp",
    target: "db:5432",
    guard: false,
    satisfied: true,
    attempts: 4,
    detail: "connected to db:5432",
    lastError: "",
    fatal: false,
    exhausted: false,
    stopped: false,
    elapsedMs: 6100,
    captures: {},
    group: undefined,
    groupName: undefined,
    ...over,
  };
}

function report(over: Partial<Report>): Report {
  return {
    status: "satisfied",
    elapsedMs: 6100,
    mode: "all",
    timeoutMs: 300_000,
    conditions: [cr({})],
    decidedBy: undefined,
    signal: undefined,
    ...over,
  };
}

Deno.test("headerLine() states count, timeout, interval and mode any", () => {
  assertEquals(headerLine(plan(3)), "waitcmd: waiting for 3 conditions (timeout 5m, interval 2s)");
  assertEquals(
    headerLine(plan(1, { mode: "any" })),
    "waitcmd: waiting for 1 condition (timeout 5m, interval 2s, mode any)",
  );
  assertEquals(
    headerLine(
      plan(2, { timeoutMs: 5_400_000, intervalMs: 500, successes: 3, stableForMs: 10_000 }),
    ),
    "waitcmd: waiting for 2 conditions (timeout 1h30m, interval 500ms, 3 successes, stable for 10s)",
  );
});

Deno.test("headerLine() and summaryLines() count the same things: guards apart, a group once", () => {
  const guarded = flatPlan([cond(1, "log app.log", true), cond(2, "tcp db:5432")]);
  assertEquals(
    headerLine(guarded),
    "waitcmd: waiting for 1 condition and 1 guard (timeout 5m, interval 2s)",
  );
  const twoGuards = flatPlan([cond(1, "tcp a:1"), cond(2, "tcp b:1", true), cond(3, "x y", true)]);
  assertStringIncludes(headerLine(twoGuards), "waiting for 1 condition and 2 guards (");
  const leaves = [1, 2, 3, 4].map((i) => ({
    type: "leaf" as const,
    condition: cond(i, `tcp h${i}:1`),
  }));
  const grouped: Plan = {
    ...flatPlan(leaves.map((l) => l.condition)),
    root: {
      type: "group",
      op: "all",
      path: "",
      name: "",
      children: [{ type: "group", op: "any", path: "1.any", name: "any[…]", children: leaves }],
    },
  };
  assertEquals(headerLine(grouped), "waitcmd: waiting for 1 condition (timeout 5m, interval 2s)");
  // A satisfied `any` group of four where three held is one member that held.
  const members = [1, 2, 3, 4].map((i) =>
    cr({ index: i, satisfied: i !== 2, group: "1.any", groupName: "any[…]" })
  );
  assertEquals(
    summaryLines(
      report({ conditions: [...members, cr({ index: 5, guard: true, satisfied: false })] }),
    ),
    ["waitcmd: satisfied in 6.1s (1/1 conditions)"],
  );
  const nested = [
    cr({ index: 1 }),
    cr({ index: 2, group: "2.all", groupName: "all[…]" }),
    cr({ index: 3, group: "2.all.1.any", groupName: "any[…]" }),
  ];
  assertEquals(summaryLines(report({ conditions: nested })), [
    "waitcmd: satisfied in 6.1s (2/2 conditions)",
  ]);
});

Deno.test("attemptLine() marks a guard's lines", () => {
  const g = cond(1, "log app.log", true);
  assertEquals(
    attemptLine(attempt(g, 1, 0, { status: "pending", error: "no matching line yet" })),
    "[..] guard log app.log attempt 1 (0.0s): no matching line yet",
  );
});

Deno.test("attemptLine() renders [..] and [ok] lines exactly as settled", () => {
  const c = cond(1, "tcp db:5432");
  assertEquals(
    attemptLine(attempt(c, 3, 4000, { status: "pending", error: "connection refused" })),
    "[..] tcp db:5432 attempt 3 (4.0s): connection refused",
  );
  assertEquals(
    attemptLine(attempt(c, 4, 6100, { status: "satisfied", detail: "" })),
    "[ok] tcp db:5432 attempt 4 (6.1s)",
  );
  assertEquals(
    attemptLine(attempt(c, 4, 6100, { status: "satisfied", detail: "200 OK" })),
    "[ok] tcp db:5432 attempt 4 (6.1s): 200 OK",
  );
  const streak = { successes: 1, required: 3, stableMs: 0, requiredMs: 10_000 };
  assertEquals(
    attemptLine(attempt(c, 2, 2000, { status: "satisfied", detail: "x" }, streak)),
    "[..] tcp db:5432 attempt 2 (2.0s): ok, 1/3 successes, stable 0.0s/10s",
  );
});

Deno.test("summaryLines() covers every run status", () => {
  assertEquals(summaryLines(report({})), ["waitcmd: satisfied in 6.1s (1/1 conditions)"]);
  assertEquals(
    summaryLines(report({ mode: "any", decidedBy: 1, elapsedMs: 1000 })),
    ["waitcmd: satisfied in 1.0s (mode any: tcp db:5432)"],
  );
  assertEquals(
    summaryLines(report({
      status: "timeout",
      conditions: [
        cr({ satisfied: false, lastError: "connection refused" }),
        cr({ index: 2, name: "file /tmp/x", satisfied: false, lastError: "does not exist" }),
        cr({ index: 3, name: "tcp ok:1" }),
      ],
    })),
    [
      "waitcmd: timed out after 5m; not satisfied: tcp db:5432: connection refused",
      "waitcmd: timed out after 5m; not satisfied: file /tmp/x: does not exist",
    ],
  );
  assertEquals(
    summaryLines(report({
      status: "fatal",
      decidedBy: 2,
      conditions: [
        cr({ satisfied: false }),
        cr({ index: 2, name: "log app.log", guard: true, detail: "FATAL boom" }),
      ],
    })),
    ["waitcmd: guard log app.log matched: FATAL boom"],
  );
  assertEquals(
    summaryLines(
      report({
        status: "fatal",
        decidedBy: 1,
        conditions: [cr({ satisfied: false, lastError: "command not found: x" })],
      }),
    ),
    ["waitcmd: fatal: tcp db:5432: command not found: x"],
  );
  assertEquals(
    summaryLines(
      report({
        status: "cancelled",
        signal: "SIGINT",
        elapsedMs: 3200,
        conditions: [cr({ satisfied: false })],
      }),
    ),
    ["waitcmd: cancelled by SIGINT after 3.2s; not satisfied: tcp db:5432"],
  );
});

Deno.test("LineRenderer prints only the summary with --quiet; URL passwords masked, own words kept", () => {
  const lines: string[] = [];
  // A registered secret equal to waitcmd's own words (the kind, the host) masks none of them.
  const r = new LineRenderer((l) => lines.push(l), makeRedactor(["tcp", "db:5432"]), {
    quiet: true,
    style: plainStyle,
  });
  const p = plan(1);
  r.onEvent({ type: "start", plan: p });
  r.onEvent(attempt(p.conditions[0]!, 1, 0, { status: "pending", error: "no" }));
  r.onEvent({
    type: "end",
    report: report({
      status: "timeout",
      conditions: [cr({ satisfied: false, lastError: "bad dsn tcp://u:hunter22@h" })],
    }),
  });
  assertEquals(lines, [
    "waitcmd: timed out after 5m; not satisfied: tcp db:5432: bad dsn tcp://u:***@h",
  ]);
});

Deno.test("jsonReport() has the spec's fields and the settled extras", () => {
  const j = jsonReport(
    report({ conditions: [cr({ lastError: "connection refused", hint: "start it" })] }),
    noop,
  );
  assertEquals(j, {
    status: "satisfied",
    elapsed_seconds: 6.1,
    mode: "all",
    timeout_seconds: 300,
    conditions: [{
      name: "tcp db:5432",
      kind: "tcp",
      target: "db:5432",
      guard: false,
      satisfied: true,
      attempts: 4,
      detail: "connected to db:5432",
      last_error: "connection refused",
      hint: "start it",
      fatal: false,
      exhausted: false,
      elapsed_seconds: 6.1,
      captures: {},
    }],
  });
  assertEquals(jsonReport(report({}), noop).conditions[0]!.hint, "");
  const text = renderJsonReport(report({}), noop);
  assert(text.endsWith("}\n"));
  assertEquals(JSON.parse(text).status, "satisfied");
});

Deno.test("jsonReport() keeps the kind and the words, masks URL passwords and captures' secrets", () => {
  const r = report({
    conditions: [
      cr({
        name: "postgres postgres://postgres:***@h/postgres",
        kind: "postgres",
        target: "postgres://postgres:***@h/postgres",
        lastError: "x postgres://app:s3cr3t-pw@h y",
        captures: { token: "s3cr3t-pw", other: "postgres" },
      }),
    ],
  });
  const j = JSON.parse(renderJsonReport(r, makeRedactor(["s3cr3t-pw", "postgres"])));
  const c = j.conditions[0];
  assertEquals(c.kind, "postgres");
  assertEquals(c.name, "postgres postgres://postgres:***@h/postgres");
  assertEquals(c.last_error, "x postgres://app:***@h y");
  // Captures come in as matched (then gets them so): masked by value here.
  assertEquals(c.captures, { token: "***", other: "***" });
});

Deno.test("renderJsonlEvent() emits one object per line with an event field", () => {
  const p = plan(1, { timeoutMs: 30_000 });
  const c = p.conditions[0]!;
  const events: RunEvent[] = [
    { type: "start", plan: p },
    attempt(c, 1, 12, { status: "satisfied", detail: "ok!" }),
    { type: "satisfied", condition: c, elapsedMs: 12 },
    { type: "guard", condition: c, detail: "d", elapsedMs: 12 },
    { type: "end", report: report({}) },
  ];
  const lines = events.map((e) => renderJsonlEvent(e, noop)!);
  for (const l of lines) {
    assert(l.endsWith("\n") && !l.slice(0, -1).includes("\n"), "one line");
  }
  const objs = lines.map((l) => JSON.parse(l));
  assertEquals(objs.map((o) => o.event), ["start", "attempt", "satisfied", "guard", "end"]);
  assertEquals(objs[0].options.timeout_seconds, 30);
  assertEquals(objs[0].conditions[0].name, "tcp db1:5432");
  assertEquals(
    [objs[1].condition, objs[1].attempt, objs[1].ok, objs[1].detail, objs[1].error],
    ["tcp db1:5432", 1, true, "ok!", ""],
  );
  assertEquals(objs[4].status, "satisfied");
  assertEquals(objs[4].conditions.length, 1);
  assertEquals(renderJsonlEvent({ type: "notice", condition: c, message: "m" }, noop), undefined);
});

Deno.test("mainHelp() and kindHelp() derive from the registry and flags", () => {
  const registry = createRegistry([tcp, file, exec]);
  const main = mainHelp(registry);
  for (
    const word of ["tcp", "file", "exec", "--timeout", "--mode", "--label", "Exit codes", "130"]
  ) {
    assertStringIncludes(main, word);
  }
  const help = kindHelp(file);
  for (
    const word of [
      ...["waitcmd [global options] file PATH [flags]", "--exists", "--contains TEXT"],
      ...["--deleted", "Examples:"],
    ]
  ) {
    assertStringIncludes(help, word);
  }
  assert(
    help.split("\n").filter((l) => l.startsWith("  waitcmd file")).length >= 2,
    "two examples",
  );
  assertStringIncludes(
    kindHelp(exec),
    "waitcmd [global options] exec [flags] -- COMMAND [ARGS...]",
  );
});

Deno.test("completionScript() lists kinds, flags, enum values, groups and topics for each shell", () => {
  const registry = createRegistry([tcp, file, exec]);
  for (const shell of ["bash", "zsh", "fish"]) {
    const s = completionScript(shell, registry);
    for (const word of ["tcp", "file", "exec", "contains", "output-contains", "timeout"]) {
      assertStringIncludes(s, word);
    }
    for (const word of ["json", "any all", "guard not", "captures"]) assertStringIncludes(s, word);
    assert(!s.includes("{{"), `${shell}: every placeholder is filled`);
  }
  assertStringIncludes(completionScript("zsh", registry), "#compdef waitcmd");
  assertStringIncludes(completionScript("fish", registry), "complete -c waitcmd");
});

Deno.test("LineRenderer drops repeated pending lines within an interval, not changes", () => {
  const lines: string[] = [];
  const r = new LineRenderer((l) => lines.push(l), noop, { quiet: false, style: plainStyle });
  const p = plan(1, { intervalMs: 2000 });
  const c = p.conditions[0]!;
  const pending = (n: number, elapsedMs: number, error: string) =>
    attempt(c, n, elapsedMs, { status: "pending", error });
  r.onEvent({ type: "start", plan: p });
  r.onEvent(pending(1, 0, "no matching line yet"));
  r.onEvent(pending(2, 100, "no matching line yet")); // a burst of file events
  r.onEvent(pending(3, 200, "no matching line yet"));
  r.onEvent(pending(4, 300, "1/3 matches")); // news is always shown
  r.onEvent(pending(5, 2400, "1/3 matches")); // an interval later: shown again
  assertEquals(lines.slice(1), [
    "[..] tcp db1:5432 attempt 1 (0.0s): no matching line yet",
    "[..] tcp db1:5432 attempt 4 (0.3s): 1/3 matches",
    "[..] tcp db1:5432 attempt 5 (2.4s): 1/3 matches",
  ]);
});

Deno.test("rowText() cuts the name before the text, then the text", () => {
  const meta = "attempt 3  4.2s";
  assertEquals(
    rowText("tcp db:5432", meta, "refused", 80),
    "tcp db:5432  attempt 3  4.2s  refused",
  );
  const name = "http http://localhost:8080/some/long/health";
  const row = rowText(name, meta, "connection refused", 57);
  assertEquals(row, "http http://localho…  attempt 3  4.2s  connection refused");
  assertEquals(row.length, 57);
  // Too narrow for both: the name stops at 12 columns, then the text is cut.
  const narrow = rowText(name, meta, "connection refused by the remote host", 50);
  assertEquals(narrow, "http http:/…  attempt 3  4.2s  connection refused…");
  assertEquals(narrow.length, 50);
});

Deno.test("LiveRenderer marks a guard's row", () => {
  const out: string[] = [];
  const live = new LiveRenderer((t) => out.push(t), noop, plainStyle, () => 80, () => 0);
  const p = flatPlan([cond(1, "tcp db:5432"), cond(2, "log app.log", true)]);
  live.onEvent({ type: "start", plan: p });
  live.onEvent(attempt(p.conditions[1]!, 1, 0, { status: "pending", error: "no match yet" }));
  live.onEvent({ type: "end", report: report({ status: "timeout" }) });
  const frame = out.findLast((t) => t.includes("\x1b[2K"))!.split("\x1b[2K").slice(1);
  assertStringIncludes(frame[1]!, " guard log app.log  attempt 1  0.0s  no match yet");
  assertEquals(frame[0]!.includes("guard"), false);
});

Deno.test("LiveRenderer shows elapsed and time left, and each wait since the start", () => {
  let now = 1000;
  const out: string[] = [];
  const live = new LiveRenderer((t) => out.push(t), noop, plainStyle, () => 80, () => now);
  const p = plan(2, { timeoutMs: 60_000 });
  live.onEvent({ type: "start", plan: p });
  now = 1100;
  live.onEvent(attempt(p.conditions[0]!, 1, 100, { status: "satisfied", detail: "connected" }));
  now = 3600;
  live.onEvent(
    attempt(p.conditions[1]!, 1, 200, { status: "pending", error: "connection refused" }),
  );
  live.onEvent({ type: "end", report: report({ status: "timeout" }) });
  const frame = out.findLast((t) => t.includes("\x1b[2K"))!.split("\x1b[2K").slice(1).map((l) =>
    l.trimEnd()
  );
  assertEquals(frame, [
    "✓ tcp db1:5432  attempt 1  0.1s  connected",
    `${frame[1]![0]} tcp db2:5432  attempt 1  2.6s  connection refused`,
    "  elapsed 2.6s, 58s left",
  ]);
});

Deno.test("a run a started command ended: its failure in the summary and the report", () => {
  // The command as the engine shows it (engine/run_options.ts): its secrets masked where they
  // stand; its output is text from outside, masked by value in the report.
  const failure = "start 1 (./srv --token ***) exited with code 4 before the conditions held";
  const r = report({
    status: "fatal",
    failure,
    started: [
      {
        index: 1,
        command: "./srv --token ***",
        pid: 42,
        status: "exited",
        exitCode: 4,
        tail: ["boom t0ps3cret"],
        log: "/tmp/waitcmd-start-1.log",
      },
      { index: 2, command: "./other", pid: 43, status: "stopped", tail: [] },
    ],
  });
  assertEquals(summaryLines(r), [`waitcmd: fatal: ${failure}`]);
  const j = jsonReport(r, makeRedactor(["t0ps3cret"]));
  assertEquals(
    j.error,
    "start 1 (./srv --token ***) exited with code 4 before the conditions held",
  );
  assertEquals(j.started, [
    {
      command: "./srv --token ***",
      pid: 42,
      status: "exited",
      exit_code: 4,
      tail: ["boom ***"],
      log: "/tmp/waitcmd-start-1.log",
    },
    { command: "./other", pid: 43, status: "stopped", tail: [], log: null },
  ]);
  // Without --start, no started field at all.
  assertEquals("started" in jsonReport(report({}), makeRedactor([])), false);
});
