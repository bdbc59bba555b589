import { assertEquals } from "../tests/_assert.ts";
import { FatalError } from "./errors.ts";
import { guardAttempt, resultOf, settle } from "./settle.ts";

Deno.test("resultOf() makes a FatalError fatal and anything else pending with its text", () => {
  assertEquals(resultOf(new FatalError("job failed")), { status: "fatal", error: "job failed" });
  assertEquals(resultOf(new Error("Connection refused (os error 111)")), {
    status: "pending",
    error: "connection refused",
  });
  assertEquals(resultOf("plain"), { status: "pending", error: "plain" });
});

Deno.test("settle() returns the body's result, or the error rule's for what it throws", async () => {
  const signal = new AbortController().signal;
  assertEquals(await settle(signal, () => Promise.resolve({ status: "satisfied", detail: "d" })), {
    status: "satisfied",
    detail: "d",
  });
  assertEquals(await settle(signal, () => Promise.reject(new FatalError("no"))), {
    status: "fatal",
    error: "no",
  });
  assertEquals(
    await settle(signal, () => {
      throw new Error("sync throw");
    }),
    { status: "pending", error: "sync throw" },
  );
});

Deno.test("settle() resolves at once on abort while the body still waits", async () => {
  const ctl = new AbortController();
  let release!: () => void;
  const hanging = new Promise<void>((r) => (release = r));
  const p = settle(ctl.signal, async () => {
    await hanging;
    throw new Error("late failure, never reported");
  });
  ctl.abort(new Error("attempt timed out after 1s"));
  assertEquals(await p, { status: "pending", error: "attempt timed out after 1s" });
  release();
  await hanging;
  assertEquals(
    await settle(ctl.signal, () => Promise.resolve({ status: "satisfied", detail: "" })),
    {
      status: "pending",
      error: "attempt timed out after 1s",
    },
  );
});

Deno.test("settle() takes a body that returns a plain value instead of a promise", async () => {
  const signal = new AbortController().signal;
  const body = (() => ({ status: "satisfied", detail: "sync" })) as unknown as () => Promise<
    { status: "satisfied"; detail: string }
  >;
  assertEquals(await settle(signal, body), { status: "satisfied", detail: "sync" });
});

Deno.test("settle() on a guarded attempt's signal applies the error rule and leaves the abort to the caller", async () => {
  const ctl = new AbortController();
  guardAttempt(ctl.signal);
  assertEquals(
    await settle(ctl.signal, () => Promise.resolve({ status: "satisfied", detail: "d" })),
    { status: "satisfied", detail: "d" },
  );
  assertEquals(
    await settle(ctl.signal, () => {
      throw new FatalError("sync");
    }),
    { status: "fatal", error: "sync" },
  );
  assertEquals(await settle(ctl.signal, () => Promise.reject(new Error("async"))), {
    status: "pending",
    error: "async",
  });
  // An abort does not end it: the caller (the runner) ends the attempt.
  let release!: () => void;
  const hanging = new Promise<void>((r) => (release = r));
  let ended = false;
  const p = settle(ctl.signal, async () => {
    await hanging;
    return { status: "pending" as const, error: "late" };
  }).then((r) => {
    ended = true;
    return r;
  });
  ctl.abort(new Error("attempt timed out after 1s"));
  await new Promise((r) => setTimeout(r, 10));
  assertEquals(ended, false);
  release();
  assertEquals(await p, { status: "pending", error: "late" });
  // Another signal is settled in full.
  const other = new AbortController();
  const q = settle(other.signal, () => new Promise(() => {}));
  other.abort(new Error("run ended"));
  assertEquals(await q, { status: "pending", error: "run ended" });
});
