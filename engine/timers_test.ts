import { assert, assertEquals } from "../tests/_assert.ts";
import { SleepScheduler } from "./timers.ts";

/** A timer source whose time moves only when told; `fire` runs the timers due. */
class FakeTimers {
  now = 0;
  armed: { at: number; fire: () => void }[] = [];
  arm = (ms: number, fire: () => void) => {
    this.armed.push({ at: this.now + ms, fire });
  };
  /** Moves to the earliest armed timer and fires it; false when none is armed. */
  fireNext(): boolean {
    if (this.armed.length === 0) return false;
    this.armed.sort((a, b) => a.at - b.at);
    const t = this.armed.shift()!;
    this.now = Math.max(this.now, t.at);
    t.fire();
    return true;
  }
}

const tick = () => new Promise((r) => queueMicrotask(() => r(undefined)));

Deno.test("SleepScheduler wakes sleeps in deadline order, one timer for sleeps due together", async () => {
  const t = new FakeTimers();
  const s = new SleepScheduler(() => t.now, t.arm);
  const woke: string[] = [];
  const at = (name: string) => () => woke.push(`${name}@${t.now}`);
  s.sleep(30, undefined).then(at("c"));
  s.sleep(10, undefined).then(at("a"));
  s.sleep(10, undefined).then(at("b"));
  assertEquals(t.armed.length, 2, "a timer for 30, then one for the earlier 10");
  assert(t.fireNext());
  await tick();
  assertEquals(woke, ["a@10", "b@10"]);
  assert(t.fireNext());
  await tick();
  assertEquals(woke, ["a@10", "b@10", "c@30"]);
  assertEquals(t.armed.length, 0);
  assertEquals(s.pending, 0);
});

Deno.test("SleepScheduler: sleeps of 100 ms or more started ms apart wake together, at most 4 ms late", async () => {
  const t = new FakeTimers();
  const s = new SleepScheduler(() => t.now, t.arm);
  const woke: number[] = [];
  for (let i = 0; i < 10; i++) {
    t.now = 1000 + i * 0.3;
    s.sleep(2000, undefined).then(() => woke.push(t.now));
  }
  assertEquals(t.armed.length, 1);
  t.fireNext();
  await tick();
  assertEquals(woke.length, 10);
  assert(woke.every((w) => w === 3004), `woke at ${woke}`);
  // The sleep started last was due at 3002.7: none woke before its deadline.
  assertEquals(t.armed.length, 0);
});

Deno.test("SleepScheduler: a short sleep is never late and none wakes early", async () => {
  const t = new FakeTimers();
  const s = new SleepScheduler(() => t.now, t.arm);
  t.now = 0.5;
  let woke = -1;
  s.sleep(1, undefined).then(() => (woke = t.now));
  while (woke < 0 && t.fireNext()) await tick();
  assertEquals(woke, 1.5);
});

Deno.test("SleepScheduler: an aborted sleep resolves at once and its timer fires for nothing", async () => {
  const t = new FakeTimers();
  const s = new SleepScheduler(() => t.now, t.arm);
  const ctl = new AbortController();
  let a = false;
  let b = false;
  s.sleep(50, ctl.signal).then(() => (a = true));
  s.sleep(500, undefined).then(() => (b = true));
  ctl.abort();
  await tick();
  assert(a);
  assertEquals(s.pending, 1);
  t.fireNext(); // the timer armed for the aborted sleep
  await tick();
  assert(!b);
  assertEquals(t.armed.length, 1, "re-armed for the sleep of 500");
  t.fireNext();
  await tick();
  assert(b);
  assertEquals(s.pending, 0);
  // Already aborted: at once, nothing armed.
  let c = false;
  s.sleep(10, ctl.signal).then(() => (c = true));
  await tick();
  assert(c);
  assertEquals(t.armed.length, 0);
});

Deno.test("SleepScheduler: a sleep beyond one timer's reach (2^31-1 ms) re-arms until it is due", async () => {
  const t = new FakeTimers();
  const s = new SleepScheduler(() => t.now, t.arm);
  let woke = -1;
  const days30 = 30 * 24 * 3600 * 1000;
  s.sleep(days30, undefined).then(() => (woke = t.now));
  let fires = 0;
  while (woke < 0 && t.fireNext()) {
    fires++;
    await tick();
  }
  assertEquals(fires, 2);
  assert(woke >= days30 && woke <= days30 + 4, `woke at ${woke}`);
});

Deno.test("SleepScheduler: many cancelled sleeps do not pile up in the heap", async () => {
  const t = new FakeTimers();
  const s = new SleepScheduler(() => t.now, t.arm);
  for (let i = 0; i < 10_000; i++) {
    const ctl = new AbortController();
    s.sleep(60_000, ctl.signal);
    ctl.abort();
  }
  await tick();
  assertEquals(s.pending, 0);
  assert(t.armed.length === 1, `${t.armed.length} timers armed`);
});

Deno.test("SleepScheduler on real timers: order and timing", async () => {
  const s = new SleepScheduler(() => performance.now(), (ms, fire) => {
    AbortSignal.timeout(ms).addEventListener("abort", fire, { once: true });
  });
  const start = performance.now();
  const order: number[] = [];
  await Promise.all([30, 10, 20].map((ms) => s.sleep(ms).then(() => order.push(ms))));
  assertEquals(order, [10, 20, 30]);
  assert(performance.now() - start >= 30);
});

Deno.test("SleepScheduler: a thousand sleeps of random lengths wake in deadline order", async () => {
  const t = new FakeTimers();
  const s = new SleepScheduler(() => t.now, t.arm);
  const woke: number[] = [];
  let seed = 7;
  const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  for (let i = 0; i < 1000; i++) {
    const ms = Math.floor(rand() * 90); // under the slack threshold: each wakes on its deadline
    s.sleep(ms, undefined).then(() => woke.push(ms));
  }
  while (t.fireNext()) await tick();
  await tick();
  assertEquals(woke.length, 1000);
  assertEquals(woke, [...woke].sort((a, b) => a - b));
});
