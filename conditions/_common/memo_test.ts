import { assertEquals, assertRejects } from "../../tests/_assert.ts";
import { Aborter } from "../../engine/abort.ts";
import { memoize } from "./memo.ts";

Deno.test("memoize(): made once, a failed making forgotten", async () => {
  let made = 0;
  let fail = true;
  const memo = memoize(() => {
    made++;
    return fail ? Promise.reject(new Error("refused")) : Promise.resolve(made);
  });
  await assertRejects(() => memo.get(), Error, "refused");
  fail = false;
  assertEquals(await memo.get(), 2);
  assertEquals(await memo.get(new AbortController().signal), 2);
  assertEquals(made, 2);
});

Deno.test("memoize(): a caller whose signal aborts stops waiting; the making goes on", async () => {
  let finish!: (v: string) => void;
  const memo = memoize(() => new Promise<string>((resolve) => finish = resolve));
  const ctl = new AbortController();
  const waiting = memo.get(ctl.signal);
  ctl.abort(new Error("run ended"));
  await assertRejects(() => waiting, Error, "run ended");
  await assertRejects(() => memo.get(ctl.signal), Error, "run ended");
  finish("made");
  assertEquals(await memo.get(new AbortController().signal), "made");
});

Deno.test("memoize(): waiting with an Aborter's signal adds no event listener to it", async () => {
  // Once it had one, a signal keeps an event target's bookkeeping: a manifest's every object
  // waits with a signal of its own (docs/reliability.md, large manifests).
  const memo = memoize(() => Promise.resolve(1));
  const ctl = new Aborter();
  let added = 0;
  const add = ctl.signal.addEventListener.bind(ctl.signal);
  ctl.signal.addEventListener = (...args: Parameters<typeof add>) => {
    added++;
    add(...args);
  };
  for (let i = 0; i < 5; i++) assertEquals(await memo.get(ctl.signal), 1);
  assertEquals(added, 0);
});
