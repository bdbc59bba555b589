/**
 * The queue and document-store kinds (rabbitmq, kafka, mongodb, nats): time
 * to verdict on a server that is already up, from spawn to exit, beside
 * wait4x's own check of the same server (a Go binary, the tool users
 * compare us with; it has no nats checker) and waitcmd's `tcp` to the same
 * port (waitcmd's floor); and the first-import cost of each driver under
 * Deno, which a run of the kind pays before its clock starts.
 *
 * Servers: the ones the tests use (tests/services): a RabbitMQ 3.10 broker,
 * a Kafka 3.9 KRaft broker, the MongoDB protocol stand-in
 * (mongo-java-server; no real MongoDB can be installed here) and a
 * nats-server 2.9. wait4x is
 * found at WAIT4X_BIN, else unpacked by the peers' install.sh
 * (WAITCMD_PEERS_DIR, default `shared/peers` beside the repository); without it the rows say
 * so. `deno run -A scripts/bench/queue_bench.ts` runs this module alone.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import {
  bothForms,
  bundleLauncher,
  denoScript,
  DRIVER_GOAL_MS,
  ensureBundle,
  launcherNpmFlags,
  repoRoot,
  rssRuns,
  sideBySideRow,
  usageBothForms,
} from "./_forms.ts";
import { interleave } from "./_run.ts";
import { benchRuns, fmtMs, fmtSample, median, progress } from "./_stats.ts";
import { peerBin } from "./_tools.ts";
import { startRabbitmq } from "../../conditions/rabbitmq/_service.ts";
import { prepareKafka } from "../../conditions/kafka/_service.ts";
import { prepareMongo } from "../../tests/services/mongo.ts";
import { makeNats } from "../../conditions/nats/_service.ts";

/** wait4x's path and version, or why there is none. */
async function findWait4x(): Promise<{ bin: string; version: string } | { missing: string }> {
  const peer = await peerBin("wait4x", "WAIT4X_BIN");
  if ("error" in peer) return { missing: `wait4x not found: ${peer.error}` };
  const out = await new Deno.Command(peer.bin, {
    args: ["version"],
    stdout: "piped",
    stderr: "piped",
  }).output().catch(() => undefined);
  if (!out) return { missing: `wait4x at ${peer.bin} does not run` };
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { bin: peer.bin, version: /v?\d+\.\d+\.\d+\S*/.exec(text)?.[0] ?? "?" };
}

/**
 * One row: waitcmd's `kind` check against a ready server, from the bundle and
 * from the sources, interleaved with wait4x's check of the same server
 * (`wait4xArgs` undefined: wait4x has no checker for the kind) and waitcmd's
 * `tcp` to the same port; and the CPU and peak RSS of both forms.
 */
async function verdictRow(
  kind: string,
  waitcmdArgs: string[],
  wait4xArgs: string[] | undefined,
  tcpTarget: string,
): Promise<BenchRow> {
  const runs = benchRuns();
  const found = await findWait4x();
  const w4x = wait4xArgs !== undefined || "missing" in found ? found : {
    missing: `wait4x ${found.version} has no ${kind.split(" ")[0]} checker (\`wait4x --help\`)`,
  };
  await ensureBundle();
  const args = ["--timeout", "30s", ...waitcmdArgs];
  const commands: Record<string, readonly string[]> = {
    ...bothForms("waitcmd", args),
    tcp: [bundleLauncher, "--timeout", "30s", "tcp", tcpTarget],
  };
  if ("bin" in w4x && wait4xArgs !== undefined) {
    commands.wait4x = [w4x.bin, ...wait4xArgs, "--timeout", "30s", "--quiet"];
  }
  progress(`${kind}: ${runs} interleaved runs of ${Object.keys(commands).join(", ")}`);
  const times = await interleave(commands, runs, { warmup: 2 });
  progress(`${kind}: peak RSS, ${rssRuns()} runs of each form`);
  return sideBySideRow({
    name: `time to verdict, ${kind} on a ready server`,
    bundle: times["waitcmd (bundle)"]!,
    source: times.waitcmd!,
    usage: await usageBothForms(args, rssRuns()),
    goalMs: DRIVER_GOAL_MS,
    ...("bin" in w4x && times.wait4x
      ? { peer: { name: `wait4x ${w4x.version}`, times: times.wait4x } }
      : { peerMissing: "missing" in w4x ? w4x.missing : "wait4x has no checker" }),
    extra: `waitcmd tcp to the same port from the bundle ${fmtMs(median(times.tcp!))}`,
  });
}

async function rabbitmqVerdict(): Promise<BenchRow[]> {
  progress("rabbitmq: starting a broker (5-15 s)");
  const mq = await startRabbitmq();
  try {
    const url = mq.url("admin", mq.adminPassword);
    return [
      await verdictRow("rabbitmq", ["rabbitmq", url], ["rabbitmq", url], `127.0.0.1:${mq.port}`),
    ];
  } finally {
    await mq.stop();
  }
}

async function kafkaVerdict(): Promise<BenchRow[]> {
  progress("kafka: starting a KRaft broker (5-10 s)");
  const k = await prepareKafka();
  try {
    await k.start();
    return [
      await verdictRow(
        "kafka",
        ["kafka", k.bootstrap],
        ["kafka", `kafka://${k.bootstrap}`],
        k.bootstrap,
      ),
    ];
  } finally {
    await k.stop();
  }
}

async function mongodbVerdict(): Promise<BenchRow[]> {
  progress("mongodb: starting the protocol stand-in (mongo-java-server)");
  const m = await prepareMongo();
  try {
    await m.start();
    const row = await verdictRow(
      "mongodb",
      ["mongodb", m.uri],
      ["mongodb", m.uri],
      `127.0.0.1:${m.port}`,
    );
    return [{ ...row, name: `${row.name} (protocol stand-in, mongo-java-server)` }];
  } finally {
    await m.stop();
  }
}

async function natsVerdict(): Promise<BenchRow[]> {
  progress("nats: starting a nats-server with JetStream");
  const n = await makeNats({ jetstream: true });
  try {
    const target = `127.0.0.1:${n.port}`;
    return [
      await verdictRow("nats", ["nats", n.url()], undefined, target),
      await verdictRow("nats --jetstream", ["nats", n.url(), "--jetstream"], undefined, target),
    ];
  } finally {
    await n.remove();
  }
}

/** The drivers, by the bare names deno.json maps. */
const DRIVERS = ["amqplib", "@platformatic/kafka", "mongodb", "@nats-io/transport-node"] as const;

/**
 * Milliseconds a fresh Deno process takes to `import()` `name` (warm cache),
 * measured inside the process around the import alone.
 */
async function importMs(name: string): Promise<number> {
  const code = `const t = performance.now(); await import(${
    JSON.stringify(name)
  }); console.log(performance.now() - t);`;
  const out = await new Deno.Command(denoScript, {
    args: ["eval", ...await launcherNpmFlags(), "--config", `${repoRoot}/deno.json`, code],
    cwd: repoRoot,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `import of ${name} failed: ${new TextDecoder().decode(out.stderr).slice(-300)}`,
    );
  }
  return Number(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1));
}

async function importCosts(): Promise<BenchRow[]> {
  const runs = Math.min(benchRuns(), 15);
  const rows: BenchRow[] = [];
  for (const name of DRIVERS) {
    progress(`import cost of ${name}: ${runs} fresh processes`);
    await importMs(name); // warms Deno's cache
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) xs.push(await importMs(name));
    rows.push({
      name: `first import of ${name} under Deno (warm cache)`,
      figure: fmtSample(xs),
      target: "",
      reference: "paid before the run's clock starts, only by runs that use the kind",
    });
  }
  return rows;
}

/** The bench entries of this module. */
export const entries: BenchEntry[] = [
  { name: "rabbitmq time to verdict", run: rabbitmqVerdict },
  { name: "kafka time to verdict", run: kafkaVerdict },
  { name: "mongodb time to verdict", run: mongodbVerdict },
  { name: "nats time to verdict", run: natsVerdict },
  { name: "queue driver import cost", run: importCosts },
];

if (import.meta.main) {
  for (const e of entries) {
    try {
      for (const r of await e.run()) console.log(`${r.name}: ${r.figure}\n  ${r.reference ?? ""}`);
    } catch (err) {
      console.log(`${e.name}: cannot run: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
