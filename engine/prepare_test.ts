import { assert, assertEquals } from "../tests/_assert.ts";
import { realClock } from "./clock.ts";
import type { ConditionPlan, Plan } from "./grammar.ts";
import { DEFAULT_OPTIONS } from "./options.ts";
import { preparePlan } from "./prepare.ts";
import type { ConditionKind, Probe } from "./types.ts";
import { fakeKind } from "../tests/engine/_fake_kind.ts";

function planOf(rows: { kind: ConditionKind; negate?: boolean }[]): Plan {
  const conditions: ConditionPlan[] = rows.map((r, i) => ({
    index: i + 1,
    kind: r.kind,
    kindWord: r.kind.name,
    guard: false,
    negate: r.negate ?? false,
    name: `${r.kind.name} c${i + 1}`,
    target: `c${i + 1}`,
    options: `c${i + 1}`,
  }));
  return { options: DEFAULT_OPTIONS, conditions, then: undefined, secrets: [] };
}

/** A probe that answers with its condition's options as the detail. */
const answering = (o: unknown): Probe => ({
  check: () => Promise.resolve({ status: "satisfied", detail: String(o) }),
});

Deno.test("preparePlan() waits for factories that import a library, and keeps the order", async () => {
  let release!: () => void;
  const imported = new Promise<void>((r) => (release = r));
  let ready = false;
  const slow = fakeKind("slow", async (o) => {
    await imported; // the library's import
    return answering(o);
  });
  const sync = fakeKind("sync", (o) => answering(o));
  const preparing = preparePlan(
    planOf([{ kind: sync }, { kind: slow }, { kind: sync, negate: true }, { kind: slow }]),
    { clock: realClock, env: {} },
  ).then((p) => {
    ready = true;
    return p;
  });
  await new Promise((r) => setTimeout(r, 20));
  assert(!ready, "the plan was ready before the library was imported");
  release();
  const plan = await preparing;
  const results = await Promise.all(
    plan.conditions.map((c) => c.probe.check({ signal: new AbortController().signal, attempt: 1 })),
  );
  assertEquals(results, [
    { status: "satisfied", detail: "c1" },
    { status: "satisfied", detail: "c2" },
    { status: "pending", error: "still holds: c3" },
    { status: "satisfied", detail: "c4" },
  ]);
});
