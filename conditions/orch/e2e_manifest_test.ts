/**
 * `orch -f` end to end: the CLI against the suite's real cluster
 * (tests/services/kube.ts with `cluster: true`: kube-apiserver, etcd, the
 * controller-manager with the deployment, statefulset, job, endpoint and
 * volume-binder controllers, the scheduler and KWOK's fake node). Each test
 * applies manifests through the API, as `kubectl apply` does (server-side
 * apply), and the controllers make the objects ready: deployments and
 * statefulsets roll out, the job completes, the service gets endpoints, the
 * claim binds to a hostPath volume of its storage class. The only status
 * written by hand is a custom resource's Ready condition, which nothing else
 * could produce; the step says so.
 *
 * Runs that wait for a change use an interval longer than their timeout
 * (CLUSTER): they end satisfied only because the watches reported the change.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { type KubeObject, STAGE_LABEL } from "../../tests/services/kube.ts";
import {
  type AttemptEvent,
  type CliResult,
  expectJson,
  runCli,
  runJson,
  runLate,
} from "../../tests/e2e/_cli.ts";
import { clusterTest, createCrd } from "../../tests/e2e/_kube.ts";

const FAST = ["--timeout", "20s", "--interval", "200ms"];
/** For states that last: the run times out with them as last errors. */
const SHORT = ["--timeout", "5s", "--interval", "200ms"];
/** Satisfied before the timeout only if watch events woke the poll loop. */
const CLUSTER = ["--timeout", "120s", "--interval", "300s"];

const NS = "manifests";

const deployment = (name: string, spec: Record<string, unknown> = {}, pod = {}): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: NS },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "web", image: "example.invalid/web:1" }], ...pod },
    },
    ...spec,
  },
});

const APP: KubeObject[] = [
  deployment("web"),
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web" },
    spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
  },
  {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "db", namespace: NS },
    spec: {
      replicas: 1,
      serviceName: "db",
      selector: { matchLabels: { app: "db" } },
      template: {
        metadata: { labels: { app: "db" } },
        spec: { containers: [{ name: "db", image: "example.invalid/db:1" }] },
      },
    },
  },
  {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: "migrate", namespace: NS },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: "Never",
          containers: [{ name: "migrate", image: "example.invalid/migrate:1" }],
        },
      },
    },
  },
  {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "data", namespace: NS },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: "waitcmd-manual",
      resources: { requests: { storage: "1Gi" } },
    },
  },
];

/** The custom resource of the manifest (its definition is installed first, as a chart's CRDs are). */
const GIZMO: KubeObject = {
  apiVersion: "example.com/v1",
  kind: "Gizmo",
  metadata: { name: "g1", namespace: NS },
  spec: { size: 1 },
};

/**
 * The first attempt of each condition failed with `want[name]`, or held (it ran after the
 * change); the attempt that triggered the change is one of the failures.
 */
function assertFirstAttempts(r: CliResult, want: Record<string, string>): void {
  const first = new Map<string, AttemptEvent>();
  for (const a of r.attempts) if (!first.has(a.condition)) first.set(a.condition, a);
  assertEquals([...first.keys()].sort(), Object.keys(want).sort());
  for (const [name, a] of first) {
    assert(a.ok || a.error === want[name], `${name}: first attempt ${JSON.stringify(a)}`);
  }
  assertEquals(r.attempts[0]!.error, want[r.attempts[0]!.condition]);
}

/** YAML documents of `objects` (JSON is YAML). */
const yamlDocs = (objects: KubeObject[]) => objects.map((o) => JSON.stringify(o)).join("\n---\n");

clusterTest(
  "orch -f against a real cluster (manifests applied, controllers make them ready)",
  async (t, { kube, env, dir }) => {
    const gizmoPath = `/apis/example.com/v1/namespaces/${NS}/gizmos/g1`;
    await kube.create("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });
    // What an administrator provides: a volume of the claim's class (no provisioner runs),
    // and the custom resource's definition.
    await kube.create("/api/v1/persistentvolumes", {
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: "pv-data" },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        storageClassName: "waitcmd-manual",
        hostPath: { path: `${dir}/pv-data` },
      },
    });
    await createCrd(kube, { plural: "gizmos", singular: "gizmo", kind: "Gizmo" });
    const served = await runJson(
      [...FAST, "k8s", "crd/gizmos.example.com", "--condition", "Established"],
      { env },
    );
    assertEquals(served.code, 0, served.stdout);

    // A directory of manifests: several documents in one file, a JSON file with the CR.
    await Deno.mkdir(`${dir}/app`);
    await Deno.writeTextFile(`${dir}/app/app.yaml`, yamlDocs(APP));
    await Deno.writeTextFile(`${dir}/app/gizmo.json`, JSON.stringify(GIZMO));
    await Deno.writeTextFile(`${dir}/app/README.md`, "not a manifest");
    const names = [
      `k8s deployment/${NS}/web`,
      "k8s service/web",
      `k8s statefulset/${NS}/db`,
      `k8s job/${NS}/migrate`,
      `k8s persistentvolumeclaim/${NS}/data`,
      `k8s gizmo/${NS}/g1`,
    ];

    await t.step(
      "every object becomes ready by the controllers (the custom resource's Ready set by hand: no controller serves it)",
      async () => {
        // The custom resource exists and says it is not ready yet (an object without a
        // Ready condition would count as ready once it exists).
        await kube.apply(GIZMO);
        await kube.patchStatus(gizmoPath, {
          conditions: [{ type: "Ready", status: "False", reason: "Provisioning" }],
        });
        const r = await runLate(
          [...CLUSTER, "k8s", "-f", `${dir}/app`, "--namespace", NS],
          async () => {
            // kubectl apply -f app/; then the CR's operator would report it ready.
            for (const o of [...APP, GIZMO]) {
              await kube.apply({
                ...o,
                metadata: { namespace: NS, ...o.metadata as Record<string, unknown> },
              });
            }
            await kube.patchStatus(gizmoPath, {
              conditions: [{ type: "Ready", status: "True", reason: "Reconciled" }],
            });
          },
          env,
        );
        assertEquals(r.code, 0, JSON.stringify(r.attempts));
        assertEquals(r.stderr, "");
        assertEquals(r.report.conditions.map((c) => c.name), names);
        assertEquals(
          r.report.conditions.map((c) => [c.kind, c.satisfied]),
          names.map(() => ["orch", true]),
        );
        // Before the change, each object was missing (the custom resource not Ready); an
        // object's first attempt may also have run after it, and held.
        assertFirstAttempts(r, {
          [`k8s deployment/${NS}/web`]: `deployment/web not found in namespace ${NS}`,
          "k8s service/web": `service/web not found in namespace ${NS}`,
          [`k8s statefulset/${NS}/db`]: `statefulset/db not found in namespace ${NS}`,
          [`k8s job/${NS}/migrate`]: `job/migrate not found in namespace ${NS}`,
          [`k8s persistentvolumeclaim/${NS}/data`]:
            `persistentvolumeclaim/data not found in namespace ${NS}`,
          [`k8s gizmo/${NS}/g1`]: "gizmo/g1 condition Ready=False: Provisioning",
        });
        const detail = new Map(r.report.conditions.map((c) => [c.name, c.detail]));
        assertEquals(
          detail.get(`k8s deployment/${NS}/web`),
          "deployment/web rolled out (2/2 replicas updated and available)",
        );
        assertMatch(
          detail.get(`k8s statefulset/${NS}/db`)!,
          /^statefulset\/db rolled out \(1 pods at revision db-[a-z0-9]+\)$/,
        );
        assertEquals(detail.get(`k8s job/${NS}/migrate`), "job/migrate complete (1 succeeded)");
        // One ready pod behind it suffices (the second may not be ready yet).
        assertMatch(
          detail.get("k8s service/web")!,
          /^service\/web (1 ready endpoint|2 ready endpoints)$/,
        );
        assertEquals(
          detail.get(`k8s persistentvolumeclaim/${NS}/data`),
          "persistentvolumeclaim/data Bound to pv-data",
        );
        assertEquals(
          detail.get(`k8s gizmo/${NS}/g1`),
          "gizmo/g1 condition Ready=True (Reconciled)",
        );
      },
    );

    await t.step("human lines: one [ok] line per object, the kind word as typed", async () => {
      const r = await runCli([...FAST, "orch", "-f", `${dir}/app/app.yaml`, "--namespace", NS], {
        env,
      });
      assertEquals(r.code, 0, r.stderr);
      const lines = r.stderr.trimEnd().split("\n");
      assertEquals(lines[0], "waitcmd: waiting for 5 conditions (timeout 20s, interval 200ms)");
      assertMatch(lines.at(-1)!, /^waitcmd: satisfied in \d+\.\ds \(5\/5 conditions\)$/);
      for (const name of names.slice(0, 5)) {
        assert(
          lines.some((l) => l.startsWith(`[ok] ${name.replace(/^k8s/, "orch")} attempt 1 `)),
          `${name}: ${r.stderr}`,
        );
      }
    });

    await t.step(
      "a custom resource whose Ready is False waits (timeout, one leaf per object in the report)",
      async () => {
        await kube.patchStatus(gizmoPath, {
          conditions: [{
            type: "Ready",
            status: "False",
            reason: "Resizing",
            message: "disk 1 of 2",
          }],
        });
        const report = `${dir}/report.json`;
        const r = await runJson([
          ...SHORT,
          ...["--report", report, "k8s", "-f", `${dir}/app`, "--namespace", NS],
        ], {
          env,
        });
        assertEquals([r.code, r.json.status, r.stderr], [1, "timeout", ""]);
        assertEquals(r.json.conditions.map((c) => c.name), names);
        const gizmo = r.json.conditions.at(-1)!;
        assertEquals(
          [gizmo.satisfied, gizmo.last_error],
          [false, "gizmo/g1 condition Ready=False: Resizing: disk 1 of 2"],
        );
        assert(r.json.conditions.slice(0, 5).every((c) => c.satisfied), r.stdout);
        const written = JSON.parse(await Deno.readTextFile(report)) as typeof r.json;
        assertEquals(
          written.conditions.map((c) => [c.name, c.satisfied]),
          r.json.conditions.map((c) => [c.name, c.satisfied]),
        );
      },
    );

    await t.step(
      "a Deployment that is never scheduled: ProgressDeadlineExceeded is fatal (exit 3), the pods' FailedScheduling in last_error",
      async () => {
        const stuck = deployment("stuck", { replicas: 1, progressDeadlineSeconds: 1 }, {
          nodeSelector: { "waitcmd.test/disk": "none-has-it" },
        });
        await Deno.writeTextFile(`${dir}/stuck.yaml`, yamlDocs([stuck]));
        const r = await runLate(
          [...CLUSTER, "k8s", "-f", `${dir}/stuck.yaml`],
          () => kube.apply(stuck),
          env,
        );
        assertEquals(r.code, 3, JSON.stringify(r.attempts));
        assertEquals(r.stderr, "");
        assertEquals(r.report.status, "fatal");
        const c = r.report.conditions[0]!;
        assertEquals([c.name, c.satisfied, c.fatal], [`k8s deployment/${NS}/stuck`, false, true]);
        assertMatch(
          c.last_error,
          /^deployment\/stuck rollout exceeded its progress deadline: ProgressDeadlineExceeded: ReplicaSet "stuck-[a-z0-9]+" has timed out progressing\.; Warning FailedScheduling: 0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector\./,
        );
        // The same for a single target with --for rollout, in text mode.
        const text = await runCli(
          [...FAST, "k8s", "deploy/stuck", "--namespace", NS, "--for", "rollout"],
          { env },
        );
        assertEquals(text.code, 3);
        assertStringIncludes(
          text.stderr,
          "waitcmd: fatal: k8s deploy/stuck: deployment/stuck rollout exceeded its progress deadline",
        );
        assertStringIncludes(text.stderr, "; Warning FailedScheduling: 0/1 nodes are available");
      },
    );

    await t.step(
      "pods held Pending: pending without a warning, then satisfied once released",
      async () => {
        const held = deployment("held", { replicas: 1 });
        const tpl = (held.spec as { template: { metadata: { labels: Record<string, string> } } })
          .template;
        tpl.metadata.labels[STAGE_LABEL] = "hold";
        await kube.apply(held);
        await Deno.writeTextFile(`${dir}/held.json`, JSON.stringify(held));
        await expectJson([...SHORT, "k8s", "-f", `${dir}/held.json`], {
          code: 1,
          error: "deployment/held 0 of 1 updated replicas are available",
        }, { env });
        const r = await runLate(
          [...CLUSTER, "k8s", "-f", `${dir}/held.json`],
          async () => {
            const pods = await kube.get<{ items: KubeObject[] }>(
              `/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dheld`,
            );
            for (const p of pods.items) {
              await kube.patch(`/api/v1/namespaces/${NS}/pods/${p.metadata!.name}`, {
                metadata: { labels: { [STAGE_LABEL]: null } },
              });
            }
          },
          env,
        );
        assertEquals(r.code, 0, JSON.stringify(r.attempts));
        assertEquals(
          r.report.conditions[0]!.detail,
          "deployment/held rolled out (1/1 replicas updated and available)",
        );
      },
    );

    const cms = [1, 2].map((i): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `flag-${i}`, namespace: NS },
      data: { on: "yes" },
    }));
    await Deno.writeTextFile(`${dir}/flags.yaml`, yamlDocs(cms));

    await t.step(
      "--for create waits until every object exists (a file, standard input, a single target)",
      async () => {
        const r = await runLate(
          [...CLUSTER, "k8s", "-f", `${dir}/flags.yaml`, "--for", "create"],
          async () => {
            for (const o of cms) await kube.apply(o);
          },
          env,
        );
        assertEquals(r.code, 0, JSON.stringify(r.attempts));
        assertEquals(r.report.conditions.map((c) => c.detail), [
          "configmap/flag-1 exists",
          "configmap/flag-2 exists",
        ]);
        const piped = await runJson([...FAST, "k8s", "-f", "-", "--for", "create"], {
          env,
          stdin: yamlDocs(cms),
        });
        assertEquals(piped.code, 0, piped.stdout);
        assertEquals(piped.json.conditions.map((c) => c.name), [
          `k8s configmap/${NS}/flag-1`,
          `k8s configmap/${NS}/flag-2`,
        ]);
        // --for create on a single target too.
        const one = await runJson([
          ...FAST,
          ...["k8s", "cm/flag-1", "--namespace", NS, "--for", "create"],
        ], {
          env,
        });
        assertEquals([one.code, one.json.conditions[0]!.detail], [0, "configmap/flag-1 exists"]);
      },
    );

    await t.step("--for delete waits until every object is gone", async () => {
      const r = await runLate(
        [...CLUSTER, "k8s", "-f", `${dir}/flags.yaml`, "--for", "delete"],
        async () => {
          for (const o of cms) await kube.del(await kube.pathOf(o));
        },
        env,
      );
      assertEquals(r.code, 0, JSON.stringify(r.attempts));
      assertFirstAttempts(r, {
        [`k8s configmap/${NS}/flag-1`]: "configmap/flag-1 still exists",
        [`k8s configmap/${NS}/flag-2`]: "configmap/flag-2 still exists",
      });
      assertEquals(r.report.conditions.map((c) => c.detail), [
        "configmap/flag-1 deleted",
        "configmap/flag-2 deleted",
      ]);
    });
  },
);
