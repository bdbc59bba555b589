/**
 * The conformance suite: one contract, run over every registered kind (as
 * every restic backend runs one shared suite). A new kind adds a row to
 * DEAD_TARGETS below and passes everything else unchanged.
 *
 * Per kind: its examples parse; `parse` does no I/O (checked in a process
 * without permissions); `check` against a dead target returns a result,
 * never throws, and returns within 100 ms of an abort; `close` is
 * idempotent; the display target holds no secret; help and completions
 * list every flag with its values.
 */

import { createSocket } from "node:dgram";
import { assert, assertEquals } from "../_assert.ts";
import { registry } from "../../conditions/all.ts";
import { completionScript } from "../../output/completions.ts";
import { kindHelp } from "../../output/help.ts";
import { readyPlan, repoRootDir } from "../_kit.ts";
import { holdConnections } from "../services/_util.ts";
import { checkOnce } from "../../engine/attempt.ts";

/** A secret that must never show in a display name. */
const MARK = "Zq9SecretMark";

/** Local things that never answer, shared by the rows. */
interface Dead {
  /** A TCP port that accepts and then never says anything. */
  readonly silentTcp: number;
  /** A UDP port nobody reads. */
  readonly silentUdp: number;
  /** A directory where nothing exists. */
  readonly dir: string;
}

/**
 * For every kind: a command line whose target is dead (refused, silent,
 * missing), and whose secrets (where the kind takes any) are MARK.
 */
const DEAD_TARGETS: Record<string, (d: Dead) => { args: string[]; env?: Record<string, string> }> =
  {
    http: (d) => ({
      args: ["http", `http://user:${MARK}@127.0.0.1:${d.silentTcp}/?token=${MARK}`],
    }),
    tcp: () => ({ args: ["tcp", "127.0.0.1:1"] }),
    file: (d) => ({ args: ["file", `${d.dir}/none`] }),
    log: (d) => ({ args: ["log", `${d.dir}/none.log`, "--contains", "x"] }),
    dns: (d) => ({
      args: ["dns", "app.test", "--resolver", "wire", "--server", `127.0.0.1:${d.silentUdp}`],
    }),
    tls: (d) => ({ args: ["tls", `127.0.0.1:${d.silentTcp}`] }),
    ssh: (d) => ({
      args: ["ssh", `127.0.0.1:${d.silentTcp}`, "--user", "u", "--password", MARK],
    }),
    objstore: (d) => ({
      args: [
        ...["objstore", "objstore://bucket/key"],
        ...["--endpoint-url", `http://127.0.0.1:${d.silentTcp}`, "--access-key-id", "AKID"],
        ...["--secret-access-key", MARK],
      ],
    }),
    glob: (d) => ({ args: ["glob", `${d.dir}/*.none`] }),
    ports: () => ({ args: ["ports", "127.0.0.1", "--range", "1-2"] }),
    orch: (d) => ({
      args: ["orch", "pod/x", "--kubeconfig", `${d.dir}/kubeconfig`],
    }),
    container: (d) => ({
      args: ["container", "web"],
      env: { DOCKER_HOST: `unix://${d.dir}/docker.sock` },
    }),
    process: () => ({ args: ["process", "--name", "no-such-process-zq9"] }),
    svcmgr: (d) => ({
      args: ["svcmgr", "none-zq9.service", "--user"],
      env: { DBUS_SESSION_BUS_ADDRESS: `unix:path=${d.dir}/bus`, XDG_RUNTIME_DIR: d.dir },
    }),
    exec: () => ({ args: ["exec", "--", "sleep", "5"] }),
    unix: (d) => ({ args: ["unix", `${d.dir}/none.sock`] }),
    postgres: () => ({ args: ["postgres", `postgres://app:${MARK}@127.0.0.1:1/app`] }),
    mysql: () => ({
      args: ["mysql", "mysql://app@127.0.0.1:1/app", "--password-env", "CONF_PW"],
      env: { CONF_PW: MARK },
    }),
    redis: () => ({ args: ["redis", `redis://app:${MARK}@127.0.0.1:1/0`, "--key", "k"] }),
    mongodb: (d) => ({ args: ["mongodb", `mongodb://app:${MARK}@127.0.0.1:${d.silentTcp}/app`] }),
    rabbitmq: (d) => ({
      args: ["rabbitmq", `amqp://app:${MARK}@127.0.0.1:${d.silentTcp}/prod`, "--queue", "jobs"],
    }),
    kafka: (d) => ({
      args: [
        ...["kafka", `127.0.0.1:${d.silentTcp}`, "--sasl-mechanism", "plain", "--user", "app"],
        ...["--password-env", "CONF_KAFKA_PW"],
      ],
      env: { CONF_KAFKA_PW: MARK },
    }),
    nats: (d) => ({
      args: ["nats", `nats://app:${MARK}@127.0.0.1:${d.silentTcp}`, "--stream", "ORDERS"],
    }),
    pidfile: (d) => ({ args: ["pidfile", `${d.dir}/none.pid`] }),
    lockfile: (d) => ({ args: ["lockfile", `${d.dir}/none.lock`, "--present"] }),
    permission: (d) => ({ args: ["permission", `${d.dir}/none`, "--mode", "0644"] }),
    checksum: (d) => ({
      args: ["checksum", `${d.dir}/none.bin`, "--equals", `md5:${"0".repeat(32)}`],
    }),
    archive: (d) => ({ args: ["archive", `${d.dir}/none.tar.gz`, "--contains", "x"] }),
    cosign: (d) => {
      // validate reads the key before any probe: a real one (Ed25519), the blob missing.
      Deno.writeTextFileSync(
        `${d.dir}/cosign.pub`,
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAyIBwwTtiyDoUbtP+f549R3QhCAegYGHy1f1ks5/2Vzw=\n-----END PUBLIC KEY-----\n",
      );
      return {
        args: [
          ...["cosign", "--blob", `${d.dir}/none.bin`, "--signature", `${d.dir}/none.sig`],
          ...["--key", `${d.dir}/cosign.pub`],
        ],
      };
    },
    grpc: (d) => ({
      args: ["grpc", `127.0.0.1:${d.silentTcp}`, "--header", `authorization: Bearer ${MARK}`],
    }),
    websocket: (d) => ({
      args: [
        ...["websocket", `ws://user:${MARK}@127.0.0.1:${d.silentTcp}/?token=${MARK}`],
        ...["--header", `X-Api-Key: ${MARK}`],
      ],
    }),
    udp: (d) => ({ args: ["udp", `127.0.0.1:${d.silentUdp}`, "--send", "ping"] }),
    ntp: (d) => ({ args: ["ntp", `127.0.0.1:${d.silentUdp}`] }),
    influxdb: (d) => ({ args: ["influxdb", `http://app:${MARK}@127.0.0.1:${d.silentTcp}`] }),
    // Every loopback address answers ping: the dead case here is ping missing (fatal).
    icmp: (d) => ({ args: ["icmp", "127.0.0.1"], env: { PATH: d.dir } }),
  };

async function withDead<T>(fn: (d: Dead) => Promise<T>): Promise<T> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const silent = holdConnections(listener);
  const udp = createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-conformance-" });
  const silentTcp = (listener.addr as Deno.NetAddr).port;
  await Deno.writeTextFile(
    `${dir}/kubeconfig`,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:" + silentTcp +
      "', insecure-skip-tls-verify: true}}]",
      "users: [{name: u, user: {token: " + MARK + "}}]",
      "contexts: [{name: x, context: {cluster: c, user: u}}]",
      "current-context: x",
      "",
    ].join("\n"),
  );
  try {
    return await fn({ silentTcp, silentUdp: udp.address().port, dir });
  } finally {
    await silent.close();
    udp.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test("conformance: every registered kind has a dead-target row, and every row a kind", () => {
  assertEquals(
    registry.kinds.map((k) => k.name).sort(),
    Object.keys(DEAD_TARGETS).sort(),
  );
});

Deno.test("conformance: parse() of every kind's examples does no I/O (no permissions)", async () => {
  const deno = Deno.execPath();
  const out = await new Deno.Command(deno, {
    args: [
      ...["run", "--no-prompt", "--quiet", "--config", `${repoRootDir}/deno.json`],
      `${repoRootDir}/tests/conformance/_parse_noio.ts`,
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const err = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 0, `the no-permission parse run failed:\n${err}`);
  const lines = text.trim().split("\n");
  const failures = lines.filter((l) => !l.startsWith("ok "));
  assertEquals(failures, [], "examples that failed to parse without permissions");
  const examples = registry.kinds.reduce((n, k) => n + k.examples.length, 0);
  assertEquals(lines.length, examples, "one line per example");
});

for (const kind of registry.kinds) {
  Deno.test({
    name: `conformance ${kind.name}: check on a dead target returns a result and stops on abort`,
    ...opts,
    fn: () =>
      withDead(async (d) => {
        const row = DEAD_TARGETS[kind.name]!(d);
        const plan = await readyPlan(row.args, { ...row.env });
        const c = plan.conditions[0]!;
        assert(!c.name.includes(MARK), `display name holds a secret: ${c.name}`);
        assert(!c.target.includes(MARK), `target holds a secret: ${c.target}`);

        // One attempt left to finish on its own (bounded by 3 s), through the attempt boundary
        // (engine/attempt.ts) as the runner runs it: a result, never a satisfied one.
        const first = await checkOnce(c.probe, AbortSignal.timeout(3000), 1);
        assert(
          first.status === "pending" || first.status === "fatal",
          `a dead target must not satisfy ${kind.name}: ${JSON.stringify(first)}`,
        );
        assert(!first.error.includes(MARK), `the result holds a secret: ${first.error}`);

        // One attempt aborted after 50 ms: the boundary ends it within 100 ms of the abort, and
        // the probe itself (its own promise, resolved or rejected) stops within a second, so
        // nothing it holds outlives the attempt for long.
        const ctl = new AbortController();
        const own = Promise.resolve().then(() => c.probe.check({ signal: ctl.signal, attempt: 2 }))
          .then(() => performance.now(), () => performance.now());
        const checking = checkOnce(c.probe, ctl.signal, 3);
        await new Promise((r) => setTimeout(r, 50));
        const abortedAt = performance.now();
        ctl.abort(new Error("run ended"));
        const second = await checking;
        const took = performance.now() - abortedAt;
        assert(took <= 100, `${kind.name} took ${took.toFixed(0)} ms to settle after an abort`);
        assert(
          second.status !== "satisfied",
          `aborted attempt satisfied: ${JSON.stringify(second)}`,
        );
        const stopped = await Promise.race([
          own,
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000)),
        ]);
        assert(stopped !== undefined, `${kind.name}'s probe still ran 1 s after its abort`);

        await c.probe.close?.();
        await c.probe.close?.();
      }),
  });
}

Deno.test("conformance: help and completions list every flag of every kind with its values", async (t) => {
  const scripts = Object.fromEntries(
    ["bash", "zsh", "fish"].map((s) => [s, completionScript(s, registry)]),
  );
  for (const kind of registry.kinds) {
    await t.step(kind.name, () => {
      const help = kindHelp(kind);
      for (const f of kind.flags) {
        assert(help.includes(`--${f.name}`), `help ${kind.name} lacks --${f.name}`);
        for (const [shell, script] of Object.entries(scripts)) {
          assert(script.includes(f.name), `${shell} completion lacks ${kind.name} --${f.name}`);
          for (const v of f.values ?? []) {
            assert(script.includes(v), `${shell} completion lacks ${kind.name} --${f.name} ${v}`);
          }
        }
        for (const v of f.values ?? []) {
          assert(help.includes(v), `help ${kind.name} lacks value ${v} of --${f.name}`);
        }
      }
    });
  }
});

Deno.test({
  name:
    "conformance: through the CLI, every kind ends within 100 ms of the deadline on a dead target",
  ...opts,
  fn: () =>
    withDead(async (d) => {
      const { startCli } = await import("../e2e/_cli.ts");
      const results: string[] = [];
      const kinds = [...registry.kinds];
      // Three at a time: each run is start-up plus a 1 s deadline.
      const worker = async () => {
        for (let kind = kinds.shift(); kind; kind = kinds.shift()) {
          const row = DEAD_TARGETS[kind.name]!(d);
          const run = startCli(["-o", "jsonl", "-t", "1s", "-i", "100ms", ...row.args], {
            env: row.env,
          });
          // The start event is written when the run's clock starts (drivers already loaded).
          await run.waitFor("stdout", /"event":"start"/, 60_000).catch(() => "");
          const startSeen = performance.now();
          const r = await run.done();
          const end = JSON.parse(
            run.lines.stdout.findLast((l) => l.includes('"event":"end"')) ?? "{}",
          );
          const all = r.stdout + r.stderr;
          const wall = r.exitedAt - startSeen;
          if (r.code !== 1 && r.code !== 3) {
            results.push(`${kind.name}: exit ${r.code}\n${r.stderr}`);
          } else if (all.includes(MARK)) results.push(`${kind.name}: a secret in the output`);
          else if (r.code === 1 && !(end.elapsed_seconds <= 1.1)) {
            results.push(`${kind.name}: the run took ${end.elapsed_seconds} s for a 1 s deadline`);
          } else if (wall > 1000 + 100 + 250) {
            // 250 ms for the pipe, the exit itself and a loaded CI machine.
            results.push(`${kind.name}: exited ${(wall - 1000).toFixed(0)} ms after the deadline`);
          }
        }
      };
      await Promise.all([worker(), worker(), worker()]);
      assertEquals(results, []);
    }),
});
