/**
 * A legitimate large manifest fits (docs/reliability.md, large manifests): `orch -f` with
 * 10,000 ConfigMaps, no hostile byte in it, against the suite's real API server
 * (tests/services/kube.ts, the API server alone: ConfigMaps need no controller). The objects
 * of a collection share one list and one watch (conditions/orch/collection.ts): once they
 * are there, the run is satisfied under the memory cap without the watchdog stopping the orch
 * worker; while they are not, polled every 2 s for 20 s and for 30 s, the run ends on time,
 * under the cap, and the watchdog never stops the worker (the heaps' sizes: V8_FLAGS of
 * scripts/launcher.ts; docs/reliability.md, large manifests); so do 27,000 absent ones, whose
 * watchers push their changes (engine/follow.ts), and the 54,694 of the largest manifest the
 * input cap admits, without the watchdog stopping the worker (its room grows with the watchers).
 *
 * The peak RSS is read from /proc (VmHWM) every 20 ms while the run lasts.
 */

import { assert, assertEquals } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { buildMissing } from "../services/_util.ts";
import { buildKube, type KubeEnv, startKube } from "../services/kube.ts";
import { peakRss, spawnWaitcmd } from "./_proc.ts";

const whyNoKube = await buildMissing(() => buildKube());

/** The default memory cap (engine/memory.ts). */
const CAP = 512 * 2 ** 20;
const OBJECTS = 10_000;

/**
 * Objects near the most the default cap fits (about 30,000: docs/reliability.md, large
 * manifests), with room for a loaded machine and a run from the sources: absent, they are
 * polled without the watchdog stopping the orch worker.
 */
const MANY_OBJECTS = 27_000;

/**
 * The most one-line ConfigMap documents the 4 MiB input cap admits (docs/contract.md §9): their
 * watchers fit the watchdog's room (2 KiB each, engine/memory.ts), so it never stops the orch
 * worker; the process's peak is above the 512 MiB cap (549-596 MiB from the bundle:
 * docs/reliability.md, large manifests), held under `LARGEST_PEAK`.
 */
const LARGEST_OBJECTS = 54_694;
const LARGEST_PEAK = 768 * 2 ** 20;

/** A manifest of `n` ConfigMaps in namespace `ns`, one document each. */
function manifest(ns: string, n = OBJECTS): string {
  const docs: string[] = [];
  for (let i = 0; i < n; i++) {
    docs.push(
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n  namespace: ${ns}\n` +
        `data:\n  index: "${i}"\n`,
    );
  }
  return docs.join("---\n");
}

/** Creates the ConfigMaps of `manifest(ns)` (and the namespace), 16 requests at a time. */
async function createAll(kube: KubeEnv, ns: string): Promise<void> {
  await kube.create("/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: ns },
  });
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < OBJECTS) {
      const i = next++;
      await kube.create(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${i}` },
        data: { index: String(i) },
      });
    }
  }));
}

/** Runs waitcmd, sampling its peak RSS; what it printed, its exit code and the peak. */
async function measured(args: string[], env: Record<string, string>) {
  const w = spawnWaitcmd(args, { env });
  let peak = 0;
  const sampling = setInterval(() => peak = Math.max(peak, peakRss(w.child.pid)), 20);
  try {
    const ended = await w.ended(300_000);
    return { ...ended, peak };
  } finally {
    clearInterval(sampling);
  }
}

const MIB = (n: number) => `${Math.round(n / 2 ** 20)} MiB`;

/** The largest manifest: `n` one-line ConfigMap documents in namespace `ns`. */
function oneLineManifest(ns: string, n: number): string {
  const docs: string[] = [];
  for (let i = 0; i < n; i++) {
    docs.push(`{apiVersion: v1,kind: ConfigMap,metadata: {name: c${i},namespace: ${ns}}}\n`);
  }
  return docs.join("---\n");
}

/**
 * Runs `k8s -f file` (`objects` absent objects) for 20 s with a JSON report: a timeout at the
 * deadline, every object reported, under `peakMax` (the cap), no watchdog line.
 */
async function absentFor20s(
  file: string,
  objects: number,
  env: Record<string, string>,
  peakMax = CAP,
) {
  const r = await measured(["-o", "json", "-t", "20s", "k8s", "-f", file], env);
  console.log(`${objects} objects absent for 20 s, JSON: peak RSS ${MIB(r.peak)}`);
  assertEquals(r.code, 1, r.stderr.slice(0, 2000));
  assert(!r.hung);
  const report = JSON.parse(r.stdout);
  assertEquals(report.status, "timeout");
  // On time: the deadline is kept on a loaded 2-core machine running the API server too.
  assert(report.elapsed_seconds < 20 + 1.5, `ended at ${report.elapsed_seconds} s`);
  assertEquals(report.conditions.length, objects);
  assert(!r.stdout.includes("memory use reached the cap"), "the watchdog stopped the worker");
  assert(r.peak > 0 && r.peak < peakMax, `peak RSS ${MIB(r.peak)}`);
}

Deno.test({
  name: "a manifest of 10,000 ConfigMaps stays under the memory cap and ends on time",
  ignore: ignoreWithout("kube-apiserver", whyNoKube),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const kube = await startKube();
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-large-manifest-" });
    const env = { KUBECONFIG: kube.kubeconfig };
    try {
      const file = `${dir}/big.yaml`;
      await Deno.writeTextFile(file, manifest("big"));

      await t.step(
        "not created yet, polled for 20 s and 30 s: a timeout at the deadline, under the cap, no watchdog line",
        async () => {
          await absentFor20s(file, OBJECTS, env);
          // The garbage of the attempts grows with the time polled, and the text output's
          // lines add to it: 30 s of it, under the cap with no watchdog line either
          // (docs/reliability.md, large manifests).
          const text = await measured(["-t", "30s", "k8s", "-f", file], env);
          console.log(`10,000 objects absent for 30 s, text: peak RSS ${MIB(text.peak)}`);
          assertEquals(text.code, 1, text.stderr.slice(0, 2000));
          assert(
            !text.stderr.includes("memory use reached the cap"),
            "the watchdog stopped the worker",
          );
          assert(
            text.stderr.includes("configmap/cm-0 not found in namespace big"),
            text.stderr.slice(0, 500),
          );
          assert(text.peak > 0 && text.peak < CAP, `peak RSS ${MIB(text.peak)}`);
        },
      );

      await t.step(
        "27,000 absent for 20 s: on time, under the cap, no watchdog line",
        async () => {
          // Each condition's watcher pushes its changes, with nothing suspended per condition
          // on either thread: before, the watchdog stopped the worker (docs/reliability.md).
          const many = `${dir}/many.yaml`;
          await Deno.writeTextFile(many, manifest("many", MANY_OBJECTS));
          await absentFor20s(many, MANY_OBJECTS, env);
        },
      );

      await t.step(
        "54,694 absent for 20 s (the input cap's most): on time, no watchdog line",
        async () => {
          const largest = `${dir}/largest.yaml`;
          await Deno.writeTextFile(largest, oneLineManifest("z", LARGEST_OBJECTS));
          assert((await Deno.stat(largest)).size < 4 * 2 ** 20);
          await absentFor20s(largest, LARGEST_OBJECTS, env, LARGEST_PEAK);
        },
      );

      await createAll(kube, "big");

      await t.step("created: satisfied, under the cap, no watchdog line", async () => {
        const r = await measured(["-t", "120s", "k8s", "-f", file], env);
        console.log(`10,000 objects there: peak RSS ${MIB(r.peak)}`);
        assertEquals(r.code, 0, r.stderr.slice(-2000));
        assert(r.stderr.includes(`satisfied in`), r.stderr.slice(-500));
        assert(!r.stderr.includes("memory use reached the cap"), "the watchdog stopped the worker");
        assert(r.peak > 0 && r.peak < CAP, `peak RSS ${MIB(r.peak)}`);
      });
    } finally {
      await kube.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
