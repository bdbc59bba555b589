import { assertEquals } from "../tests/_assert.ts";
import { Aborter, offAbort, onAbort } from "./abort.ts";

/** Counts the event listeners added to `signal` from now on. */
function countListeners(signal: AbortSignal): { added: number } {
  const count = { added: 0 };
  const add = signal.addEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<typeof add>) => {
    count.added++;
    add(...args);
  };
  return count;
}

for (
  const [name, make] of [["AbortController", () => new AbortController()], [
    "Aborter",
    () => new Aborter(),
  ]] as const
) {
  Deno.test(`onAbort() on an ${name}: each callback once, removable, at once after the abort`, () => {
    const ctl = make();
    const calls: string[] = [];
    onAbort(ctl.signal, () => calls.push("a"));
    const offB = onAbort(ctl.signal, () => calls.push("b"));
    const fn = () => calls.push("c");
    onAbort(ctl.signal, fn);
    const offC2 = onAbort(ctl.signal, fn); // the same function twice: removed once per remover
    offB();
    offC2();
    let seen: unknown;
    ctl.signal.addEventListener("abort", () => (seen = ctl.signal.reason)); // others' listeners work
    ctl.abort("why");
    ctl.abort("again");
    assertEquals(calls, ["a", "c"]);
    assertEquals(seen, "why");
    onAbort(ctl.signal, () => calls.push("late"));
    assertEquals(calls, ["a", "c", "late"]);
  });
}

Deno.test("onAbort() adds one event listener to a plain signal, and none to an Aborter's", () => {
  const plain = new AbortController();
  const aborter = new Aborter();
  const p = countListeners(plain.signal);
  const a = countListeners(aborter.signal);
  for (let i = 0; i < 3; i++) {
    onAbort(plain.signal, () => {});
    onAbort(aborter.signal, () => {});
  }
  assertEquals([p.added, a.added], [1, 0]);
});

Deno.test("Aborter.whenAborted: its owner's callback, called once by abort(), before onAbort's", () => {
  const ctl = new Aborter();
  const calls: string[] = [];
  onAbort(ctl.signal, () => calls.push("onAbort"));
  ctl.whenAborted = () => calls.push("owner");
  ctl.abort("why");
  ctl.abort("again");
  assertEquals(calls, ["owner", "onAbort"]);
  const unset = new Aborter();
  unset.abort(); // no callback set: nothing to call
  assertEquals(unset.signal.aborted, true);
});

Deno.test("onAbort() with one callback at a time: removed and added again, one listener, the right ones called", () => {
  const plain = new AbortController();
  const p = countListeners(plain.signal);
  const calls: string[] = [];
  const offA = onAbort(plain.signal, () => calls.push("a"));
  offA();
  offA(); // twice: nothing more
  const fn = () => calls.push("b");
  const offB = onAbort(plain.signal, fn);
  onAbort(plain.signal, fn); // the same function again: one entry per remover
  offB();
  offA(); // long removed: removes nothing
  plain.abort();
  assertEquals(calls, ["b"]);
  assertEquals(p.added, 1);
});

Deno.test("offAbort() removes one registration of a callback: alone, among others, twice", () => {
  for (const make of [() => new AbortController(), () => new Aborter()]) {
    const calls: string[] = [];
    const a = () => void calls.push("a");
    const b = () => void calls.push("b");
    const alone = make();
    onAbort(alone.signal, a);
    offAbort(alone.signal, a);
    alone.abort();
    assertEquals(calls, []);
    const among = make();
    onAbort(among.signal, a);
    onAbort(among.signal, b);
    onAbort(among.signal, a);
    offAbort(among.signal, a);
    among.abort();
    assertEquals(calls.sort(), ["a", "b"]);
    // After the abort, and for a callback never added: nothing happens.
    offAbort(among.signal, a);
    offAbort(make().signal, b);
    calls.length = 0;
  }
});
