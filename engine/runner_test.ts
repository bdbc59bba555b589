import { assert, assertEquals } from "../tests/_assert.ts";
import type { ReadyCondition, ReadyPlan } from "./prepare.ts";
import { DEFAULT_OPTIONS, type RunOptions } from "./options.ts";
import { pauseMs, run, type RunEvent } from "./runner.ts";
import { MAX_UNDER_WAY } from "./slots.ts";
import type { AttemptContext, Probe, ProbeResult } from "./types.ts";
import { flatRoot, groupName, type GroupNode, type PlanNode } from "./plan.ts";
import { drive, FakeClock } from "./_fake_clock.ts";
import { fakeKind } from "./_fake_kind.ts";
import { fakePlan } from "./_fake_plan.ts";
import { FatalError } from "./errors.ts";

const fake = fakeKind();

const OK: ProbeResult = { status: "satisfied", detail: "fine" };
const NO: ProbeResult = { status: "pending", error: "connection refused" };

/** Records when each attempt started (clock time) and whether its signal was aborted. */
interface Trace {
  starts: number[];
  aborted: boolean[];
}

/** A probe answering from a script (the last answer repeats), optionally taking `takesMs` per attempt. */
function scripted(
  clock: FakeClock,
  answers: ProbeResult[],
  opts: { takesMs?: number; hang?: boolean } = {},
): Probe & { trace: Trace } {
  const trace: Trace = { starts: [], aborted: [] };
  return {
    trace,
    async check(ctx: AttemptContext) {
      trace.starts.push(clock.now());
      const i = trace.starts.length - 1;
      if (opts.hang) {
        await new Promise<void>((r) =>
          ctx.signal.addEventListener("abort", () => r(), { once: true })
        );
        trace.aborted[i] = true;
        return NO;
      }
      if (opts.takesMs) await clock.sleep(opts.takesMs, ctx.signal);
      trace.aborted[i] = ctx.signal.aborted;
      return answers[Math.min(i, answers.length - 1)]!;
    },
  };
}

function plan(
  probes: { probe: Probe; guard?: boolean; name?: string }[],
  options: Partial<RunOptions> = {},
): ReadyPlan {
  return fakePlan(probes, options, fake);
}

async function runFake(
  p: ReadyPlan,
  clock: FakeClock,
  signal?: AbortSignal,
  random?: () => number,
) {
  const events: RunEvent[] = [];
  const report = await drive(
    clock,
    run(p, { clock, signal, random, onEvent: (e) => events.push(e) }),
  );
  return { report, events };
}

Deno.test("run() starts every condition's first attempt immediately and concurrently", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [OK]);
  const b = scripted(clock, [NO, OK]);
  const { report } = await runFake(plan([{ probe: a }, { probe: b }]), clock);
  assertEquals(a.trace.starts, [0]);
  assertEquals(b.trace.starts, [0, 2000]);
  assertEquals(report.status, "satisfied");
  assertEquals(report.elapsedMs, 2000);
});

Deno.test("run() waits --interval after the previous attempt ended", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO, NO, OK], { takesMs: 500 });
  const { report } = await runFake(plan([{ probe: a }], { intervalMs: 1000 }), clock);
  assertEquals(a.trace.starts, [0, 1500, 3000]);
  assertEquals(report.conditions[0]!.attempts, 3);
  assertEquals(report.conditions[0]!.satisfied, true);
});

Deno.test("run() times out at the global deadline with the last error", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO]);
  const { report, events } = await runFake(
    plan([{ probe: a }], { timeoutMs: 10_000, intervalMs: 2000 }),
    clock,
  );
  assertEquals(report.status, "timeout");
  assertEquals(report.elapsedMs, 10_000);
  assertEquals(report.conditions[0]!.satisfied, false);
  assertEquals(report.conditions[0]!.lastError, "connection refused");
  // Attempts at 0, 2, 4, 6, 8 and 10 s; the one at 10 s is cut by the deadline.
  assert(report.conditions[0]!.attempts >= 5);
  assertEquals(events.at(-1)?.type, "end");
});

Deno.test("run() reports an attempt still running at the deadline", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO], { hang: true });
  const { report } = await runFake(plan([{ probe: a }], { timeoutMs: 5000 }), clock);
  assertEquals(report.status, "timeout");
  assertEquals(
    report.conditions[0]!.lastError,
    "no answer before the deadline (attempt 1 still running)",
  );
  assertEquals(a.trace.aborted, [true]);
});

Deno.test("run() ends by aborting the attempts under way, closing after they settle; a pause is left to the clock", async () => {
  const clock = new FakeClock();
  const hangs = scripted(clock, [NO], { hang: true });
  const sleeps = scripted(clock, [NO]);
  const order: string[] = [];
  const holds: Probe = {
    check: ({ signal }) =>
      new Promise((resolve) =>
        signal.addEventListener("abort", () => {
          order.push("attempt aborted");
          resolve(NO);
        }, { once: true })
      ),
    close: () => void order.push("closed"),
  };
  const { report } = await runFake(
    plan([{ probe: hangs }, { probe: sleeps }, { probe: holds }], {
      timeoutMs: 5000,
      intervalMs: 60_000,
    }),
    clock,
  );
  assertEquals(report.status, "timeout");
  assertEquals(hangs.trace.aborted, [true]);
  assertEquals(order, ["attempt aborted", "closed"]);
  assertEquals(
    report.conditions.map((c) => c.lastError),
    [
      "no answer before the deadline (attempt 1 still running)",
      "connection refused",
      "no answer before the deadline (attempt 1 still running)",
    ],
  );
  // The condition asleep until its next attempt was not woken: its pause is still on the clock
  // (the process exits before it ends; a run of tens of thousands ends without a step each).
  assertEquals(sleeps.trace.starts, [0]);
  assertEquals(clock.pending, 1);
});

Deno.test("run() requires --successes consecutive successes; a failure resets the streak", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [OK, OK, NO, OK, OK, OK, NO]);
  const { report, events } = await runFake(plan([{ probe: a }], { successes: 3 }), clock);
  assertEquals(report.status, "satisfied");
  assertEquals(report.conditions[0]!.attempts, 6);
  const streaks = events.flatMap((e) =>
    e.type === "attempt" && e.streak ? [e.streak.successes] : []
  );
  assertEquals(streaks, [1, 2, 1, 2]);
});

Deno.test("run() requires --stable-for of uninterrupted success", async () => {
  const clock = new FakeClock();
  // Success from 0 s, a failure at 4 s, then success for good.
  const a = scripted(clock, [OK, OK, NO, OK]);
  const { report } = await runFake(
    plan([{ probe: a }], { stableForMs: 600_000, timeoutMs: 3_600_000, intervalMs: 2000 }),
    clock,
  );
  assertEquals(report.status, "satisfied");
  // The streak starts at the attempt after the failure (6 s) and must be 10 minutes old.
  assertEquals(report.elapsedMs, 6000 + 600_000);
  assertEquals(report.conditions[0]!.elapsedMs, 606_000);
});

Deno.test("run() samples a --stable-for window at least 5 times, whatever --interval is", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [OK]);
  const { report } = await runFake(
    plan([{ probe: a }], { stableForMs: 1000, intervalMs: 500 }),
    clock,
  );
  assertEquals(a.trace.starts, [0, 200, 400, 600, 800, 1000]);
  assertEquals(report.elapsedMs, 1000);
});

Deno.test("run() never passes --stable-for on a target flapping between interval samples", async () => {
  const clock = new FakeClock();
  // Up 300 ms, down 300 ms, for ever: samples every 500 ms alone would all land "up" or not.
  const flapping: Probe = {
    check: () => Promise.resolve(Math.floor(clock.now() / 300) % 2 === 0 ? OK : NO),
  };
  const { report } = await runFake(
    plan([{ probe: flapping }], { stableForMs: 1000, intervalMs: 500, timeoutMs: 30_000 }),
    clock,
  );
  assertEquals(report.status, "timeout");
});

Deno.test("run() combines --successes and --stable-for", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [OK]);
  const { report } = await runFake(
    plan([{ probe: a }], { successes: 5, stableForMs: 3000, intervalMs: 100 }),
    clock,
  );
  // 5 successes take 400 ms; stability needs 3 s: the later of the two decides.
  assertEquals(report.elapsedMs, 3000);
  assert(report.conditions[0]!.attempts >= 5);
});

Deno.test("run() aborts an attempt after --attempt-timeout and retries", async () => {
  const clock = new FakeClock();
  let calls = 0;
  const seen: boolean[] = [];
  const probe: Probe = {
    async check(ctx) {
      calls++;
      if (calls === 1) {
        await new Promise<void>((r) =>
          ctx.signal.addEventListener("abort", () => r(), { once: true })
        );
        seen.push(ctx.signal.aborted);
        return OK; // Too late: the runner already counted the timeout.
      }
      return OK;
    },
  };
  const { report, events } = await runFake(
    plan([{ probe }], { attemptTimeoutMs: 1000, intervalMs: 2000 }),
    clock,
  );
  assertEquals(seen, [true]);
  const first = events.find((e) => e.type === "attempt");
  assert(first?.type === "attempt");
  assertEquals(first.result, { status: "pending", error: "attempt timed out after 1s" });
  assertEquals(first.elapsedMs, 1000);
  assertEquals(report.status, "satisfied");
  assertEquals(report.conditions[0]!.attempts, 2);
  assertEquals(report.conditions[0]!.lastError, "attempt timed out after 1s");
});

Deno.test("run() gives a condition's own --attempt-timeout precedence over the global one", async () => {
  const clock = new FakeClock();
  // Each answers after 3 s: the global cap is 5 s, the first condition's own is 1 s.
  const own = scripted(clock, [OK], { takesMs: 3000 });
  const global = scripted(clock, [OK], { takesMs: 3000 });
  const p = plan([{ probe: own }, { probe: global }], {
    attemptTimeoutMs: 5000,
    intervalMs: 2000,
    timeoutMs: 4000,
  });
  const conditions = p.conditions.map((c, i) => i === 0 ? { ...c, attemptTimeoutMs: 1000 } : c);
  const { report } = await runFake({ ...p, conditions, root: flatRoot("all", conditions) }, clock);
  assertEquals(report.conditions[0]!.lastError, "attempt timed out after 1s");
  assertEquals(own.trace.aborted[0], true);
  assertEquals(report.conditions[1]!.satisfied, true, "the global 5 s lets 3 s pass");
  assertEquals(global.trace.aborted[0], false);
});

Deno.test("run() in mode any is satisfied by one condition and cancels the others", async () => {
  const clock = new FakeClock();
  const slow = scripted(clock, [NO], { hang: true });
  const fast = scripted(clock, [NO, OK]);
  const { report } = await runFake(
    plan([{ probe: slow }, { probe: fast }], { mode: "any" }),
    clock,
  );
  assertEquals(report.status, "satisfied");
  assertEquals(report.decidedBy, 2);
  assertEquals(slow.trace.aborted, [true]);
  assertEquals(report.conditions.map((c) => c.satisfied), [false, true]);
});

Deno.test("run() in mode all waits for every condition and does not re-poll satisfied ones", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [OK]);
  const b = scripted(clock, [NO, NO, NO, OK]);
  const { report } = await runFake(plan([{ probe: a }, { probe: b }]), clock);
  assertEquals(report.status, "satisfied");
  assertEquals(a.trace.starts.length, 1);
  assertEquals(b.trace.starts.length, 4);
  assertEquals(report.elapsedMs, 6000);
});

Deno.test("run() ends fatal at once when a guard matches", async () => {
  const clock = new FakeClock();
  const main = scripted(clock, [NO]);
  const guard = scripted(clock, [{ status: "pending", error: "no match" }, {
    status: "satisfied",
    detail: "FATAL: disk full",
  }]);
  const { report, events } = await runFake(
    plan([{ probe: main }, { probe: guard, guard: true, name: "log app.log" }], {
      timeoutMs: 60_000,
    }),
    clock,
  );
  assertEquals(report.status, "fatal");
  assertEquals(report.elapsedMs, 2000);
  assertEquals(report.decidedBy, 2);
  const g = report.conditions[1]!;
  assertEquals([g.guard, g.satisfied, g.fatal, g.detail], [true, true, true, "FATAL: disk full"]);
  assert(events.some((e) => e.type === "guard" && e.detail === "FATAL: disk full"));
});

Deno.test("run() ignores guards for mode all: only non-guards must hold", async () => {
  const clock = new FakeClock();
  const main = scripted(clock, [NO, OK]);
  const guard = scripted(clock, [{ status: "pending", error: "no match" }]);
  const { report } = await runFake(plan([{ probe: main }, { probe: guard, guard: true }]), clock);
  assertEquals(report.status, "satisfied");
  assertEquals(report.conditions[1]!.satisfied, false);
});

Deno.test("run() ends fatal on a fatal probe result", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO, { status: "fatal", error: "job failed" }]);
  const b = scripted(clock, [NO]);
  const { report } = await runFake(plan([{ probe: a }, { probe: b }]), clock);
  assertEquals(report.status, "fatal");
  assertEquals(report.decidedBy, 1);
  assertEquals(report.conditions[0]!.lastError, "job failed");
  assertEquals(report.conditions[0]!.fatal, true);
  assertEquals(report.conditions[1]!.fatal, false);
});

Deno.test("run() is cancelled by its signal, aborting attempts under way", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO], { hang: true });
  const cancel = new AbortController();
  const events: RunEvent[] = [];
  const running = run(plan([{ probe: a }]), {
    clock,
    signal: cancel.signal,
    onEvent: (e) => events.push(e),
  });
  await clock.advance(3000);
  cancel.abort("SIGTERM");
  const report = await drive(clock, running);
  assertEquals(report.status, "cancelled");
  assertEquals(report.signal, "SIGTERM");
  assertEquals(report.elapsedMs, 3000);
  assertEquals(a.trace.aborted, [true]);
});

Deno.test("run() starts an attempt at once when a watcher reports a change", async () => {
  const clock = new FakeClock();
  let changed: (() => void) | undefined;
  const a = scripted(clock, [NO, OK]);
  const probe: Probe = {
    ...a,
    async *watch(ctx) {
      while (!ctx.signal.aborted) {
        await new Promise<void>((r) => {
          changed = r;
          ctx.signal.addEventListener("abort", () => r(), { once: true });
        });
        if (!ctx.signal.aborted) yield "change";
      }
    },
  };
  const running = run(plan([{ probe }], { intervalMs: 30_000 }), { clock });
  await clock.advance(700);
  changed!();
  const report = await drive(clock, running);
  assertEquals(a.trace.starts, [0, 700]);
  assertEquals(report.elapsedMs, 700);
});

Deno.test("run() turns a throwing probe into a failed attempt with its message", async () => {
  const clock = new FakeClock();
  let n = 0;
  const probe: Probe = {
    check() {
      if (n++ === 0) throw new Error("boom");
      return Promise.resolve(OK);
    },
  };
  const { report } = await runFake(plan([{ probe }]), clock);
  assertEquals(report.status, "satisfied");
  assertEquals(report.conditions[0]!.lastError, "boom");
});

Deno.test("run() closes every probe at the end", async () => {
  const clock = new FakeClock();
  let closed = 0;
  const probe: Probe = {
    check: () => Promise.resolve(OK),
    close: () => void closed++,
  };
  const holdsNothing: Probe = { check: () => Promise.resolve(OK) };
  await runFake(plan([{ probe }, { probe: holdsNothing }, { probe }]), clock);
  assertEquals(closed, 2);
});

Deno.test("run() ends each attempt of a probe that never answers and ignores its signal", async () => {
  const clock = new FakeClock();
  let calls = 0;
  const probe: Probe = {
    // The runner is the one error boundary (engine/attempt.ts): only its abort handling can
    // end these attempts.
    check: () => {
      calls++;
      return new Promise<ProbeResult>(() => {});
    },
  };
  const { report, events } = await runFake(
    plan([{ probe }], { attemptTimeoutMs: 1000, intervalMs: 2000, timeoutMs: 10_000 }),
    clock,
  );
  const attempts = events.filter((e) => e.type === "attempt");
  assertEquals(attempts.map((e) => e.type === "attempt" && e.elapsedMs), [1000, 4000, 7000]);
  for (const e of attempts) {
    assert(e.type === "attempt");
    assertEquals(e.result, { status: "pending", error: "attempt timed out after 1s" });
  }
  assertEquals(calls, 4); // the fourth, started at 9 s, is under way at the deadline
  assertEquals(report.status, "timeout");
  assertEquals(report.elapsedMs, 10_000);
  assertEquals(report.conditions[0]!.lastError, "attempt timed out after 1s");
});

Deno.test("run() ends the run with exit-3 status when a probe throws a FatalError", async () => {
  const clock = new FakeClock();
  const probe: Probe = {
    check: () => Promise.reject(new FatalError("job failed")),
  };
  const { report } = await runFake(plan([{ probe }]), clock);
  assertEquals(report.status, "fatal");
  assertEquals(report.conditions[0]!.lastError, "job failed");
  assertEquals(report.conditions[0]!.fatal, true);
});

Deno.test("run() with exponential backoff doubles the pause per failure up to --max-interval", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO]);
  const { report } = await runFake(
    plan([{ probe: a }], {
      backoff: "exponential",
      intervalMs: 1000,
      maxIntervalMs: 8000,
      timeoutMs: 40_000,
    }),
    clock,
  );
  assertEquals(a.trace.starts, [0, 1000, 3000, 7000, 15_000, 23_000, 31_000, 39_000]);
  assertEquals(report.status, "timeout");
});

Deno.test("run() with --backoff-factor multiplies the pause by it per failure, up to --max-interval", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO]);
  const { report } = await runFake(
    plan([{ probe: a }], {
      backoff: "exponential",
      backoffFactor: 1.5,
      intervalMs: 1000,
      maxIntervalMs: 4000,
      timeoutMs: 20_000,
    }),
    clock,
  );
  // Pauses 1000, 1500, 2250, 3375, then 4000 (capped) each.
  assertEquals(a.trace.starts, [0, 1000, 2500, 4750, 8125, 12_125, 16_125]);
  assertEquals(report.status, "timeout");
});

Deno.test("pauseMs() under --backoff-factor: 1 keeps the interval; a power past any double is capped", () => {
  const o = {
    intervalMs: 500,
    backoff: "exponential" as const,
    maxIntervalMs: 60_000,
    backoffFactor: 1,
    jitter: 0,
  };
  for (const failures of [1, 2, 10, 10_000]) assertEquals(pauseMs(o, failures, Math.random), 500);
  const tenfold = { ...o, backoffFactor: 10 };
  assertEquals([1, 2, 3, 4, 5].map((n) => pauseMs(tenfold, n, Math.random)), [
    500,
    5000,
    50_000,
    60_000,
    60_000,
  ]);
  // 10^10000 is Infinity: still the cap, never NaN or Infinity.
  assertEquals(pauseMs(tenfold, 10_000, Math.random), 60_000);
  // A factor just above 1 keeps growing past 52 failures (no exponent cap of its own).
  const slow = { ...o, backoffFactor: 1.01 };
  assert(pauseMs(slow, 200, Math.random) > pauseMs(slow, 60, Math.random));
});

Deno.test("run() resets the backoff after a success", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO, NO, NO, OK, NO, OK]);
  await runFake(
    plan([{ probe: a }], { backoff: "exponential", intervalMs: 100, successes: 3 }),
    clock,
  );
  // Pauses 100, 200, 400 after the failures; 100 after the success; 100 after a single failure.
  assertEquals(a.trace.starts, [0, 100, 300, 700, 800, 900, 1000, 1100]);
});

Deno.test("pauseMs() spreads a pause within ± --jitter, for constant and exponential backoff", () => {
  const constant = {
    intervalMs: 1000,
    backoff: "constant" as const,
    maxIntervalMs: 30_000,
    backoffFactor: 2,
    jitter: 0.2,
  };
  assertEquals(pauseMs(constant, 1, () => 0), 800);
  assertEquals(pauseMs(constant, 1, () => 0.5), 1000);
  assertEquals(pauseMs(constant, 9, () => 0.999999) <= 1200, true);
  const exp = { ...constant, backoff: "exponential" as const };
  assertEquals(pauseMs(exp, 3, () => 0), 3200);
  for (let i = 0; i < 1000; i++) {
    const p = pauseMs(exp, 3, Math.random);
    assert(p >= 3200 && p <= 4800, `pause ${p} outside 4000 ± 20%`);
  }
});

Deno.test("run() with --jitter keeps conditions out of lock-step", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO]);
  const b = scripted(clock, [NO]);
  // A seeded generator (mulberry32) stands in for Math.random, so the run repeats exactly.
  let seed = 42;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  await runFake(
    plan([{ probe: a }, { probe: b }], { intervalMs: 1000, jitter: 0.5, timeoutMs: 3500 }),
    clock,
    undefined,
    random,
  );
  // Both start at once; from then on their attempts never coincide, and every pause is
  // within 1000 ms ± 50%.
  assertEquals([a.trace.starts[0], b.trace.starts[0]], [0, 0]);
  assert(a.trace.starts.length >= 3 && b.trace.starts.length >= 3);
  for (const t of a.trace.starts.slice(1)) assert(!b.trace.starts.includes(t), `lock-step at ${t}`);
  for (const starts of [a.trace.starts, b.trace.starts]) {
    for (let j = 1; j < starts.length; j++) {
      const pause = starts[j]! - starts[j - 1]!;
      assert(pause >= 500 && pause <= 1500, `pause ${pause} outside 1000 ± 50%`);
    }
  }
});

Deno.test("run() with --delay starts no attempt before it ends, not even on a watcher's wake-up", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO, OK]);
  const probe: Probe = {
    check: (ctx) => a.check(ctx),
    async *watch() {
      yield "changed";
    },
  };
  const { report } = await runFake(
    plan([{ probe }], { delayMs: 5000, intervalMs: 1000 }),
    clock,
  );
  assertEquals(a.trace.starts, [5000, 6000]);
  assertEquals(report.elapsedMs, 6000);
});

Deno.test("run() with no deadline (--timeout 0/none) waits until the verdict", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [...Array(100).fill(NO), OK]);
  const { report } = await runFake(
    plan([{ probe: a }], { timeoutMs: Infinity, intervalMs: 3_600_000 }),
    clock,
  );
  assertEquals(report.status, "satisfied");
  assertEquals(report.elapsedMs, 100 * 3_600_000);
});

Deno.test("run() without an event listener reports the same as with one", async () => {
  const once = (onEvent?: (e: RunEvent) => void) => {
    const clock = new FakeClock();
    const p = plan([{ probe: scripted(clock, [NO, OK]) }, { probe: scripted(clock, [OK]) }], {
      intervalMs: 1000,
    });
    return drive(clock, run(p, { clock, onEvent }));
  };
  const events: RunEvent[] = [];
  const report = await once();
  assertEquals(report, await once((e) => events.push(e)));
  assertEquals(events.at(-1), { type: "end", report });
  assertEquals(report.status, "satisfied");
  assertEquals(report.conditions.map((c) => [c.attempts, c.satisfied, c.lastError]), [
    [2, true, "connection refused"],
    [1, true, ""],
  ]);
  assertEquals(report.elapsedMs, 1000);
});

/** A plan whose root's children are `nodes`: a probe is a leaf, `[op, ...]` a group of them. */
type Shape = Probe | { guard: Probe } | ["any" | "all", ...Shape[]];

function treePlan(shapes: Shape[], options: Partial<RunOptions> = {}): ReadyPlan {
  const opts = { ...DEFAULT_OPTIONS, ...options };
  const conditions: ReadyCondition[] = [];
  const build = (s: Shape, path: string, pos: number): PlanNode => {
    if (Array.isArray(s)) {
      const [op, ...members] = s;
      const p = `${path ? path + "." : ""}${pos}.${op}`;
      const children = members.map((m, i) => build(m, p, i + 1));
      return { type: "group", op, path: p, name: groupName(op, children), children };
    }
    const guard = "guard" in s;
    const probe = "guard" in s ? s.guard : s;
    const index = conditions.length + 1;
    const c: ReadyCondition = {
      index,
      kind: fake,
      kindWord: "fake",
      guard,
      negate: false,
      name: `fake c${index}`,
      target: `c${index}`,
      options: undefined,
      captures: [],
      probe,
      ...(path ? { group: path } : {}),
    };
    conditions.push(c);
    return { type: "leaf", condition: c };
  };
  const children = shapes.map((s, i) => build(s, "", i + 1));
  const root: GroupNode = { type: "group", op: opts.mode, path: "", name: "", children };
  return { options: opts, conditions, root, then: undefined, secrets: [] };
}

Deno.test("run() with --max-attempts: the first condition to use them up ends the run, exhausted", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO]);
  const b = scripted(clock, [NO]);
  const { report, events } = await runFake(
    plan([{ probe: a }, { probe: b }], { maxAttempts: 3, intervalMs: 1000 }),
    clock,
  );
  assertEquals(report.status, "exhausted");
  assertEquals(report.decidedBy, 1);
  assertEquals(report.elapsedMs, 2000);
  // b's third attempt ended with a's, after the run was decided: it is not recorded.
  assertEquals(report.conditions.map((c) => [c.attempts, c.exhausted]), [[3, true], [3, false]]);
  assertEquals(events.filter((e) => e.type === "exhausted").length, 1);
});

Deno.test("run() with --max-attempts in mode any: exhausted only when every condition gave up", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO]);
  const b = scripted(clock, [NO, NO, NO, NO, OK]);
  const { report } = await runFake(
    plan([{ probe: a }, { probe: b }], { maxAttempts: 2, mode: "any", intervalMs: 1000 }),
    clock,
  );
  assertEquals(report.status, "exhausted");
  assertEquals(report.conditions.map((c) => c.attempts), [2, 2]);
  const clock2 = new FakeClock();
  const c = scripted(clock2, [NO]);
  const d = scripted(clock2, [NO, NO, OK]);
  const ok = await runFake(
    plan([{ probe: c }, { probe: d }], { maxAttempts: 3, mode: "any", intervalMs: 1000 }),
    clock2,
  );
  assertEquals(ok.report.status, "satisfied");
  assertEquals(ok.report.decidedBy, 2);
});

Deno.test("run() never gives up on a guard, nor on an attempt that succeeded", async () => {
  const clock = new FakeClock();
  const g = scripted(clock, [NO]);
  const a = scripted(clock, [OK, NO, OK, OK, OK]);
  const { report } = await runFake(
    plan([{ probe: g, guard: true }, { probe: a }], {
      maxAttempts: 2,
      successes: 3,
      intervalMs: 1000,
    }),
    clock,
  );
  // a's second attempt fails at attempt 2 >= 2: it gives up, the guard does not.
  assertEquals(report.status, "exhausted");
  assertEquals(report.conditions.map((c) => c.exhausted), [false, true]);
});

Deno.test("run() holds a group any[b, c] at its first member, stops the other, and waits for the rest", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO, NO, OK]);
  const b = scripted(clock, [NO, OK]);
  const c = scripted(clock, [NO]);
  const { report, events } = await runFake(
    treePlan([a, ["any", b, c]], { intervalMs: 1000 }),
    clock,
  );
  assertEquals(report.status, "satisfied");
  assertEquals(report.elapsedMs, 2000);
  const groups = events.flatMap((e) =>
    e.type === "group" ? [[e.group.name, e.held, e.elapsedMs]] : []
  );
  assertEquals(groups, [["any[fake c2, fake c3]", true, 1000]]);
  assertEquals(c.trace.starts, [0, 1000]); // its attempt at 1 s was cut short; no more after
  assertEquals(report.conditions.map((x) => [x.group, x.satisfied]), [
    [undefined, true],
    ["2.any", true],
    ["2.any", false],
  ]);
  assertEquals(report.conditions[2]!.groupName, "any[fake c2, fake c3]");
});

Deno.test("run() in nested groups: all[a, any[b, all[c, d]]] holds when its parts do", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [OK]);
  const b = scripted(clock, [NO]);
  const c = scripted(clock, [NO, OK]);
  const d = scripted(clock, [NO, NO, OK]);
  const { report, events } = await runFake(
    treePlan([["all", a, ["any", b, ["all", c, d]]]], { intervalMs: 1000 }),
    clock,
  );
  assertEquals(report.status, "satisfied");
  assertEquals(report.elapsedMs, 2000);
  assertEquals(
    events.flatMap((e) => e.type === "group" ? [e.group.path] : []),
    ["1.all.2.any.2.all", "1.all.2.any", "1.all"],
  );
  assertEquals(report.conditions.map((x) => x.group), [
    "1.all",
    "1.all.2.any",
    "1.all.2.any.2.all",
    "1.all.2.any.2.all",
  ]);
});

Deno.test("run() ends the whole run at a guard inside a group, and gives up on a group whose members all did", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO]);
  const g = scripted(clock, [NO, OK]);
  const fatal = await runFake(treePlan([a, ["any", { guard: g }, a]], { intervalMs: 1000 }), clock);
  assertEquals(fatal.report.status, "fatal");
  assertEquals(fatal.report.decidedBy, 2);
  const clock2 = new FakeClock();
  const x = scripted(clock2, [NO]);
  const y = scripted(clock2, [NO]);
  const z = scripted(clock2, [NO, NO, NO, NO, NO, OK]);
  const gave = await runFake(
    treePlan([z, ["any", x, y]], { intervalMs: 1000, maxAttempts: 2, mode: "any" }),
    clock2,
  );
  // The group any[x, y] fails at 1 s; z, a sibling in the run's mode any, gives up too.
  assertEquals(gave.report.status, "exhausted");
  assertEquals(
    gave.events.flatMap((e) => e.type === "group" ? [[e.group.path, e.held]] : []),
    [["2.any", false]],
  );
});

Deno.test("run() ends as fatal when its failure signal aborts, and reports what finishing adds", async () => {
  const clock = new FakeClock();
  const a = scripted(clock, [NO], { hang: true });
  const failure = new AbortController();
  const finished: string[] = [];
  const events: RunEvent[] = [];
  const running = run(plan([{ probe: a }]), {
    clock,
    failure: failure.signal,
    onEvent: (e) => events.push(e),
    finishing: (status) => {
      finished.push(status);
      return Promise.resolve({
        started: [{ index: 1, command: "srv", pid: 7, status: "exited", exitCode: 4, tail: [] }],
      });
    },
  });
  await clock.advance(1500);
  failure.abort("start 1 (srv) exited with code 4 before the conditions held");
  const report = await drive(clock, running);
  assertEquals(report.status, "fatal");
  assertEquals(report.failure, "start 1 (srv) exited with code 4 before the conditions held");
  assertEquals(report.decidedBy, undefined);
  assertEquals(report.elapsedMs, 1500);
  assertEquals(finished, ["fatal"]);
  assertEquals(report.started?.[0]?.exitCode, 4);
  // The end event carries the same report: the summary can name the command.
  const end = events.at(-1);
  assert(end?.type === "end" && end.report.started?.length === 1, "end event with started");
  assertEquals(a.trace.aborted, [true]);
});

Deno.test("run() whose failure signal aborted before it began is fatal at once", async () => {
  const clock = new FakeClock();
  const failure = new AbortController();
  failure.abort("start: cannot write /x");
  const report = await drive(
    clock,
    run(plan([{ probe: scripted(clock, [NO]) }]), { clock, failure: failure.signal }),
  );
  assertEquals([report.status, report.failure, report.elapsedMs], [
    "fatal",
    "start: cannot write /x",
    0,
  ]);
});

Deno.test("run() has at most MAX_UNDER_WAY attempts under way; the next starts as one ends", async () => {
  const clock = new FakeClock();
  const probes = Array.from(
    { length: MAX_UNDER_WAY + 6 },
    () => ({ probe: scripted(clock, [OK], { takesMs: 100 }) }),
  );
  const { report } = await runFake(plan(probes), clock);
  assertEquals(report.status, "satisfied");
  const starts = probes.map((p) => p.probe.trace.starts);
  assertEquals(starts.slice(0, MAX_UNDER_WAY).every((s) => s.length === 1 && s[0] === 0), true);
  // Six waited for a slot, then each had its attempt, of its own 100 ms.
  assertEquals(starts.slice(MAX_UNDER_WAY), Array(6).fill([100]));
  assertEquals(report.elapsedMs, 200);
});
