import { assertEquals } from "../tests/_assert.ts";
import { MemoryWatchdog } from "./memory.ts";

const MiB = 2 ** 20;

/** A watchdog over a fake process whose RSS the test sets, with a cap of `capMiB`. */
function fakeProcess(capMiB: number) {
  const state = { rss: 100 * MiB };
  const killed: string[] = [];
  const owner = { killForMemory: (live: { name: string }) => void killed.push(live.name) };
  const dog = new MemoryWatchdog<{ busy: boolean; name: string }, typeof owner>(
    () => ({ rss: state.rss, heapTotal: 10 * MiB }),
  );
  dog.setCap(capMiB * MiB);
  return { state, killed, dog, owner };
}

Deno.test("MemoryWatchdog ends the busy workers once the memory is past its limit", () => {
  const { state, killed, dog, owner } = fakeProcess(256);
  const busy = { busy: true, name: "busy" };
  const idle = { busy: false, name: "idle" };
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
