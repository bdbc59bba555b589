import { assert, assertEquals } from "../tests/_assert.ts";
import { OffThreadEar, READ_EVERY_MS } from "./off_thread_signals.ts";

/** Waits until `done()` holds, for at most `ms`. */
async function until(done: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await new Promise((r) => setTimeout(r, 2));
}

Deno.test("OffThreadEar hands a signal its worker hears to the main thread, and none once stopped", async () => {
  // The process's own listener, as main.ts has: SIGUSR1 and SIGUSR2 do not end the test runner.
  const own = () => {};
  Deno.addSignalListener("SIGUSR1", own);
  Deno.addSignalListener("SIGUSR2", own);
  const heard: Deno.Signal[] = [];
  const ear = new OffThreadEar(["SIGUSR2", "SIGUSR1"], (s) => heard.push(s));
  try {
    await until(() => ear.listening, 10_000);
    assert(ear.listening, "the worker never listened");
    Deno.kill(Deno.pid, "SIGUSR1");
    await until(() => heard.length > 0, 5_000);
    assertEquals(heard, ["SIGUSR1"]);
    ear.stop();
    Deno.kill(Deno.pid, "SIGUSR2");
    await new Promise((r) => setTimeout(r, 5 * READ_EVERY_MS));
    assertEquals(heard, ["SIGUSR1"]);
  } finally {
    ear.stop();
    Deno.removeSignalListener("SIGUSR1", own);
    Deno.removeSignalListener("SIGUSR2", own);
  }
});
