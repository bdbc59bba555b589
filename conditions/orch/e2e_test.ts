/**
 * orch end to end: the CLI against a real cluster without containers
 * (tests/services/kube.ts with `cluster: true`): kube-apiserver and etcd,
 * kube-controller-manager and kube-scheduler of the same Kubernetes version,
 * and KWOK playing the kubelet of one fake node. The tests create workloads
 * and the controllers produce their status: deployments roll out, pods are
 * scheduled and become Ready, jobs complete or fail, deletions are graceful.
 * The test's own hand in it is limited to KWOK's stage label (a pod held
 * Pending, or made to fail) and to pausing the controller-manager (SIGSTOP)
 * to observe a state it would otherwise leave at once. Status patched by hand
 * is kept only where nothing could produce it, and said so in the step name.
 *
 * Runs that wait for a change use an interval longer than their timeout
 * (EVENTS_ONLY, CLUSTER): they can only end satisfied because the watch
 * reported the change. CLUSTER's timeout is generous: controllers on a loaded
 * 2-core machine may take seconds, and a satisfied run ends at once anyway.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { freePort } from "../../tests/services/_util.ts";
import { type KubeEnv, NODE_NAME, STAGE_LABEL } from "../../tests/services/kube.ts";
import {
  assertOutcome,
  expectJson,
  runCli,
  runJson,
  runLate,
  usageErrorLine,
} from "../../tests/e2e/_cli.ts";
import { clusterTest, createCrd } from "../../tests/e2e/_kube.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];
/**
 * For states that last: the run times out (exit 1) with the state as its last
 * error. Long enough for the first attempt (process start-up, kubeconfig,
 * discovery) on a loaded 2-core machine running the whole cluster; 1.5 s was not.
 */
const SHORT = ["--timeout", "5s", "--interval", "200ms"];
/** Satisfied before the timeout only if a watch event woke the poll loop. */
const EVENTS_ONLY = ["--timeout", "15s", "--interval", "30s"];
/** Like EVENTS_ONLY, for changes that go through controllers, the scheduler and KWOK. */
const CLUSTER = ["--timeout", "120s", "--interval", "300s"];

const NS = "e2e";

/** Labels that make KWOK keep a pod Pending, or fail it (kube.ts STAGE_LABEL). */
const HOLD = { [STAGE_LABEL]: "hold" };
const FAIL = { [STAGE_LABEL]: "fail" };

const deployment = (
  name: string,
  replicas: number,
  podLabels: Record<string, string> = {},
) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: NS, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name, ...podLabels } },
      spec: { containers: [{ name: "web", image: "example.invalid/web:1" }] },
    },
  },
});

const pod = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: NS, labels },
  spec: { containers: [{ name: "main", image: "example.invalid/app:1" }] },
});

const job = (name: string, podLabels: Record<string, string> = {}) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: NS },
  spec: {
    backoffLimit: 0,
    template: {
      metadata: { labels: podLabels },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "main", image: "example.invalid/job:1" }],
      },
    },
  },
});

interface Status {
  metadata: { generation?: number; deletionTimestamp?: string };
  spec?: { nodeName?: string };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    phase?: string;
    conditions?: { type: string; status: string }[];
  };
}

/** Polls the object at `path` until `ok` holds (controllers at work); throws with its last state. */
async function until(
  kube: KubeEnv,
  path: string,
  ok: (o: Status) => boolean,
  what: string,
  timeoutMs = 120_000,
): Promise<Status> {
  const deadline = Date.now() + timeoutMs;
  let last: Status | undefined;
  while (Date.now() < deadline) {
    last = await kube.tryGet<Status>(path);
    if (last && ok(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${path}: not ${what} after ${timeoutMs} ms: ${JSON.stringify(last)}`);
}

const isReady = (o: Status) =>
  o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** A kubeconfig for the test server with another user entry (exec plugin, token, ...). */
function kubeconfigWith(
  kube: KubeEnv,
  user: string[],
  opts: { namespace?: string; cluster?: string[] } = {},
): string {
  const cluster = opts.cluster ??
    [`    certificate-authority-data: ${btoa(kube.caPem)}`];
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${kube.server}`,
    ...cluster,
    "users:",
    "- name: tester",
    "  user:",
    ...user,
    "contexts:",
    "- name: test",
    "  context:",
    "    cluster: test",
    "    user: tester",
    ...(opts.namespace ? [`    namespace: ${opts.namespace}`] : []),
    "current-context: test",
    "",
  ].join("\n");
}

clusterTest(
  "orch against a real cluster (kube-apiserver, controllers, scheduler, KWOK)",
  async (t, { kube, env, dir }) => {
    const nsPath = (plural: string, group = "") =>
      `${group ? `/apis/${group}` : "/api/v1"}/namespaces/${NS}/${plural}`;
    /** Runs `fn` with the controller-manager paused, and always lets it go on. */
    const paused = async <T>(fn: () => Promise<T>): Promise<T> => {
      kube.pauseControllers();
      try {
        return await fn();
      } finally {
        await kube.resumeControllers();
      }
    };
    await kube.create("/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS },
    });

    await t.step("an existing object holds, with human lines on stderr", async () => {
      const r = await runCli([...FAST, "k8s", "namespace/default"], { env });
      assertEquals(r.code, 0);
      assertEquals(r.stdout, "");
      const lines = r.stderr.trimEnd().split("\n");
      assertEquals(lines[0], "waitcmd: waiting for 1 condition (timeout 10s, interval 200ms)");
      assertMatch(
        lines[1]!,
        /^\[ok\] k8s namespace\/default attempt 1 \(\d+\.\ds\): namespace\/default exists \(phase Active\)$/,
      );
      assertMatch(lines[2]!, /^waitcmd: satisfied in \d+\.\ds \(1\/1 conditions\)$/);
    });

    await t.step("a namespace appearing is reported by the watch", async () => {
      const r = await runLate(
        [...EVENTS_ONLY, "kubernetes", "ns/late-ns"],
        () =>
          kube.create("/api/v1/namespaces", {
            apiVersion: "v1",
            kind: "Namespace",
            metadata: { name: "late-ns" },
          }),
        env,
      );
      assertEquals(r.code, 0);
      assertEquals(r.stderr, "");
      assertEquals(r.attempts[0]!.error, "namespace/late-ns not found");
      const c = r.report.conditions[0]!;
      assertEquals([c.name, c.kind, c.satisfied], ["kubernetes ns/late-ns", "orch", true]);
      assertEquals(c.detail, "namespace/late-ns exists (phase Active)");
    });

    const webPath = `${nsPath("deployments", "apps/v1")}/web`;
    const rollout = ["k8s", "deploy/web", "--namespace", NS, "--for", "rollout"];

    await t.step("a deployment created through the API rolls out (--for rollout)", async () => {
      const r = await runLate(
        [...CLUSTER, ...rollout],
        () => kube.create(nsPath("deployments", "apps/v1"), deployment("web", 2)),
        env,
      );
      assertOutcome(r, {
        code: 0,
        stderr: "",
        firstError: `deployment/web not found in namespace ${NS}`,
        detail: "deployment/web rolled out (2/2 replicas updated and available)",
      });
      // The replicas are real pods, scheduled onto the fake node and run by KWOK.
      const pods = await kube.get<{ items: Status[] }>(
        `${nsPath("pods")}?labelSelector=app%3Dweb`,
      );
      assertEquals(pods.items.length, 2);
      for (const p of pods.items) {
        assertEquals([p.spec?.nodeName, p.status?.phase], [NODE_NAME, "Running"]);
      }
    });

    await t.step(
      "a new generation is not rolled out before the controller observes it (controller-manager paused)",
      async () => {
        await paused(async () => {
          await kube.patch(webPath, { spec: { replicas: 3 } });
          await expectJson([...SHORT, ...rollout], {
            code: 1,
            error:
              "deployment/web waiting for the spec update to be observed (generation 2, observed 1)",
          }, { env });
          const r = await runLate([...CLUSTER, ...rollout], () => kube.resumeControllers(), env);
          assertOutcome(r, {
            code: 0,
            firstError:
              "deployment/web waiting for the spec update to be observed (generation 2, observed 1)",
            detail: "deployment/web rolled out (3/3 replicas updated and available)",
          });
        });
      },
    );

    await t.step(
      "a rolling update stuck on a pod that never becomes Ready stays pending, then exceeds its progress deadline (exit 3)",
      async () => {
        await kube.patch(webPath, { spec: { template: { metadata: { labels: HOLD } } } });
        // Surge 1 (25% of 3, rounded up), unavailable 0: one new pod, held Pending by KWOK.
        await until(
          kube,
          webPath,
          (d) =>
            d.status?.observedGeneration === d.metadata.generation &&
            d.status?.updatedReplicas === 1 && d.status?.replicas === 4,
          "stuck with 1 updated replica",
        );
        await expectJson([...SHORT, ...rollout], {
          code: 1,
          error: "deployment/web 1 out of 3 new replicas have been updated",
        }, { env });
        // A deadline already passed: the controller marks ProgressDeadlineExceeded.
        const r = await runLate(
          [...CLUSTER, ...rollout],
          () => kube.patch(webPath, { spec: { progressDeadlineSeconds: 1 } }),
          env,
        );
        assertOutcome(r, {
          code: 3,
          status: "fatal",
          stderr: "",
          firstError: "deployment/web 1 out of 3 new replicas have been updated",
          error:
            /^deployment\/web rollout exceeded its progress deadline: ProgressDeadlineExceeded: ReplicaSet "web-[a-z0-9]+" has timed out progressing\.$/,
        });
      },
    );

    await t.step("--condition on a deployment, status defaulting to True", async () => {
      await paused(async () => {
        await kube.create(nsPath("deployments", "apps/v1"), deployment("cond", 1));
        const r = await runLate(
          [
            ...CLUSTER,
            ...["k8s", "deployment.apps/cond", "--namespace", NS, "--condition", "Available"],
          ],
          () => kube.resumeControllers(),
          env,
        );
        assertOutcome(r, {
          code: 0,
          firstError: "deployment/cond no condition Available yet",
          detail: "deployment/cond condition Available=True (MinimumReplicasAvailable)",
        });
      });
    });

    await t.step(
      "--jsonpath '{.status.readyReplicas} >= 2' on a scaled deployment; its pods all Ready",
      async () => {
        await kube.create(nsPath("deployments", "apps/v1"), deployment("api", 1));
        const path = `${nsPath("deployments", "apps/v1")}/api`;
        await until(kube, path, (d) => d.status?.readyReplicas === 1, "1 ready replica");
        const r = await runLate(
          [
            ...CLUSTER,
            ...["k8s", "deploy/api", "--namespace", NS],
            ...["--jsonpath", "{.status.readyReplicas} >= 2"],
          ],
          // kubectl scale: the scale subresource.
          () => kube.patch(`${path}/scale`, { spec: { replicas: 2 } }),
          env,
        );
        assertEquals(r.code, 0, JSON.stringify(r.attempts));
        assertEquals(r.stderr, "");
        assertStringIncludes(r.attempts[0]!.error, "deployment/api ");
        assertStringIncludes(r.attempts[0]!.error, "1");
        assertStringIncludes(r.report.conditions[0]!.detail, "deployment/api ");
        assertStringIncludes(r.report.conditions[0]!.detail, "2");
        const pods = await runJson(
          [...FAST, "k8s", "pods", "--selector", "app=api", "--namespace", NS, "--all"]
            .concat(["--for", "ready"]),
          { env },
        );
        assertEquals(pods.code, 0, pods.stdout);
        assertEquals(
          pods.json.conditions[0]!.detail,
          `2/2 pods matching app=api in namespace ${NS}: Ready`,
        );
      },
    );

    await t.step("a pod becoming Ready (--for ready), context namespace by default", async () => {
      await kube.create(nsPath("pods"), pod("worker", HOLD));
      const cfg = `${dir}/ns.kubeconfig`;
      // Same credentials, but the context's namespace is the test namespace.
      await Deno.writeTextFile(
        cfg,
        (await Deno.readTextFile(kube.kubeconfig)).replace(
          "namespace: default",
          `namespace: ${NS}`,
        ),
      );
      const r = await runLate(
        [...CLUSTER, "k8s", "po/worker", "--for", "ready", "--kubeconfig", cfg],
        // Released: KWOK starts it.
        () =>
          kube.patch(`${nsPath("pods")}/worker`, {
            metadata: { labels: { [STAGE_LABEL]: null } },
          }),
        { KUBECONFIG: "/nonexistent/kubeconfig" },
      );
      assertOutcome(r, {
        code: 0,
        firstError: "pod/worker not Ready (phase Pending)",
        detail: "pod/worker Ready (phase Running)",
      });
    });

    await t.step("a failed pod is fatal for --for ready (exit 3)", async () => {
      const r = await runLate(
        [...CLUSTER, "k8s", "pod/crasher", "--namespace", NS, "--for", "ready"],
        () => kube.create(nsPath("pods"), pod("crasher", FAIL)),
        env,
      );
      assertEquals(r.code, 3, JSON.stringify(r.attempts));
      assertEquals(r.stderr, "");
      assertEquals(r.report.status, "fatal");
      assertEquals(r.attempts[0]!.error, `pod/crasher not found in namespace ${NS}`);
      const c = r.report.conditions[0]!;
      assertEquals([c.satisfied, c.fatal], [false, true]);
      assertEquals(c.last_error, "pod/crasher failed (phase Failed: Error: exit code 1)");
    });

    /** Creates job NAME while paused, then runs `k8s job/NAME --for complete` as it runs. */
    const jobLate = (name: string, podLabels?: Record<string, string>) =>
      paused(async () => {
        await kube.create(nsPath("jobs", "batch/v1"), job(name, podLabels));
        return await runLate(
          [...CLUSTER, "k8s", `job/${name}`, "--namespace", NS, "--for", "complete"],
          () => kube.resumeControllers(),
          env,
        );
      });

    await t.step("a job completing (--for complete)", async () => {
      assertOutcome(await jobLate("migrate"), {
        code: 0,
        firstError: "job/migrate not complete (active 0, succeeded 0, failed 0)",
        detail: "job/migrate complete (1 succeeded)",
      });
    });

    await t.step("a job failing is fatal (exit 3)", async () => {
      assertOutcome(await jobLate("broken", FAIL), {
        code: 3,
        status: "fatal",
        stderr: "",
        firstError: "job/broken not complete (active 0, succeeded 0, failed 0)",
        error:
          "job/broken failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
      });
      const text = await runCli([
        ...FAST,
        ...["k8s", "job/broken", "--namespace", NS, "--for", "complete"],
      ], {
        env,
      });
      assertEquals(text.code, 3);
      assertStringIncludes(text.stderr, "job/broken failed: BackoffLimitExceeded");
    });

    await t.step("a selector with --all waits for every matching pod", async () => {
      await kube.create(nsPath("pods"), pod("shop-a", { app: "shop" }));
      await kube.create(nsPath("pods"), pod("shop-b", { app: "shop", ...HOLD }));
      await until(kube, `${nsPath("pods")}/shop-a`, isReady, "Ready");
      const args = ["k8s", "pods", "--selector", "app=shop", "--namespace", NS, "--for", "ready"];
      const what = `pods matching app=shop in namespace ${NS}`;
      const one = await runJson([...FAST, ...args], { env });
      assertEquals(one.code, 0, "without --all one Ready pod suffices");
      assertEquals(
        one.json.conditions[0]!.detail,
        `1/2 ${what}: Ready; pod/shop-a: Ready (phase Running)`,
      );
      const r = await runLate(
        [...CLUSTER, ...args, "--all"],
        () =>
          kube.patch(`${nsPath("pods")}/shop-b`, {
            metadata: { labels: { [STAGE_LABEL]: null } },
          }),
        env,
      );
      assertOutcome(r, {
        code: 0,
        firstError: `1/2 ${what}: Ready; pod/shop-b: not Ready (phase Pending)`,
        detail: `2/2 ${what}: Ready`,
      });
    });

    await t.step("--all without a selector takes every object of the kind", async () => {
      await expectJson([...FAST, "k8s", "namespaces", "--all"], {
        code: 0,
        detail: /^(\d+)\/\1 namespaces: exist$/,
      }, { env });
    });

    await t.step("a selector matching nothing stays pending", async () => {
      await expectJson(
        [...SHORT, "k8s", "deploy", "--selector", "app=none", "--namespace", NS],
        { code: 1, error: `no deployments matching app=none in namespace ${NS}` },
        {
          env,
        },
      );
    });

    await t.step(
      "a custom resource, by kind, plural and short name (status patched by hand: no controller serves the CRD)",
      async () => {
        await createCrd(kube, {
          plural: "widgets",
          singular: "widget",
          kind: "Widget",
          shortNames: ["wd"],
        });
        await expectJson(
          [...FAST, "k8s", "crd/widgets.example.com", "--condition", "Established"],
          { code: 0 },
          { env },
        );
        // Discovery may lag a moment behind the Established condition.
        const deadline = Date.now() + 10_000;
        while (Date.now() < deadline) {
          const r = await kube.request("GET", "/apis/example.com/v1");
          await r.body?.cancel();
          if (r.ok) break;
          await new Promise((res) => setTimeout(res, 100));
        }
        await kube.create(`/apis/example.com/v1/namespaces/${NS}/widgets`, {
          apiVersion: "example.com/v1",
          kind: "Widget",
          metadata: { name: "w1", namespace: NS },
          spec: { size: 3 },
        });
        const r = await runLate(
          [...EVENTS_ONLY, "k8s", "wd/w1", "--namespace", NS, "--condition", "Ready"],
          () =>
            kube.patchStatus(`/apis/example.com/v1/namespaces/${NS}/widgets/w1`, {
              conditions: [{ type: "Ready", status: "True", reason: "Reconciled" }],
            }),
          env,
        );
        assertEquals(r.code, 0);
        assertEquals(r.attempts[0]!.error, "widget/w1 no condition Ready yet");
        assertEquals(
          r.report.conditions[0]!.detail,
          "widget/w1 condition Ready=True (Reconciled)",
        );
        for (const word of ["Widget", "widgets", "widgets.example.com"]) {
          const j = await runJson(
            [...FAST, "k8s", `${word}/w1`, "--namespace", NS, "--jsonpath", ".spec.size == 3"],
            { env },
          );
          assertEquals(j.code, 0, word);
        }
      },
    );

    await t.step("--for delete waits until the object is gone", async () => {
      await kube.create(nsPath("configmaps"), {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "lock", namespace: NS },
        data: { owner: "job-1" },
      });
      const r = await runLate(
        [...EVENTS_ONLY, "k8s", "cm/lock", "--namespace", NS, "--for", "delete"],
        () => kube.del(`${nsPath("configmaps")}/lock`),
        env,
      );
      assertEquals(r.code, 0);
      assertEquals(r.stderr, "");
      assertEquals(r.attempts[0]!.error, "configmap/lock still exists");
      assertEquals(r.report.conditions[0]!.detail, "configmap/lock deleted");
      await expectJson(
        [...FAST, "k8s", "cm/never", "--namespace", NS, "--for", "delete"],
        { code: 0, detail: `configmap/never does not exist in namespace ${NS}` },
        {
          env,
        },
      );
    });

    await t.step(
      "--for delete waits through a pod's graceful deletion (KWOK ends it after the grace period)",
      async () => {
        const path = `${nsPath("pods")}/graceful`;
        await kube.create(nsPath("pods"), pod("graceful"));
        await until(kube, path, isReady, "Ready");
        let deletedAt = 0;
        const r = await runLate(
          [...CLUSTER, "k8s", "pod/graceful", "--namespace", NS, "--for", "delete"],
          async () => {
            deletedAt = Date.now();
            await kube.del(path, { gracePeriodSeconds: 5 });
          },
          env,
        );
        const took = Date.now() - deletedAt;
        assertEquals(r.code, 0, JSON.stringify(r.attempts));
        assertEquals(r.stderr, "");
        assertEquals(r.attempts[0]!.error, "pod/graceful still exists");
        assert(
          r.attempts.some((a) => a.error === "pod/graceful still exists (terminating)"),
          JSON.stringify(r.attempts),
        );
        assertEquals(r.report.conditions[0]!.detail, "pod/graceful deleted");
        // deletionTimestamp has whole seconds: the grace period may end up to 1 s early.
        assert(took >= 3500, `deleted after ${took} ms, before its grace period ended`);
      },
    );

    await t.step("--for delete on a namespace the namespace controller empties", async () => {
      await kube.create("/api/v1/namespaces/late-ns/configmaps", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "content", namespace: "late-ns" },
      });
      const r = await runLate(
        [...CLUSTER, "k8s", "ns/late-ns", "--for", "delete"],
        () => kube.del("/api/v1/namespaces/late-ns"),
        env,
      );
      assertOutcome(r, {
        code: 0,
        stderr: "",
        firstError: "namespace/late-ns still exists",
        detail: "namespace/late-ns deleted",
      });
    });

    await t.step("a missing object stays pending until the timeout", async () => {
      const r = await expectJson(
        [...SHORT, "k8s", "deploy/nope", "--namespace", NS],
        { code: 1, status: "timeout", stderr: "" },
        { env },
      );
      const c = r.json.conditions[0]!;
      assertEquals(c.satisfied, false);
      assertEquals(c.last_error, `deployment/nope not found in namespace ${NS}`);
    });

    await t.step("refused credentials are fatal and say which ones (exit 3)", async () => {
      const r = await expectJson(
        [...FAST, "k8s", "ns/default", "--kubeconfig", kube.badKubeconfig],
        { code: 3, status: "fatal", stderr: "" },
        {
          env,
        },
      );
      assertEquals(
        r.json.conditions[0]!.last_error,
        `credentials refused (401 Unauthorized); bearer token of user "waitcmd-test-user", context "waitcmd-test" in ${kube.badKubeconfig}; server ${kube.server}`,
      );
      const cert = await expectJson([...FAST, "k8s", "ns/default"], { code: 3 }, {
        env: { KUBECONFIG: kube.badCertKubeconfig },
      });
      assertStringIncludes(
        cert.json.conditions[0]!.last_error,
        'credentials refused (401 Unauthorized); client certificate of user "waitcmd-test-user"',
      );
      const forbidden = await expectJson([...FAST, "k8s", "pod/x", "--namespace", NS], {
        code: 3,
      }, {
        env: { KUBECONFIG: kube.forbiddenKubeconfig },
      });
      assertStringIncludes(
        forbidden.json.conditions[0]!.last_error,
        `access forbidden (403 Forbidden): pods "x" is forbidden: User "waitcmd-nobody" cannot get resource "pods"`,
      );
      const badToken = (await Deno.readTextFile(kube.badKubeconfig)).match(/token: (\S+)/)![1]!;
      assert(!r.stdout.includes(badToken), "the token never appears");
    });

    await t.step("token, exec plugin (EKS style) and insecure kubeconfigs work", async () => {
      const plugin = `${dir}/get-token`;
      await Deno.writeTextFile(
        plugin,
        `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"${kube.adminToken}"}}'\n`,
        { mode: 0o755 },
      );
      const exec = `${dir}/exec.kubeconfig`;
      await Deno.writeTextFile(
        exec,
        kubeconfigWith(kube, [
          "    exec:",
          "      apiVersion: client.authentication.k8s.io/v1beta1",
          `      command: ${plugin}`,
          "      args: [eks, get-token, --cluster-name, test]",
          "      interactiveMode: Never",
        ], { namespace: NS }),
      );
      const insecure = `${dir}/insecure.kubeconfig`;
      await Deno.writeTextFile(
        insecure,
        kubeconfigWith(kube, [`    token: ${kube.adminToken}`], {
          cluster: ["    insecure-skip-tls-verify: true"],
        }),
      );
      for (const cfg of [kube.tokenKubeconfig, exec, insecure, insecure, insecure]) {
        const started = Date.now();
        const r = await runJson([...FAST, "k8s", "deploy/web", "--namespace", NS], {
          env: { KUBECONFIG: cfg },
        });
        assertEquals(r.code, 0, `${cfg}: ${r.stdout}`);
        assertEquals(r.stderr, "");
        assert(!r.stdout.includes(kube.adminToken), "the token never appears");
        // Loose bound: the open watch must not keep the process alive after the verdict.
        assert(Date.now() - started < 20_000, `${cfg}: the process exits after its verdict`);
      }
      const watched = await runLate(
        [...EVENTS_ONLY, "k8s", "cm/exec-late"],
        () =>
          kube.create(nsPath("configmaps"), {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "exec-late", namespace: NS },
          }),
        { KUBECONFIG: exec },
      );
      assertEquals(watched.code, 0, "the watch authenticates through the plugin too");
    });

    await t.step(
      "unknown kinds, contexts and a missing kubeconfig are fatal",
      async () => {
        await expectJson([...FAST, "k8s", "gadget/x"], {
          code: 3,
          error:
            'the server has no resource type "gadget" (not a kind, plural or short name it knows; see kubectl api-resources)',
        }, { env });
        await expectJson([...FAST, "k8s", "ns/default", "--context", "prod"], {
          code: 3,
          error: 'context "prod" is not in the kubeconfig (contexts: waitcmd-test)',
        }, { env });
        await expectJson([...SHORT, "k8s", "ns/default"], {
          code: 3,
          error: `kubeconfig ${dir}/missing.kubeconfig (KUBECONFIG): no such file`,
        }, {
          env: { KUBECONFIG: `${dir}/missing.kubeconfig` },
        });
      },
    );

    await t.step("an unreachable API server is retried", async () => {
      const cfg = `${dir}/down.kubeconfig`;
      const closed = `https://127.0.0.1:${freePort()}`;
      const down = (await Deno.readTextFile(kube.kubeconfig)).replace(kube.server, closed);
      await Deno.writeTextFile(cfg, down);
      const r = await expectJson([...SHORT, "k8s", "ns/default"], { code: 1 }, {
        env: { KUBECONFIG: cfg },
      });
      assertEquals(r.stderr, "");
      assertEquals(r.json.conditions[0]!.last_error, `${closed}: connection refused`);
    });

    await t.step("usage errors: exit 2, one line, nothing probed", async () => {
      const rows: [string[], string][] = [
        [["k8s", "deployment"], "expected KIND/NAME, or KIND with --selector or --all"],
        [
          ["k8s", "deploy/web", "--selector", "app=web"],
          "--selector: cannot be combined with KIND/NAME",
        ],
        [["k8s", "pod/p", "--for", "rollout"], "--for: rollout works with deployments"],
        [
          ["k8s", "job/j", "--for", "complete", "--jsonpath", ".a"],
          "--jsonpath: cannot be combined with --for",
        ],
        [["k8s", "pod/p", "--jsonpath", ".status.phase =="], "--jsonpath: "],
        [["k8s", "pods", "--selector", "a b"], "--selector: expected requirements like app=web"],
      ];
      for (const [args, fragment] of rows) {
        const r = await runCli(args, { env });
        const line = usageErrorLine(r);
        assertStringIncludes(line, `waitcmd: condition 1 (k8s): ${fragment}`);
        assert(line.endsWith("(see: waitcmd help orch)"), line);
      }
    });
  },
);
