/**
 * `--progress changes` (docs/contract.md §6): a condition's line only when its state or its
 * error changes, a heartbeat every 30 s of the run's clock naming what is still waited for,
 * and hints shown on the first line that has them and in every heartbeat. The run is a real
 * run of the runner on a fake clock, so minutes take microseconds.
 */

import { assertEquals } from "../tests/_assert.ts";
import type { RunOptions } from "../engine/options.ts";
import { run } from "../engine/runner.ts";
import type { Probe, ProbeResult } from "../engine/types.ts";
import { makeRedactor } from "./redact.ts";
import { HEARTBEAT_MS, LineRenderer, plainStyle } from "./text.ts";
import { drive, FakeClock } from "../engine/_fake_clock.ts";
import { fakePlan } from "../engine/_fake_plan.ts";

/** A probe whose answer depends on the run's time (ms). */
function timed(clock: FakeClock, answer: (t: number) => ProbeResult): Probe {
  return { check: () => Promise.resolve(answer(clock.now())) };
}

/**
 * Runs the conditions `conditions` gives for a fake clock (each named and targeted by its name),
 * on that clock, into a line renderer with `progress`; the lines it printed.
 */
async function lines(
  progress: "attempts" | "changes",
  options: Partial<RunOptions>,
  conditions: (clock: FakeClock) => { probe: Probe; name: string; guard?: boolean }[],
  quiet = false,
): Promise<string[]> {
  const clock = new FakeClock();
  const plan = fakePlan(conditions(clock).map((p) => ({ ...p, target: p.name })), options);
  const out: string[] = [];
  const r = new LineRenderer((l) => out.push(l), makeRedactor(["s3cr3t"]), {
    quiet,
    style: plainStyle,
    progress,
    clock,
  });
  await drive(clock, run(plan, { clock, onEvent: (e) => r.onEvent(e) }));
  return out;
}

const refused = (hint?: string): ProbeResult =>
  hint === undefined
    ? { status: "pending", error: "connection refused" }
    : { status: "pending", error: "connection refused", hint };

Deno.test("LineRenderer --progress changes: lines on changes, a heartbeat every 30s, the summary", async () => {
  const out = await lines("changes", { intervalMs: 2000, timeoutMs: 120_000 }, (clock) => [
    // Refused with a hint until 65 s, then up.
    {
      name: "tcp db:5432",
      probe: timed(
        clock,
        (t) =>
          t < 65_000
            ? refused("nothing listens on 5432 here: is the server started?")
            : { status: "satisfied", detail: "connected" },
      ),
    },
    // 503 twice, then 502 (a change), then up at 10 s.
    {
      name: "http web",
      probe: timed(
        clock,
        (t) =>
          t < 4_000
            ? { status: "pending", error: "status 503" }
            : t < 10_000
            ? { status: "pending", error: "status 502, see https://u:s3cr3t@h" }
            : { status: "satisfied", detail: "200 OK" },
      ),
    },
    // A guard that never matches: one line for its state, and no heartbeat names it (it is
    // not waited for).
    { name: "log app.log", guard: true, probe: timed(clock, () => refused()) },
  ]);
  assertEquals(out, [
    // The header counts what the summary counts, the guard apart, and the guard's line says so.
    "waitcmd: waiting for 2 conditions and 1 guard (timeout 2m, interval 2s)",
    "[..] tcp db:5432 attempt 1 (0.0s): connection refused (hint: nothing listens on 5432 here: is the server started?)",
    "[..] http web attempt 1 (0.0s): status 503",
    "[..] guard log app.log attempt 1 (0.0s): connection refused",
    "[..] http web attempt 3 (4.0s): status 502, see https://u:***@h",
    "[ok] http web attempt 6 (10.0s): 200 OK",
    // The heartbeat's timer was armed first: at 30 s it fires before the 16th attempt starts.
    "[..] tcp db:5432 attempt 15 (30.0s): connection refused (hint: nothing listens on 5432 here: is the server started?)",
    "[..] tcp db:5432 attempt 30 (60.0s): connection refused (hint: nothing listens on 5432 here: is the server started?)",
    "[ok] tcp db:5432 attempt 34 (66.0s): connected",
    "waitcmd: satisfied in 66.0s (2/2 conditions)",
  ]);
});

Deno.test("LineRenderer --progress attempts: a line per attempt, the hint on the first only", async () => {
  const out = await lines("attempts", { intervalMs: 2000, timeoutMs: 60_000 }, (clock) => [{
    name: "tcp db:5432",
    probe: timed(
      clock,
      (t) => t < 4_000 ? refused("start it") : { status: "satisfied", detail: "" },
    ),
  }]);
  assertEquals(out, [
    "waitcmd: waiting for 1 condition (timeout 1m, interval 2s)",
    "[..] tcp db:5432 attempt 1 (0.0s): connection refused (hint: start it)",
    "[..] tcp db:5432 attempt 2 (2.0s): connection refused",
    "[ok] tcp db:5432 attempt 3 (4.0s)",
    "waitcmd: satisfied in 4.0s (1/1 conditions)",
  ]);
});

Deno.test("LineRenderer --progress changes: a streak is one state, a first attempt still running is named", async () => {
  const options = { intervalMs: 1000, timeoutMs: 45_000, successes: 100 };
  const out = await lines("changes", options, (clock) => [
    {
      name: "exec slow",
      probe: {
        // The first attempt never ends before the deadline.
        check: async ({ signal }) => {
          await clock.sleep(10 * 60_000, signal);
          return refused();
        },
      },
    },
    { name: "tcp db:5432", probe: timed(clock, () => ({ status: "satisfied", detail: "" })) },
  ]);
  assertEquals(out, [
    "waitcmd: waiting for 2 conditions (timeout 45s, interval 1s, 100 successes)",
    "[..] tcp db:5432 attempt 1 (0.0s): ok, 1/100 successes",
    "[..] exec slow attempt 1 (30.0s): no attempt finished yet",
    "[..] tcp db:5432 attempt 30 (30.0s): ok, 30/100 successes",
    "waitcmd: timed out after 45s; not satisfied: exec slow: no answer before the deadline (attempt 1 still running)",
    "waitcmd: timed out after 45s; not satisfied: tcp db:5432: no attempt finished",
  ]);
});

Deno.test("LineRenderer --progress changes with --quiet: the summary alone, no heartbeat", async () => {
  const out = await lines(
    "changes",
    { intervalMs: 2000, timeoutMs: 61_000 },
    (clock) => [{ name: "tcp db:5432", probe: timed(clock, () => refused("start it")) }],
    true,
  );
  assertEquals(out, [
    "waitcmd: timed out after 1m1s; not satisfied: tcp db:5432: connection refused (hint: start it)",
  ]);
  assertEquals(HEARTBEAT_MS, 30_000);
});
