import { assert, assertEquals } from "../tests/_assert.ts";
import { realClock } from "../engine/clock.ts";
import { DEFAULT_OPTIONS } from "../engine/options.ts";
import { type ConditionPlan, flatRoot, type Plan } from "../engine/plan.ts";
import type { Probe } from "../engine/types.ts";
import { OFF_THREAD_FROM, runSession, type SessionIo } from "./session.ts";
import { fakeKind } from "../engine/_fake_kind.ts";

/** A plan of `n` conditions (one by default) of `kind`. */
function planOf(kind: ReturnType<typeof fakeKind>, options = {}, n = 1): Plan {
  const cs = Array.from({ length: n }, (_, i): ConditionPlan => ({
    index: i + 1,
    kind,
    kindWord: kind.name,
    guard: false,
    negate: false,
    name: `${kind.name} x`,
    target: "x",
    options: undefined,
    captures: [],
  }));
  const opts = { ...DEFAULT_OPTIONS, ...options };
  return {
    options: opts,
    conditions: cs,
    root: flatRoot(opts.mode, cs),
    then: undefined,
    secrets: [],
  };
}

/** A session's I/O, collected, cancelled through `cancel`. */
function sessionIo(cancel: AbortController) {
  const out = { stdout: "", stderr: "" };
  const io: SessionIo = {
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    env: {},
    stderrIsTerminal: false,
    columns: () => 80,
    clock: realClock,
    signal: cancel.signal,
  };
  return { io, out };
}

Deno.test("runSession() ends at once on a signal while the probes are being made", async () => {
  let loading = false;
  let closed = false;
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const kind = fakeKind("slow", async (): Promise<Probe> => {
    loading = true;
    await gate; // a library import that takes its time
    return {
      check: () => Promise.resolve({ status: "satisfied", detail: "" }),
      close: () => void (closed = true),
    };
  });
  const cancel = new AbortController();
  const { io, out } = sessionIo(cancel);
  const session = runSession(planOf(kind), io);
  while (!loading) await new Promise((r) => setTimeout(r, 1));
  cancel.abort("SIGTERM");
  // The import never finishes by itself: the session must not wait for it.
  const end = await session;
  assertEquals([end.report?.status, end.report?.signal], ["cancelled", "SIGTERM"]);
  assertEquals(end.report?.conditions.map((c) => c.attempts), [0]);
  assertEquals(
    out.stderr.trimEnd().split("\n").at(-1),
    "waitcmd: cancelled by SIGTERM after 0.0s; not satisfied: slow x",
  );
  // A probe made after the signal is closed in the background.
  release();
  for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 1));
  assert(closed, "the probe made after the signal was not closed");
});

Deno.test("runSession() answers a signal that came before --explain with its code, not 0", async () => {
  const cancel = new AbortController();
  cancel.abort("SIGINT");
  const { io, out } = sessionIo(cancel);
  const end = await runSession(planOf(fakeKind("slow"), { explain: true }), io);
  assertEquals([end.code, end.report, out.stdout], [130, undefined, ""]);
  assertEquals(out.stderr, "waitcmd: cancelled by SIGINT before the wait started\n");
});

Deno.test("runSession() hears signals off the main thread from OFF_THREAD_FROM conditions on, until the run ends", async () => {
  const kind = fakeKind("up", () =>
    Promise.resolve({
      check: () => Promise.resolve({ status: "satisfied" as const, detail: "" }),
    }));
  for (const n of [OFF_THREAD_FROM - 1, OFF_THREAD_FROM]) {
    const { io } = sessionIo(new AbortController());
    const calls: string[] = [];
    const end = await runSession(planOf(kind, { output: "json" }, n), {
      ...io,
      hearOffThread: () => {
        calls.push("hear");
        return Promise.resolve(() => void calls.push("stop"));
      },
    });
    assertEquals(end.report?.status, "satisfied");
    assertEquals(calls, n >= OFF_THREAD_FROM ? ["hear", "stop"] : [], `${n} conditions`);
  }
});
