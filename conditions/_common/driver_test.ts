import { assertEquals, assertRejects } from "../../tests/_assert.ts";
import { drive, FakeClock, settle } from "../../engine/_fake_clock.ts";
import { CLOSE_GRACE_MS, DriverSessions } from "./driver.ts";

/** A client that records what was done to it; `end` answers only when `answer` is called. */
class FakeClient {
  readonly log: string[] = [];
  answer: () => void = () => {};
  end(): Promise<void> {
    this.log.push("end");
    return new Promise((resolve) => this.answer = resolve);
  }
  destroy(): void {
    this.log.push("destroy");
  }
}

function sessionsOf(clock = new FakeClock()) {
  return new DriverSessions<FakeClient>({
    end: (c) => c.end(),
    destroy: (c) => c.destroy(),
  }, clock);
}

Deno.test("DriverSessions.run() ends an up session politely, then destroys it", async () => {
  const clock = new FakeClock();
  const sessions = sessionsOf(clock);
  const c = new FakeClient();
  const running = sessions.run(c, new AbortController().signal, (_, state) => {
    state.up = true;
    return Promise.resolve("ok");
  });
  await settle();
  c.answer();
  assertEquals(await running, "ok");
  assertEquals(c.log, ["end", "destroy"]);
});

Deno.test("DriverSessions.run() gives a polite close at most the grace", async () => {
  const clock = new FakeClock();
  const sessions = sessionsOf(clock);
  const c = new FakeClient();
  const started = clock.now();
  const r = await drive(
    clock,
    sessions.run(c, new AbortController().signal, (_, state) => {
      state.up = true;
      return Promise.resolve(1);
    }),
  );
  assertEquals(r, 1);
  assertEquals(clock.now() - started, CLOSE_GRACE_MS);
  assertEquals(c.log, ["end", "destroy"]);
});

Deno.test("DriverSessions.run() destroys a session that never came up, without a goodbye", async () => {
  const c = new FakeClient();
  await assertRejects(
    () =>
      sessionsOf().run(c, new AbortController().signal, () => Promise.reject(new Error("refused"))),
    Error,
    "refused",
  );
  assertEquals(c.log, ["destroy"]);
});

Deno.test("DriverSessions.run() destroys the client at the abort, whatever it is doing", async () => {
  const c = new FakeClient();
  const ctl = new AbortController();
  const running = sessionsOf().run(c, ctl.signal, (_, state) => {
    state.up = true;
    return new Promise<never>(() => {}); // a server that never answers
  });
  await settle();
  ctl.abort(new Error("attempt timed out"));
  assertEquals(c.log, ["destroy"]);
  // The session's promise is the driver's: it settles when the driver notices, which a
  // real driver does once its socket is destroyed; the attempt itself ended at the abort.
  void running;
});

Deno.test("DriverSessions.run() destroys a client that arrives after the abort", async () => {
  const c = new FakeClient();
  const ctl = new AbortController();
  let arrive: (c: FakeClient) => void = () => {};
  const connecting = new Promise<FakeClient>((resolve) => arrive = resolve);
  const running = sessionsOf().run(connecting, ctl.signal, () => Promise.resolve("never"));
  ctl.abort(new Error("run ended"));
  await assertRejects(() => running, Error, "run ended");
  assertEquals(c.log, []);
  arrive(c);
  await settle();
  assertEquals(c.log, ["destroy"]);
});

Deno.test("DriverSessions.close() destroys every open client, and is idempotent", async () => {
  const sessions = sessionsOf();
  const a = new FakeClient();
  const b = new FakeClient();
  const never = () => new Promise<never>(() => {});
  void sessions.run(a, new AbortController().signal, never);
  void sessions.run(b, new AbortController().signal, never);
  await settle();
  sessions.close();
  sessions.close();
  assertEquals([a.log, b.log], [["destroy"], ["destroy"]]);
});

/** A watcher's session: yields `n` times holding its client, then returns "ended". */
async function* yieldsWith(c: FakeClient, n: number): AsyncGenerator<number, string> {
  for (let i = 0; i < n; i++) {
    c.log.push(`yield ${i}`);
    yield i;
  }
  return "ended";
}

Deno.test("DriverSessions.follow() holds the client across yields and destroys it at the end", async () => {
  const sessions = sessionsOf();
  const c = new FakeClient();
  const seen: number[] = [];
  const it = sessions.follow(c, new AbortController().signal, (client) => yieldsWith(client, 2));
  let r = await it.next();
  while (!r.done) {
    assertEquals(c.log.includes("destroy"), false, "the client is held while the session yields");
    seen.push(r.value);
    r = await it.next();
  }
  assertEquals([seen, r.value], [[0, 1], "ended"]);
  assertEquals(c.log, ["yield 0", "yield 1", "destroy"]);
  sessions.close();
  assertEquals(c.log.filter((l) => l === "destroy").length, 1, "close has nothing left to destroy");
});

Deno.test("DriverSessions.follow() destroys the client when the consumer stops, at the abort, and at close", async () => {
  const sessions = sessionsOf();
  const stopped = new FakeClient();
  const it = sessions.follow(stopped, new AbortController().signal, (c) => yieldsWith(c, 5));
  await it.next();
  await it.return("stopped");
  assertEquals(stopped.log, ["yield 0", "destroy"]);

  const aborted = new FakeClient();
  const ctl = new AbortController();
  const it2 = sessions.follow(aborted, ctl.signal, (c) => yieldsWith(c, 5));
  await it2.next();
  ctl.abort();
  assertEquals(aborted.log, ["yield 0", "destroy"], "destroyed at the abort, mid-session");

  const open = new FakeClient();
  const it3 = sessions.follow(open, new AbortController().signal, (c) => yieldsWith(c, 5));
  await it3.next();
  sessions.close();
  assertEquals(open.log, ["yield 0", "destroy"]);
});

Deno.test("DriverSessions.follow() destroys the client when the session throws, and throws it", async () => {
  const sessions = sessionsOf();
  const c = new FakeClient();
  // deno-lint-ignore require-yield
  async function* fails(): AsyncGenerator<number, string> {
    throw new Error("stream refused");
  }
  const it = sessions.follow(c, new AbortController().signal, fails);
  await assertRejects(() => it.next(), Error, "stream refused");
  assertEquals(c.log, ["destroy"]);
});
