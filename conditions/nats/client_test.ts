/**
 * The nats probe's own transport (client.ts) against a real nats-server
 * (Debian's package) and, for a server that misbehaves, a fake one in the
 * test process: nothing escapes as an uncaught error, nothing outlives an
 * attempt, an abort ends it at once, and the client's console output never
 * reaches stdout or stderr.
 */

import { assert, assertEquals, assertMatch } from "../../tests/_assert.ts";
import { ignoreWithout, probeOf, repoRootDir } from "../../tests/_kit.ts";
import { makeNats, natsMissing, type NatsServer, type NatsServerOptions } from "./_service.ts";

const missing = await natsMissing();

/**
 * A test against a nats-server of `opts` (ignored without one), removed afterwards. The
 * sanitizers stay on: a timer or a socket of the client still open fails the test.
 */
function natsTest(
  name: string,
  opts: NatsServerOptions,
  fn: (server: NatsServer) => Promise<void>,
): void {
  Deno.test({
    name,
    ignore: ignoreWithout("nats-server", missing),
    fn: async () => {
      const server = await makeNats(opts);
      try {
        await fn(server);
      } finally {
        await server.remove();
      }
    },
  });
}

natsTest(
  "nats probe: refused logins, many times over, leave no uncaught error (Deno's late ECONNRESET)",
  { user: { name: "app", password: "right-pw" } },
  async (server) => {
    let strays = 0;
    const count = (e: ErrorEvent) => {
      strays++;
      e.preventDefault();
    };
    globalThis.addEventListener("error", count);
    try {
      const probe = await probeOf(["nats", server.url("app:wrong-pw")]);
      for (let i = 1; i <= 200; i++) {
        const r = await probe.check({ signal: new AbortController().signal, attempt: i });
        assertEquals(r, {
          status: "pending",
          error: 'authentication failed for user "app": Authorization Violation',
        });
      }
      // Late socket errors arrive after the attempts: give them a moment to show.
      await new Promise((r) => setTimeout(r, 300));
      assertEquals(strays, 0, "uncaught errors after refused logins");
      await probe.close?.();
    } finally {
      globalThis.removeEventListener("error", count);
    }
  },
);

natsTest("nats probe: a satisfied attempt and a pending one leave no timer or socket behind", {
  jetstream: true,
}, async (server) => {
  const ok = await probeOf(["nats", server.url(), "--jetstream"]);
  const r = await ok.check({ signal: new AbortController().signal, attempt: 1 });
  assert(r.status === "satisfied", JSON.stringify(r));
  assertMatch(r.detail, /^NATS \d+\.\d+\.\d+, JetStream \(0 streams\)$/);
  const missingStream = await probeOf(["nats", server.url(), "--stream", "NONE"]);
  assertEquals(
    await missingStream.check({ signal: new AbortController().signal, attempt: 1 }),
    { status: "pending", error: 'stream "NONE" not found' },
  );
  await ok.close?.();
  await missingStream.close?.();
});

natsTest("nats probe: an abort at any point of an attempt ends it at once, leaving nothing", {
  jetstream: true,
}, async (server) => {
  // Aborts land while connecting, before INFO, during CONNECT/PONG and during the
  // JetStream request, as the random delay falls.
  const probe = await probeOf(["nats", server.url(), "--stream", "NONE"]);
  let worst = 0;
  for (let i = 1; i <= 300; i++) {
    const ctl = new AbortController();
    const checking = probe.check({ signal: ctl.signal, attempt: i });
    await new Promise((r) => setTimeout(r, Math.random() * 6));
    const t0 = performance.now();
    ctl.abort(new Error("run ended"));
    const r = await checking;
    worst = Math.max(worst, performance.now() - t0);
    assertEquals(r.status, "pending");
  }
  // "At once": well before the client's own timeouts (10 s, 5 s), with room for a loaded CI.
  assert(worst < 500, `an attempt ended ${worst.toFixed(0)} ms after its abort`);
  await probe.close?.();
});

Deno.test("nats probe: an abort ends an attempt on a silent server at once, leaving nothing", async () => {
  // Accepts and never speaks: the client waits for INFO.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of listener) held.push(c);
  })().catch(() => {});
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    const probe = await probeOf(["nats", `nats://127.0.0.1:${port}`]);
    const ctl = new AbortController();
    const checking = probe.check({ signal: ctl.signal, attempt: 1 });
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    ctl.abort(new Error("run ended"));
    const r = await checking;
    const took = performance.now() - t0;
    assertEquals(r.status, "pending");
    // "At once": well before the client's own 10 s handshake timeout, with room for a loaded CI.
    assert(took < 500, `the attempt ended ${took.toFixed(0)} ms after the abort`);
    await probe.close?.();
  } finally {
    listener.close();
    for (const c of held) c.close();
    await accepting;
  }
});

Deno.test("nats probe: the client's console output never reaches stdout or stderr", async () => {
  // A server whose INFO is valid and whose next line is not NATS: the client's parser
  // fails and the client prints "reader closed" to the console.
  const script = `
    import { probeOf } from "${repoRootDir}/tests/_kit.ts";
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    (async () => {
      for await (const c of listener) {
        const w = (s) => c.write(new TextEncoder().encode(s));
        await w('INFO {"server_id":"x","version":"2.9.10","proto":1,"max_payload":1048576}\\r\\n');
        await new Promise((r) => setTimeout(r, 50));
        await w("GARBAGE THAT IS NOT NATS\\r\\n");
      }
    })().catch(() => {});
    const port = listener.addr.port;
    const probe = await probeOf(["nats", "nats://127.0.0.1:" + port]);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error("deadline")), 500);
    const r = await probe.check({ signal: ctl.signal, attempt: 1 });
    console.log("result " + r.status);
    console.error("stderr works");
    Deno.exit(0);
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", `${repoRootDir}/deno.json`, script],
    cwd: repoRootDir,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals([out.code, stdout, stderr], [0, "result pending\n", "stderr works\n"]);
});
