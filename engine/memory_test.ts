import { assertEquals } from "../tests/_assert.ts";
import { MemoryWatchdog, WATCHER_ROOM } from "./memory.ts";

const MiB = 2 ** 20;

/** A watchdog over a fake process whose RSS the test sets, with a cap of `capMiB`. */
function fakeProcess(capMiB: number) {
  const state = { rss: 100 * MiB };
  const killed: string[] = [];
  const owner = { killForMemory: (live: { name: string }) => void killed.push(live.name) };
  const dog = new MemoryWatchdog<{ busy: boolean; watchers: number; name: string }, typeof owner>(
    () => ({ rss: state.rss, heapTotal: 10 * MiB }),
  );
  dog.setCap(capMiB * MiB);
  return { state, killed, dog, owner };
}

Deno.test("MemoryWatchdog ends the busy workers once the memory is past its limit", () => {
  const { state, killed, dog, owner } = fakeProcess(256);
  const busy = { busy: true, watchers: 0, name: "busy" };
  const idle = { busy: false, watchers: 0, name: "idle" };
  dog.watch(owner, busy);
  dog.watch(owner, idle);
  try {
    state.rss = 190 * MiB;
    dog.check();
    assertEquals(killed, []);
    state.rss = 200 * MiB;
    dog.check();
    // One that waits holds what it holds: stopping it frees nothing that grows.
    assertEquals(killed, ["busy"]);
  } finally {
    dog.forget(owner, busy);
    dog.forget(owner, idle);
  }
});

Deno.test("MemoryWatchdog keeps the whole margin below the cap for a run that holds less than half of it", () => {
  // 74 MiB once the probes are made, a 256 MiB cap: it acts past 192 MiB, not 74 + 128.
  const small = fakeProcess(256);
  small.state.rss = 74 * MiB;
  small.dog.noteFloor();
  assertEquals(small.dog.limit / MiB, 192);
  // A dozen isolated kinds hold 420 MiB of a 512 MiB cap: 128 MiB of room above that.
  const large = fakeProcess(512);
  large.state.rss = 420 * MiB;
  large.dog.noteFloor();
  assertEquals(large.dog.limit / MiB, 548);
});

Deno.test("MemoryWatchdog gives each watcher its workers serve room above the limit", () => {
  const { state, killed, dog, owner } = fakeProcess(512);
  const a = { busy: true, watchers: 0, name: "a" };
  const b = { busy: true, watchers: 0, name: "b" };
  dog.watch(owner, a);
  dog.watch(owner, b);
  try {
    assertEquals(dog.limit / MiB, 384);
    // 30,000 watchers in one worker and 20,000 in another: 2 KiB each on top.
    a.watchers = 30_000;
    b.watchers = 20_000;
    assertEquals(dog.limit, 384 * MiB + 50_000 * WATCHER_ROOM);
    state.rss = 450 * MiB;
    dog.check();
    assertEquals(killed, []);
    // The watchers ended: the memory they held is past the limit again.
    a.watchers = 0;
    b.watchers = 0;
    dog.check();
    assertEquals(killed, ["a", "b"]);
  } finally {
    dog.forget(owner, a);
    dog.forget(owner, b);
  }
});
