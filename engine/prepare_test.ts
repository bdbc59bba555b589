import { assert, assertEquals } from "../tests/_assert.ts";
import { realClock } from "./clock.ts";
import { type ConditionPlan, flatRoot, type Plan } from "./plan.ts";
import { DEFAULT_OPTIONS } from "./options.ts";
import { expandPlan, preparePlan } from "./prepare.ts";
import { UsageError } from "./errors.ts";
import type { ConditionKind, Probe } from "./types.ts";
import { fakeKind } from "./_fake_kind.ts";

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
    captures: [],
  }));
  return {
    options: DEFAULT_OPTIONS,
    conditions,
    root: flatRoot("all", conditions),
    then: undefined,
    secrets: [],
  };
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

Deno.test("expandPlan() puts a condition's leaves in its place and numbers every condition anew", async () => {
  const many: ConditionKind = {
    ...fakeKind("many"),
    expand: (o, ctx) =>
      o === "c2"
        ? ctx.readText("list").then((t) =>
          t.split(",").map((x) => ({ target: x, options: x, captures: [] }))
        )
        : Promise.resolve(undefined),
  };
  const plan = await expandPlan(planOf([{ kind: many }, { kind: many }, { kind: many }]), {
    readText: () => Promise.resolve("a,b"),
    readDir: () => Promise.resolve([]),
    isDirectory: () => Promise.resolve(false),
  });
  assertEquals(
    plan.conditions.map((c) => [c.index, c.name, c.options]),
    [[1, "many c1", "c1"], [2, "many a", "a"], [3, "many b", "b"], [4, "many c3", "c3"]],
  );
});

Deno.test("expandPlan() turns a kind's fail into a usage error located at the condition", async () => {
  const bad: ConditionKind = {
    ...fakeKind("bad"),
    expand: (_o, ctx) => ctx.fail("file", "no manifests in dir/"),
  };
  const err = await expandPlan(planOf([{ kind: bad }]), {
    readText: () => Promise.reject(new Error("unused")),
    readDir: () => Promise.resolve([]),
    isDirectory: () => Promise.resolve(false),
  }).then(() => undefined, (e: unknown) => e);
  assert(err instanceof UsageError);
  assertEquals(
    err.format(),
    "waitcmd: condition 1 (bad): --file: no manifests in dir/ (see: waitcmd help bad)",
  );
});

Deno.test("expandPlan() rejects a --label on a condition that stands for several", async () => {
  const many: ConditionKind = {
    ...fakeKind("many"),
    expand: () => Promise.resolve([{ target: "a", options: "a" }, { target: "b", options: "b" }]),
  };
  const p = planOf([{ kind: many }]);
  const labelled = { ...p, conditions: [{ ...p.conditions[0]!, label: "web", name: "web" }] };
  const err = await expandPlan({ ...labelled, root: flatRoot("all", labelled.conditions) }, {
    readText: () => Promise.reject(new Error("unused")),
    readDir: () => Promise.resolve([]),
    isDirectory: () => Promise.resolve(false),
  }).then(() => undefined, (e: unknown) => e);
  assert(err instanceof UsageError);
  assert(err.format().includes("condition 1 (many): --label: names one condition"), err.format());
});
