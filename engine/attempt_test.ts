import { assertEquals } from "../tests/_assert.ts";
import { checkOnce, fromOutside, resultOf } from "./attempt.ts";
import { FatalError } from "./errors.ts";
import { ownWords, SecretRegistry } from "./masking.ts";
import type { Probe, ProbeResult } from "./types.ts";

/** A probe whose check is `check`. */
const probeOf = (check: () => Promise<ProbeResult>): Probe => ({ check });

Deno.test("resultOf() makes a FatalError fatal and anything else pending with its text", () => {
  assertEquals(resultOf(new FatalError("job failed")), { status: "fatal", error: "job failed" });
  assertEquals(resultOf(new Error("Connection refused (os error 111)")), {
    status: "pending",
    error: "connection refused",
  });
  assertEquals(resultOf("plain"), { status: "pending", error: "plain" });
});

Deno.test("checkOnce() returns the probe's result, or the error rule's for what it throws", async () => {
  const signal = new AbortController().signal;
  assertEquals(
    await checkOnce(probeOf(() => Promise.resolve({ status: "satisfied", detail: "d" })), signal),
    { status: "satisfied", detail: "d" },
  );
  assertEquals(await checkOnce(probeOf(() => Promise.reject(new FatalError("no"))), signal), {
    status: "fatal",
    error: "no",
  });
  assertEquals(
    await checkOnce(
      probeOf(() => {
        throw new Error("sync throw");
      }),
      signal,
    ),
    { status: "pending", error: "sync throw" },
  );
  const plain = probeOf(() =>
    ({ status: "satisfied", detail: "sync" }) as unknown as Promise<ProbeResult>
  );
  assertEquals(await checkOnce(plain, signal), { status: "satisfied", detail: "sync" });
});

Deno.test("checkOnce() ends at once on abort while the probe still waits, with no stray", async () => {
  const ctl = new AbortController();
  let release!: () => void;
  const hanging = new Promise<void>((r) => (release = r));
  const probe = probeOf(async () => {
    await hanging;
    throw new Error("late failure, never reported");
  });
  const p = checkOnce(probe, ctl.signal);
  ctl.abort(new Error("attempt timed out after 1s"));
  assertEquals(await p, { status: "pending", error: "attempt timed out after 1s" });
  release();
  await hanging;
  assertEquals(
    await checkOnce(
      probeOf(() => Promise.resolve({ status: "satisfied", detail: "" })),
      ctl.signal,
    ),
    { status: "pending", error: "attempt timed out after 1s" },
  );
});

Deno.test("fromOutside() masks the run's secrets by value in a result's texts, not its captures", () => {
  const secrets = new SecretRegistry(["hunter22", "postgres"]);
  secrets.keep(ownWords(["postgres postgres://postgres:***@db/postgres"]));
  assertEquals(
    fromOutside(
      { status: "pending", error: "pw hunter22 for postgres", hint: "not hunter22" },
      secrets,
    ),
    { status: "pending", error: "pw *** for postgres", hint: "not ***" },
  );
  assertEquals(
    fromOutside({
      status: "satisfied",
      detail: "as postgres@postgres, db://u:pw@h",
      summary: "hunter22",
      captures: { pw: "hunter22" },
    }, secrets),
    {
      status: "satisfied",
      detail: "as postgres@postgres, db://u:***@h",
      summary: "***",
      captures: { pw: "hunter22" },
    },
  );
  const same = { status: "pending" as const, error: "connection refused" };
  assertEquals(fromOutside(same, secrets) === same, true);
});
