import { assert, assertEquals, assertStringIncludes } from "../tests/_assert.ts";
import { checkOnce } from "./attempt.ts";
import { follow } from "./follow.ts";
import { ABORT_ANSWER_MS, KindIsolate, noteMemoryFloor, setMemoryCap } from "./isolate.ts";
import { Batcher } from "./isolate_messages.ts";
import { DEFAULT_MEMORY_CAP, memoryCap } from "./memory.ts";
import { UsageError } from "./errors.ts";
import { SecretRegistry } from "./masking.ts";
import type { Probe, ProbeResult } from "./types.ts";

const workerUrl = new URL("./_isolate_worker.ts", import.meta.url);

// The memory cap is the process's, and a test process (its type checker, the tests before)
// is far larger than the CLI: a cap of its own, but for the test of the cap.
const TEST_CAP = 8 * 2 ** 30;
setMemoryCap(TEST_CAP);

/** The isolate of test kind `kind` with one probe per options, closed after `fn`. */
async function withIsolate(
  kind: string,
  options: unknown[],
  fn: (probes: Probe[], isolate: KindIsolate) => Promise<void>,
): Promise<void> {
  const isolate = new KindIsolate(kind, { env: { WHO: "worker" }, workerUrl });
  try {
    await fn(await isolate.probes(options), isolate);
  } finally {
    await isolate.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const never = new AbortController().signal;

Deno.test("KindIsolate runs a kind's probes in a worker, with their options and environment", async () => {
  await withIsolate("echo", [{ n: 1 }, { n: 2 }], async ([a, b]) => {
    assertEquals(await checkOnce(a!, never), { status: "satisfied", detail: '{"n":1} worker' });
    assertEquals(await checkOnce(b!, never), { status: "satisfied", detail: '{"n":2} worker' });
  });
});

Deno.test("KindIsolate.validate() runs the kind's validate in the worker, which then serves the probes", async () => {
  const isolate = new KindIsolate("echo", { env: {}, workerUrl });
  try {
    assertEquals(await isolate.validate([{ n: 1 }, { bad: "port" }]), [
      undefined,
      { flag: "port", message: "refused in the worker: port" },
    ]);
    const [p] = await isolate.probes([{ n: 1 }]);
    assertEquals((await checkOnce(p!, never)).status, "satisfied");
    assertEquals(isolate.started, 1);
  } finally {
    await isolate.close();
  }
});

Deno.test("KindIsolate: the probes mask the run's secrets, and what they register reaches the run", async () => {
  const secrets = new SecretRegistry(["Zq9KnownBefore"]);
  const isolate = new KindIsolate("secretive", { env: {}, workerUrl });
  try {
    const [p] = await isolate.probes([{}], secrets);
    assertEquals(await checkOnce(p!, never), { status: "pending", error: "given ***" });
    assertEquals(secrets.mask("token Zq9FoundAtRunTime"), "token ***");
  } finally {
    await isolate.close();
  }
});

Deno.test("KindIsolate applies the error rule in the worker", async (t) => {
  const rows: [string, string, ProbeResult][] = [
    ["FatalError is fatal", "fatal", { status: "fatal", error: "no retry can fix this" }],
    [
      "an error that escapes the driver ends the attempt as pending, never fatal",
      "stray",
      { status: "pending", error: "the driver failed: out of bounds" },
    ],
  ];
  for (const [name, kind, want] of rows) {
    await t.step(
      name,
      () => withIsolate(kind, [{}], async ([p]) => assertEquals(await checkOnce(p!, never), want)),
    );
  }
});

Deno.test("KindIsolate: a worker that answers an abort is kept for the next attempt", async () => {
  await withIsolate("hang", [{}], async ([p], isolate) => {
    for (let i = 0; i < 3; i++) {
      const ctl = new AbortController();
      const r = checkOnce(p!, ctl.signal);
      await sleep(20);
      ctl.abort(new Error("attempt timed out after 20ms"));
      assertEquals(await r, { status: "pending", error: "attempt timed out after 20ms" });
    }
    await sleep(ABORT_ANSWER_MS + 100);
    assertEquals(isolate.started, 1);
  });
});

Deno.test("KindIsolate stops a worker that does not answer an abort, ends what it held, starts afresh", async () => {
  // The worker blocks its thread for 0.8 s in each attempt: a driver caught in a loop.
  await withIsolate("stall", [{ ms: 800 }, { ms: 800 }], async ([a, b], isolate) => {
    const ctl = new AbortController();
    const first = a!.check({ signal: ctl.signal, attempt: 1 });
    const other = b!.check({ signal: never, attempt: 1 });
    await sleep(100);
    ctl.abort(new Error("attempt timed out"));
    const [r1, r2] = await Promise.all([first, other]);
    for (const r of [r1, r2]) {
      assertEquals(r.status, "pending");
      assertStringIncludes(
        (r as { error: string }).error,
        `the stall driver did not answer within ${ABORT_ANSWER_MS} ms of an aborted attempt`,
      );
    }
    if (Deno.build.os === "linux") {
      // Its thread is still busy: no fresh worker until it returns.
      const refused = await checkOnce(a!, never);
      assertStringIncludes((refused as { error: string }).error, "is still busy");
      assertEquals(isolate.started, 1);
    }
    // Once its thread returned (both queued attempts blocked it), a fresh worker serves.
    for (let i = 0; i < 50 && isolate.started < 2; i++) {
      await sleep(100);
      const ctl2 = new AbortController();
      const again = checkOnce(a!, ctl2.signal);
      await sleep(50);
      ctl2.abort(new Error("enough"));
      await again;
    }
    assertEquals(isolate.started, 2);
  });
});

Deno.test("KindIsolate forwards a watcher's changes and notices, and stops it at the abort", async () => {
  await withIsolate("watcher", [{}], async ([p]) => {
    const ctl = new AbortController();
    const notices: string[] = [];
    let changes = 0;
    // Pushed (`listen`): no generator per condition on the main thread.
    assertEquals(p!.watch, undefined);
    await follow(p!, { signal: ctl.signal, notice: (m) => notices.push(m) }, () => {
      if (++changes === 3) ctl.abort();
    });
    assertEquals(changes, 3);
    assertEquals(notices, ["watching by polling"]);
  });
});

Deno.test("KindIsolate: a watcher that fails in the worker fails on the main thread", async () => {
  await withIsolate("badwatch", [{}], async ([p]) => {
    let error = "";
    try {
      await follow(p!, { signal: never, notice: () => {} }, () => {});
    } catch (e) {
      error = (e as Error).message;
    }
    assertEquals(error, "the stream broke");
  });
});

Deno.test("KindIsolate: past the memory cap, the worker is stopped and its attempt names the cap", async () => {
  const cap = Deno.memoryUsage().rss + 200 * 2 ** 20;
  setMemoryCap(cap);
  try {
    await withIsolate("grow", [{}], async ([p]) => {
      const r = await checkOnce(p!, never);
      assertEquals(r.status, "pending");
      assertStringIncludes(
        (r as { error: string }).error,
        "(WAITCMD_MEMORY_CAP): the grow worker was stopped",
      );
    });
  } finally {
    setMemoryCap(TEST_CAP);
  }
  // The worker's heap goes with it (freed by its thread as it ends).
  for (let i = 0; i < 50 && Deno.memoryUsage().rss >= cap; i++) await sleep(100);
  assert(Deno.memoryUsage().rss < cap, "memory given back");
});

Deno.test("KindIsolate: past the memory cap, one of the worker's watchers says so, the others end silently", async () => {
  const cap = Deno.memoryUsage().rss + 200 * 2 ** 20;
  setMemoryCap(cap);
  try {
    await withIsolate("growwatch", Array.from({ length: 20 }, () => ({})), async (probes) => {
      const ctl = new AbortController();
      const ends = probes.map(async (p) => {
        try {
          await follow(p, { signal: ctl.signal, notice: () => {} }, () => {});
          return "silent";
        } catch (e) {
          return (e as Error).message;
        }
      });
      await sleep(100); // the watchers are set up
      const r = await checkOnce(probes[0]!, never);
      assertStringIncludes((r as { error: string }).error, "the growwatch worker was stopped");
      const said = await Promise.all(ends);
      ctl.abort();
      assertEquals(said.filter((s) => s === "silent").length, 19, said.join("; "));
      assertStringIncludes(said.find((s) => s !== "silent")!, "memory use reached the cap");
    });
  } finally {
    setMemoryCap(TEST_CAP);
  }
});

Deno.test("KindIsolate: a run that starts above the cap keeps room above what it holds", async () => {
  // A cap far below what this process holds: a worker at work would be stopped at once...
  setMemoryCap(64 * 2 ** 20);
  try {
    await withIsolate("hang", [{}], async ([p]) => {
      const attempt = async () => {
        const ctl = new AbortController();
        const r = checkOnce(p!, ctl.signal);
        await sleep(300);
        ctl.abort(new Error("attempt timed out after 300ms"));
        return await r;
      };
      const before = await p!.check({ signal: AbortSignal.timeout(300), attempt: 1 });
      assertStringIncludes((before as { error: string }).error, "memory use reached the cap");
      // ...unless the run noted what it holds once its probes were made.
      noteMemoryFloor();
      assertEquals(await attempt(), {
        status: "pending",
        error: "attempt timed out after 300ms",
      });
    });
  } finally {
    setMemoryCap(TEST_CAP);
  }
});

Deno.test("KindIsolate: what the main thread's own heap grows by does not stop a worker", async () => {
  setMemoryCap(Deno.memoryUsage().rss + 200 * 2 ** 20);
  try {
    await withIsolate("hang", [{}], async ([p]) => {
      noteMemoryFloor();
      const ctl = new AbortController();
      const r = checkOnce(p!, ctl.signal);
      // About 240 MB on this thread (the engine's, as ten thousand conditions' attempts), past
      // the 128 MiB of room above the floor.
      const kept: number[][] = [];
      for (let i = 0; i < 300; i++) kept.push(new Array(100_000).fill(i));
      await sleep(300);
      ctl.abort(new Error("attempt timed out after 300ms"));
      assertEquals(await r, { status: "pending", error: "attempt timed out after 300ms" });
      assertEquals(kept.length, 300);
    });
  } finally {
    setMemoryCap(TEST_CAP);
  }
});

Deno.test("KindIsolate.close() ends a worker that cannot answer", async () => {
  const isolate = new KindIsolate("stall", { env: {}, workerUrl });
  const [p] = await isolate.probes([{ ms: 300 }]);
  void p!.check({ signal: never, attempt: 1 });
  await sleep(50);
  await isolate.close();
  assertEquals(await checkOnce(p!, never), { status: "pending", error: "run ended" });
  await sleep(400); // the thread returns from its loop and ends
});

Deno.test("memoryCap() reads WAITCMD_MEMORY_CAP; a value that is no size is a usage error", () => {
  assertEquals(memoryCap({}), DEFAULT_MEMORY_CAP);
  assertEquals(memoryCap({ WAITCMD_MEMORY_CAP: "768" }), 768 * 2 ** 20);
  assertEquals(memoryCap({ WAITCMD_MEMORY_CAP: "1G" }), 2 ** 30);
  assertEquals(memoryCap({ WAITCMD_MEMORY_CAP: "300MiB" }), 300 * 2 ** 20);
  for (const bad of ["lots", "10M", "-1G", "1T"]) {
    let e: unknown;
    try {
      memoryCap({ WAITCMD_MEMORY_CAP: bad });
    } catch (err) {
      e = err;
    }
    assert(e instanceof UsageError, bad);
    assertEquals(
      e.format(),
      `waitcmd: WAITCMD_MEMORY_CAP: expected a size of at least 64M, such as 512M or 2G, got ${
        JSON.stringify(bad)
      } (see: waitcmd --help)`,
    );
  }
});

Deno.test("Batcher: the frequent messages of a turn go as one, in order with the others", async () => {
  type M = { t: "result" | "change" | "notice"; n: number };
  const sent: (M | { t: "batch"; items: readonly M[] })[] = [];
  const b = new Batcher<M>((m) => sent.push(m), new Set(["result", "change"]));
  for (let n = 1; n <= 3; n++) b.post({ t: "result", n });
  b.post({ t: "change", n: 4 });
  assertEquals(sent, []); // at the end of the turn's microtasks
  await Promise.resolve();
  assertEquals(sent, [{
    t: "batch",
    items: [{ t: "result", n: 1 }, { t: "result", n: 2 }, { t: "result", n: 3 }, {
      t: "change",
      n: 4,
    }],
  }]);
  // Another message sends what is queued first; one queued message goes alone.
  sent.length = 0;
  b.post({ t: "change", n: 5 });
  b.post({ t: "notice", n: 6 });
  b.post({ t: "result", n: 7 });
  assertEquals(sent, [{ t: "change", n: 5 }, { t: "notice", n: 6 }]);
  await Promise.resolve();
  assertEquals(sent, [{ t: "change", n: 5 }, { t: "notice", n: 6 }, { t: "result", n: 7 }]);
});

Deno.test("KindIsolate: a thousand attempts of one turn are answered, each its own", async () => {
  await withIsolate("echo", Array.from({ length: 1000 }, (_, i) => ({ id: i })), async (probes) => {
    const ctl = new AbortController();
    const results = await Promise.all(probes.map((p) => checkOnce(p, ctl.signal)));
    assertEquals(results.length, 1000);
    results.forEach((r, i) =>
      assertEquals(r, { status: "satisfied", detail: `{"id":${i}} worker` })
    );
  });
});
