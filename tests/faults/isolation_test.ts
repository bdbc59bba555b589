/**
 * Isolation through the CLI (docs/contract.md §2, docs/reliability.md): the
 * libraries of isolated kinds load in their workers, so a signal during
 * their import ends the run at once; the memory cap is settable and a bad
 * value is a usage error; past the cap an attempt ends as pending, naming
 * it, and the run goes on.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { cliTest, runCli, WAITCMD } from "../e2e/_cli.ts";
import { bytes, faultRun, garbageServer, lastError, websocketUpgrade } from "./_garbage.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** What the shared machine may add to a measured exit, beyond the promised 100 ms. */
const CI_MARGIN_MS = 400;

cliTest(
  "isolation: SIGTERM while the kinds' libraries load ends the run at once (exit 143)",
  async () => {
    // Five of the heaviest libraries (Kubernetes, Kafka, S3, Docker, MongoDB): well over a
    // second of module evaluation on one thread; each in its worker, the main thread stays free.
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-isolation-" });
    try {
      await Deno.writeTextFile(
        `${dir}/kubeconfig`,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n" +
          "users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n" +
          "current-context: x\n",
      );
      const child = new Deno.Command(WAITCMD, {
        args: [
          "-t",
          "30s",
          "orch",
          "pod/x",
          "--kubeconfig",
          `${dir}/kubeconfig`,
          "--",
          "kafka",
          "127.0.0.1:1",
          "--",
          "objstore",
          "objstore://bucket/key",
          "--endpoint-url",
          "http://127.0.0.1:1",
          "--",
          "container",
          "web",
          // mongodb's validation loads its driver too (in its worker).
          "--",
          "mongodb",
          "mongodb://127.0.0.1:1/app",
        ],
        env: { NO_COLOR: "1", DOCKER_HOST: "tcp://127.0.0.1:1" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // Deno is up and the command line parsed by then; the libraries are loading.
      await new Promise((r) => setTimeout(r, 400));
      const sent = performance.now();
      child.kill("SIGTERM");
      const out = await child.output();
      const took = performance.now() - sent;
      assertEquals(out.code, 143);
      assert(took <= 100 + CI_MARGIN_MS, `exited ${Math.round(took)} ms after SIGTERM`);
      assertStringIncludes(new TextDecoder().decode(out.stderr), "cancelled by SIGTERM");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/** The highest N among the threads of `pid` named `worker-N` (Deno's Web Workers), 0 for none. */
function workersStarted(pid: number): number {
  let most = 0;
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        const m = /^worker-(\d+)$/.exec(
          Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/comm`).trim(),
        );
        if (m) most = Math.max(most, Number(m[1]));
      } catch {
        // the thread ended
      }
    }
  } catch {
    // the process ended
  }
  return most;
}

/** A PEM public key (cosign --key), made now. */
async function publicKeyPem(): Promise<string> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  const b64 = btoa(String.fromCharCode(...spki));
  return `-----BEGIN PUBLIC KEY-----\n${b64}\n-----END PUBLIC KEY-----\n`;
}

cliTest(
  "isolation: SIGTERM as the workers of fifteen isolated kinds start: at most one more starts, exit 143 at once",
  async () => {
    // `new Worker` holds the thread that calls it until the worker's runtime is made: the
    // workers start one per turn of the event loop, so a signal waits for one start, not for
    // the rest of the kinds (docs/reliability.md). Started all at once, the six that validate
    // in their workers, then the nine others, each held a signal for the whole batch.
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-isolation-" });
    try {
      await Deno.writeTextFile(
        `${dir}/kubeconfig`,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n" +
          "users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n" +
          "current-context: x\n",
      );
      await Deno.writeTextFile(`${dir}/cosign.pub`, await publicKeyPem());
      const conditions = [
        ["archive", `${dir}/none.tar.gz`, "--contains", "x"],
        ["cosign", "--blob", `${dir}/none`, "--signature", `${dir}/none.sig`],
        ["--key", `${dir}/cosign.pub`],
        ["grpc", "127.0.0.1:1"],
        ["kafka", "127.0.0.1:1"],
        ["mongodb", "mongodb://127.0.0.1:1/app"],
        ["mysql", "mysql://app:pw@127.0.0.1:1/app"],
        ["nats", "nats://127.0.0.1:1"],
        ["objstore", "objstore://bucket/key", "--endpoint-url", "http://127.0.0.1:1"],
        ["orch", "pod/x", "--kubeconfig", `${dir}/kubeconfig`],
        ["postgres", "postgres://app:pw@127.0.0.1:1/app"],
        ["rabbitmq", "amqp://app:pw@127.0.0.1:1/"],
        ["redis", "redis://127.0.0.1:1/0"],
        ["ssh", "127.0.0.1:1"],
        ["websocket", "ws://127.0.0.1:1/"],
        ["container", "web"],
      ];
      const args = ["-t", "60s"];
      for (const words of conditions) {
        args.push(...(args.length > 2 && !words[0]!.startsWith("-") ? ["--"] : []), ...words);
      }
      const late: number[] = [];
      const after: number[] = [];
      /** Times between two workers' starts seen: the median is one start, on this machine now. */
      const gaps: number[] = [];
      // The first worker, the seventh (the first not started by a validation), the twelfth.
      for (const at of [1, 7, 12]) {
        const child = new Deno.Command(WAITCMD, {
          args,
          env: { NO_COLOR: "1", DOCKER_HOST: "tcp://127.0.0.1:1" },
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const output = child.output();
        const limit = Date.now() + 60_000;
        let last = { n: 0, at: performance.now() };
        while (workersStarted(child.pid) < at && Date.now() < limit) {
          const n = workersStarted(child.pid);
          if (n > last.n) {
            if (last.n > 0) gaps.push((performance.now() - last.at) / (n - last.n));
            last = { n, at: performance.now() };
          }
          await new Promise((r) => setTimeout(r, 2));
        }
        const seen = workersStarted(child.pid);
        const sent = performance.now();
        child.kill("SIGTERM");
        // The last worker seen before the process ends.
        let most = seen;
        const watch = (async () => {
          let n: number;
          while ((n = workersStarted(child.pid)) > 0 || most === 0) {
            most = Math.max(most, n);
            await new Promise((r) => setTimeout(r, 1));
          }
        })();
        const out = await output;
        late.push(Math.round(performance.now() - sent));
        await watch;
        after.push(most - seen);
        assertEquals(out.code, 143, new TextDecoder().decode(out.stderr));
        assertStringIncludes(new TextDecoder().decode(out.stderr), "cancelled by SIGTERM");
      }
      const startGap = gaps.sort((a, b) => a - b)[gaps.length >> 1] ?? 0;
      console.log(
        `SIGTERM answered ${late.join(", ")} ms late; workers started after: ${after}; ` +
          `one start took ${Math.round(startGap)} ms (median)`,
      );
      assert(Math.max(...after) <= 1, `workers started after the signal: ${after.join(", ")}`);
      // The start under way when the signal came is waited for (the runtime's, see above); one
      // start's time varies, twice the median is its bound here.
      assert(
        Math.max(...late) <= 100 + CI_MARGIN_MS + 2 * startGap,
        `exited ${late.join(", ")} ms after SIGTERM (one start: ${Math.round(startGap)} ms)`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

cliTest("isolation: WAITCMD_MEMORY_CAP that is no size is a usage error naming it", async () => {
  const r = await runCli(["-t", "2s", "tcp", "127.0.0.1:1"], {
    env: { WAITCMD_MEMORY_CAP: "plenty" },
  });
  assertEquals(r.code, 2);
  assertEquals(
    r.stderr,
    'waitcmd: WAITCMD_MEMORY_CAP: expected a size of at least 64M, such as 512M or 2G, got "plenty" (see: waitcmd --help)\n',
  );
  assertEquals(r.stdout, "");
});

Deno.test({
  name:
    "isolation: an attempt that takes the memory to the cap ends as pending naming it; the run goes on",
  ...opts,
  fn: async () => {
    // A WebSocket server sending 15 MiB messages without end, none matching: the client keeps
    // up to 16 of them waiting to be matched. (A data-store kind's sockets stop at 4 MiB before
    // the memory can grow: engine/socket_cap.ts.)
    const size = 15 * 2 ** 20;
    const header = new Uint8Array(10);
    header[0] = 0x81;
    header[1] = 127;
    new DataView(header.buffer).setBigUint64(2, BigInt(size));
    const frame = bytes(header, new Uint8Array(size).fill(97));
    const server = garbageServer("zero", { greeting: websocketUpgrade, huge: frame, zero: frame });
    try {
      const r = await faultRun(
        [
          "-t",
          "6s",
          "-i",
          "200ms",
          "websocket",
          `ws://127.0.0.1:${server.port}/`,
          "--matches",
          "x",
        ],
        { env: { WAITCMD_MEMORY_CAP: "256M" } },
      );
      assertEquals(r.code, 1);
      assertEquals(r.stderr, "");
      assertStringIncludes(
        lastError(r),
        "memory use reached the cap of 256 MiB (WAITCMD_MEMORY_CAP): the websocket worker was stopped",
      );
      const attempts = r.stdout.split("\n").filter((l) => l.includes('"event":"attempt"'));
      assert(attempts.length >= 2, `the run went on after the cap: ${attempts.length} attempts`);
      // At loopback speed, in 15 MiB frames, the worker grows by tens of MiB between two
      // samples of 25 ms and while it is being ended: the process peaked at 234-257 MiB under
      // this 256 MiB cap (257-268 MiB when the watchdog acted 128 MiB above the run's 74 MiB;
      // docs/reliability.md, Isolation). What holds is that it stays near the cap.
      assert(r.peakRss < 272 * 2 ** 20, `peak RSS ${Math.round(r.peakRss / 2 ** 20)} MiB`);
    } finally {
      server.close();
    }
  },
});
