/**
 * Detection latency of the host kinds: the time from a change of a systemd
 * unit or a Docker container to the exit of the waitcmd process waiting for
 * it, at the default interval (2s). Both kinds are event-driven (D-Bus
 * PropertiesChanged, the Docker events stream), so the figure should be far
 * below the ~1 s that polling alone would average. Target: median <= 50 ms.
 *
 * The moment of the change is taken from an independent observer in this
 * process that listens to the same events (a D-Bus signal subscription, a
 * Docker events stream), so neither the CLI call that makes the change nor
 * the service's own start-up is counted.
 *
 * Runs against the real services the tests use (a `systemd --user` manager,
 * a private dockerd). `deno run -A scripts/bench/host_bench.ts` runs it alone.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import { startSystemdUser } from "../../conditions/svcmgr/_service.ts";
import { DOCKER_CLI, startDocker } from "../../tests/services/docker.ts";
import { startWaiting } from "./_forms.ts";

/** Runs per kind (the median is reported). */
const RUNS = 11;
/** Pause after waitcmd's first attempt, so its watcher is subscribed before the change. */
const SETTLE_MS = 300;
const TARGET_MS = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The row of one kind from its latencies. */
function row(name: string, latencies: number[], failures: number): BenchRow {
  const med = median(latencies);
  const min = Math.min(...latencies);
  const max = Math.max(...latencies);
  return {
    name,
    figure: `${med.toFixed(1)} ms (median of ${latencies.length})`,
    target: `<= ${TARGET_MS} ms`,
    reference:
      `min ${min.toFixed(1)} ms, max ${max.toFixed(1)} ms; polling alone would average ~1000 ms` +
      (failures ? `; ${failures} run(s) failed` : ""),
    ok: failures === 0 && med <= TARGET_MS,
  };
}

/** Minimal dbus-next surface for the observer. */
interface ObserverBus {
  call(msg: unknown): Promise<{ body: unknown[] } | null>;
  on(event: "message", f: (m: { type: number; path: string; body: unknown[] }) => void): void;
  on(event: "error", f: (e: unknown) => void): void;
  disconnect(): void;
}

async function svcmgrLatency(): Promise<BenchRow[]> {
  const sd = await startSystemdUser();
  const { sessionBus, Message } = (await import("dbus-next")) as unknown as {
    sessionBus(o: { busAddress: string }): ObserverBus;
    Message: new (m: Record<string, unknown>) => unknown;
  };
  const bus = sessionBus({ busAddress: sd.env.DBUS_SESSION_BUS_ADDRESS! });
  bus.on("error", () => {});
  try {
    await sd.writeUnit("bench.service", "[Service]\nExecStart=/bin/sleep 100000\n");
    const call = (m: Record<string, unknown>) => bus.call(new Message(m));
    const [path] = (await call({
      destination: "org.freedesktop.systemd1",
      path: "/org/freedesktop/systemd1",
      interface: "org.freedesktop.systemd1.Manager",
      member: "LoadUnit",
      signature: "s",
      body: ["bench.service"],
    }))!.body as string[];
    await call({
      destination: "org.freedesktop.DBus",
      path: "/org/freedesktop/DBus",
      interface: "org.freedesktop.DBus",
      member: "AddMatch",
      signature: "s",
      body: [`type='signal',path='${path}',interface='org.freedesktop.DBus.Properties'`],
    });
    await call({
      destination: "org.freedesktop.systemd1",
      path: "/org/freedesktop/systemd1",
      interface: "org.freedesktop.systemd1.Manager",
      member: "Subscribe",
    });
    let activeAt: number | undefined;
    bus.on("message", (m) => {
      if (m.type !== 4 || m.path !== path) return;
      const changed = m.body[1] as Record<string, { value?: unknown }> | undefined;
      if (changed?.ActiveState?.value === "active") activeAt ??= performance.now();
    });

    const latencies: number[] = [];
    let failures = 0;
    for (let i = 0; i < RUNS; i++) {
      await sd.systemctl(["stop", "bench.service"]);
      const w = await startWaiting(["svcmgr", "--user", "bench"], sd.env);
      await sleep(SETTLE_MS);
      activeAt = undefined;
      const before = performance.now();
      await sd.systemctl(["start", "--no-block", "bench.service"]);
      const { code, at } = await w.exit;
      if (code !== 0) {
        failures++;
        continue;
      }
      latencies.push(at - (activeAt ?? before));
    }
    await sd.systemctl(["stop", "bench.service"]);
    if (!latencies.length) throw new Error("every svcmgr run failed");
    return [
      row(
        "detection latency, svcmgr --user (unit started -> exit, interval 2s)",
        latencies,
        failures,
      ),
    ];
  } finally {
    bus.disconnect();
    await sd.stop();
  }
}

/** Minimal dockerode surface for the observer. */
interface ObserverDocker {
  getEvents(o: { filters: Record<string, string[]> }): Promise<
    { on(ev: "data", f: (b: Uint8Array) => void): void; destroy(): void }
  >;
}

async function containerLatency(): Promise<BenchRow[]> {
  const d = await startDocker();
  let events: { destroy(): void } | undefined;
  try {
    const image = await d.buildBusyboxImage({ tag: "waitcmd-bench:nohc", healthcheck: false });
    await d.docker(["create", "--network", "none", "--name", "bench", image]);
    const { default: Docker } = await import("dockerode");
    const docker = new Docker({ socketPath: d.socketPath }) as unknown as ObserverDocker;
    let startedAt: number | undefined;
    const stream = await docker.getEvents({
      filters: { type: ["container"], container: ["bench"], event: ["start"] },
    });
    events = stream;
    stream.on("data", () => (startedAt ??= performance.now()));

    const latencies: number[] = [];
    let failures = 0;
    const env = { DOCKER_HOST: d.host };
    for (let i = 0; i < RUNS; i++) {
      await d.docker(["stop", "-t", "1", "bench"]);
      const w = await startWaiting(["container", "bench"], env);
      await sleep(SETTLE_MS);
      startedAt = undefined;
      const before = performance.now();
      // Not awaited: `docker start` returns after the container runs, maybe after waitcmd exits.
      const start = new Deno.Command(DOCKER_CLI, {
        args: ["start", "bench"],
        env: d.env,
        stdout: "null",
        stderr: "null",
      }).output();
      const { code, at } = await w.exit;
      await start;
      if (code !== 0) {
        failures++;
        continue;
      }
      latencies.push(at - (startedAt ?? before));
    }
    if (!latencies.length) throw new Error("every container run failed");
    return [
      row(
        "detection latency, container (container started -> exit, interval 2s)",
        latencies,
        failures,
      ),
    ];
  } finally {
    events?.destroy();
    await d.stop();
  }
}

/** The bench entries of this module. */
export const entries: BenchEntry[] = [
  { name: "svcmgr detection latency", run: svcmgrLatency },
  { name: "container detection latency", run: containerLatency },
];

if (import.meta.main) {
  let failed = false;
  for (const e of entries) {
    try {
      for (const r of await e.run()) {
        const verdict = r.ok === undefined ? "" : r.ok ? "  ok" : "  MISSED";
        console.log(`${r.name}: ${r.figure} (target ${r.target})${verdict}`);
        if (r.reference) console.log(`  ${r.reference}`);
        if (r.ok === false) failed = true;
      }
    } catch (err) {
      failed = true;
      console.log(`${e.name}: cannot run: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  Deno.exit(failed ? 1 : 0);
}
