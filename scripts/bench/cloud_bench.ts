/**
 * Detection latency of the orch kind: the time from a status patch of a
 * Kubernetes object to the exit of the waitcmd process waiting for it, at the
 * default interval (2s). orch is event-driven (the watch API), so the figure
 * should be far below the ~1 s that polling alone would average. Target:
 * median <= 50 ms.
 *
 * The moment of the change is taken from an independent observer in this
 * process: a watch on the same deployment, opened before the patch, whose
 * MODIFIED event marks the change as the API server publishes it (the patch
 * request's own latency is not counted; when the observer misses the event,
 * the moment the patch was sent is used, which only makes the figure worse).
 *
 * Runs against the real kube-apiserver + etcd the tests use.
 * `deno run -A scripts/bench/cloud_bench.ts` runs it alone.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import { startWaiting } from "./_forms.ts";
import { median, progress } from "./_stats.ts";
import { type KubeEnv, type KubeObject, startKube } from "../../tests/services/kube.ts";

/** Runs (the median is reported). */
const RUNS = 11;
/** Pause after waitcmd's first attempt, so its watch is open before the change. */
const SETTLE_MS = 400;
const TARGET_MS = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Watches one object and records when its first MODIFIED event arrives. */
function observe(kube: KubeEnv, collection: string, name: string, rv: string) {
  const ctl = new AbortController();
  let at: number | undefined;
  const q = new URLSearchParams({
    watch: "1",
    fieldSelector: `metadata.name=${name}`,
    resourceVersion: rv,
  });
  const done = (async () => {
    const r = await kube.request("GET", `${collection}?${q}`);
    const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
    if (ctl.signal.aborted) return void (await reader.cancel());
    ctl.signal.addEventListener("abort", () => reader.cancel().catch(() => {}));
    let buf = "";
    while (at === undefined) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      if (buf.includes('"type":"MODIFIED"')) at = performance.now();
    }
    await reader.cancel();
  })().catch(() => {});
  return {
    get at() {
      return at;
    },
    async stop() {
      ctl.abort();
      await done;
    },
  };
}

async function orchLatency(): Promise<BenchRow[]> {
  progress("orch: starting kube-apiserver + etcd");
  const kube = await startKube();
  try {
    const ns = "bench";
    await kube.create("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns },
    });
    const collection = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const latencies: number[] = [];
    let failures = 0;
    for (let i = 0; i < RUNS; i++) {
      progress(`orch: run ${i + 1}/${RUNS}`);
      const name = `web-${i}`;
      const dep = await kube.create<KubeObject & { metadata: { generation: number } }>(
        collection,
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name, namespace: ns },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: name } },
            template: {
              metadata: { labels: { app: name } },
              spec: { containers: [{ name: "web", image: "example.invalid/web:1" }] },
            },
          },
        },
      );
      const w = await startWaiting(
        ["k8s", `deployment/${name}`, "--namespace", ns, "--for", "rollout"],
        { KUBECONFIG: kube.kubeconfig },
      );
      await sleep(SETTLE_MS);
      const obs = observe(kube, collection, name, dep.metadata.resourceVersion!);
      await sleep(50);
      const before = performance.now();
      await kube.patchStatus(`${collection}/${name}`, {
        observedGeneration: dep.metadata.generation,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
      });
      const { code, at } = await w.exit;
      await obs.stop();
      if (code !== 0) {
        failures++;
        continue;
      }
      latencies.push(at - (obs.at ?? before));
    }
    if (!latencies.length) throw new Error("every orch run failed");
    const med = median(latencies);
    return [{
      name: "detection latency, orch deployment rollout (watch)",
      figure: `${med.toFixed(1)} ms (median of ${latencies.length})`,
      target: `<= ${TARGET_MS} ms`,
      reference:
        `min ${Math.min(...latencies).toFixed(1)} ms, max ${
          Math.max(...latencies).toFixed(1)
        } ms; polling alone would average ~1000 ms` +
        (failures ? `; ${failures} run(s) failed` : ""),
      ok: failures === 0 && med <= TARGET_MS,
    }];
  } finally {
    await kube.stop();
  }
}

/** The cloud kinds' benchmark entries. */
export const entries: BenchEntry[] = [
  { name: "orch detection latency", run: orchLatency },
];

if (import.meta.main) {
  for (const e of entries) {
    for (const r of await e.run()) {
      console.log(
        `${r.name}: ${r.figure} (target ${r.target}${
          r.ok === undefined ? "" : r.ok ? ", met" : ", NOT met"
        })` +
          (r.reference ? `; ${r.reference}` : ""),
      );
    }
  }
}
