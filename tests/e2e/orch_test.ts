/**
 * orch end to end: the CLI against a real kube-apiserver + etcd
 * (tests/services/kube.ts). No kubelet or controller runs, so the tests
 * create objects and patch their status the way controllers would.
 *
 * Runs that wait for a change use an interval longer than their timeout
 * (EVENTS_ONLY): they can only end satisfied because the watch reported the
 * change.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { freePort, ServiceUnavailableError } from "../services/_util.ts";
import { buildKube, type KubeEnv, type KubeObject, startKube } from "../services/kube.ts";
import { runCli, runJson, usageErrorLine } from "./_cli.ts";
import { runLate } from "./_late.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];
const SHORT = ["--timeout", "1500ms", "--interval", "200ms"];
/** Satisfied before the timeout only if a watch event woke the poll loop. */
const EVENTS_ONLY = ["--timeout", "15s", "--interval", "30s"];

const NS = "e2e";

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: NS, labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
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

const job = (name: string) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: NS },
  spec: {
    backoffLimit: 0,
    template: {
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "main", image: "example.invalid/job:1" }],
      },
    },
  },
});

const readyPod = { phase: "Running", conditions: [{ type: "Ready", status: "True" }] };

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

/** Why the suite cannot build kube-apiserver and etcd here, or undefined when it can. */
let whyMissing: string | undefined;
try {
  await buildKube();
} catch (e) {
  if (!(e instanceof ServiceUnavailableError)) throw e;
  whyMissing = e.message;
}

Deno.test({
  name: "orch against a real kube-apiserver",
  ignore: ignoreWithout("kube-apiserver", whyMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const kube: KubeEnv = await startKube();
    const env = { KUBECONFIG: kube.kubeconfig };
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-orch-e2e-" });
    const nsPath = (plural: string, group = "") =>
      `${group ? `/apis/${group}` : "/api/v1"}/namespaces/${NS}/${plural}`;
    try {
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

      await t.step("a deployment rolling out (kubectl's rules, observedGeneration)", async () => {
        const dep = await kube.create<KubeObject & { metadata: { generation: number } }>(
          nsPath("deployments", "apps/v1"),
          deployment("web", 2),
        );
        const path = `${nsPath("deployments", "apps/v1")}/web`;
        await kube.patchStatus(path, {
          observedGeneration: dep.metadata.generation,
          replicas: 2,
          updatedReplicas: 1,
          readyReplicas: 1,
          availableReplicas: 1,
        });
        const r = await runLate(
          [...EVENTS_ONLY, "k8s", "deploy/web", "--namespace", NS, "--for", "rollout"],
          () =>
            kube.patchStatus(path, {
              observedGeneration: dep.metadata.generation,
              replicas: 2,
              updatedReplicas: 2,
              readyReplicas: 2,
              availableReplicas: 2,
            }),
          env,
        );
        assertEquals(r.code, 0);
        assertEquals(r.stderr, "");
        assertEquals(
          r.attempts[0]!.error,
          "deployment/web 1 out of 2 new replicas have been updated",
        );
        assertEquals(
          r.report.conditions[0]!.detail,
          "deployment/web rolled out (2/2 replicas updated and available)",
        );
        // A new generation that the controller has not observed yet is not rolled out.
        await kube.patch(path, { spec: { replicas: 3 } });
        const stale = await runJson(
          [...SHORT, "k8s", "deploy/web", "--namespace", NS, "--for", "rollout"],
          { env },
        );
        assertEquals(stale.code, 1);
        assertEquals(
          stale.json.conditions[0]!.last_error,
          "deployment/web waiting for the spec update to be observed (generation 2, observed 1)",
        );
      });

      await t.step("--condition on a deployment, status defaulting to True", async () => {
        const path = `${nsPath("deployments", "apps/v1")}/web`;
        const r = await runLate(
          [
            ...EVENTS_ONLY,
            "k8s",
            "deployment.apps/web",
            "--namespace",
            NS,
            "--condition",
            "Available",
          ],
          () =>
            kube.patchStatus(path, {
              observedGeneration: 2,
              conditions: [{
                type: "Available",
                status: "True",
                reason: "MinimumReplicasAvailable",
              }],
            }),
          env,
        );
        assertEquals(r.code, 0);
        assertEquals(r.attempts[0]!.error, "deployment/web no condition Available yet");
        assertEquals(
          r.report.conditions[0]!.detail,
          "deployment/web condition Available=True (MinimumReplicasAvailable)",
        );
      });

      await t.step("--jsonpath '.status.readyReplicas >= 2'", async () => {
        await kube.create(nsPath("deployments", "apps/v1"), deployment("api", 3));
        const path = `${nsPath("deployments", "apps/v1")}/api`;
        await kube.patchStatus(path, { observedGeneration: 1, replicas: 3, readyReplicas: 1 });
        const r = await runLate(
          [
            ...EVENTS_ONLY,
            "k8s",
            "deploy/api",
            "--namespace",
            NS,
            "--jsonpath",
            ".status.readyReplicas >= 2",
          ],
          () => kube.patchStatus(path, { readyReplicas: 2 }),
          env,
        );
        assertEquals(r.code, 0);
        assertEquals(r.stderr, "");
        assertStringIncludes(r.attempts[0]!.error, "deployment/api ");
        assertStringIncludes(r.attempts[0]!.error, "1");
        assertStringIncludes(r.report.conditions[0]!.detail, "deployment/api ");
        assertStringIncludes(r.report.conditions[0]!.detail, "2");
      });

      await t.step("a pod becoming Ready (--for ready), context namespace by default", async () => {
        await kube.create(nsPath("pods"), pod("worker"));
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
          [...EVENTS_ONLY, "k8s", "po/worker", "--for", "ready", "--kubeconfig", cfg],
          () => kube.patchStatus(`${nsPath("pods")}/worker`, readyPod),
          { KUBECONFIG: "/nonexistent/kubeconfig" },
        );
        assertEquals(r.code, 0);
        assertEquals(r.attempts[0]!.error, "pod/worker not Ready (phase Pending)");
        assertEquals(r.report.conditions[0]!.detail, "pod/worker Ready (phase Running)");
      });

      await t.step("a failed pod is fatal for --for ready (exit 3)", async () => {
        await kube.create(nsPath("pods"), pod("crasher"));
        const r = await runLate(
          [...EVENTS_ONLY, "k8s", "pod/crasher", "--namespace", NS, "--for", "ready"],
          () =>
            kube.patchStatus(`${nsPath("pods")}/crasher`, {
              phase: "Failed",
              reason: "Error",
              message: "exit code 1",
            }),
          env,
        );
        assertEquals(r.code, 3);
        assertEquals(r.stderr, "");
        assertEquals(r.report.status, "fatal");
        const c = r.report.conditions[0]!;
        assertEquals([c.satisfied, c.fatal], [false, true]);
        assertEquals(c.last_error, "pod/crasher failed (phase Failed: Error: exit code 1)");
      });

      await t.step("a job completing (--for complete)", async () => {
        await kube.create(nsPath("jobs", "batch/v1"), job("migrate"));
        const t0 = now();
        const r = await runLate(
          [...EVENTS_ONLY, "k8s", "job/migrate", "--namespace", NS, "--for", "complete"],
          () =>
            kube.patchStatus(`${nsPath("jobs", "batch/v1")}/migrate`, {
              startTime: t0,
              completionTime: t0,
              succeeded: 1,
              conditions: [
                { type: "SuccessCriteriaMet", status: "True", lastTransitionTime: t0 },
                { type: "Complete", status: "True", lastTransitionTime: t0 },
              ],
            }),
          env,
        );
        assertEquals(r.code, 0);
        assertEquals(
          r.attempts[0]!.error,
          "job/migrate not complete (active 0, succeeded 0, failed 0)",
        );
        assertEquals(r.report.conditions[0]!.detail, "job/migrate complete (1 succeeded)");
      });

      await t.step("a job failing is fatal (exit 3)", async () => {
        await kube.create(nsPath("jobs", "batch/v1"), job("broken"));
        const t0 = now();
        const failed = {
          status: "True",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
          lastTransitionTime: t0,
        };
        const r = await runLate(
          [...EVENTS_ONLY, "k8s", "job/broken", "--namespace", NS, "--for", "complete"],
          () =>
            kube.patchStatus(`${nsPath("jobs", "batch/v1")}/broken`, {
              startTime: t0,
              failed: 1,
              conditions: [{ type: "FailureTarget", ...failed }, { type: "Failed", ...failed }],
            }),
          env,
        );
        assertEquals(r.code, 3);
        assertEquals(r.stderr, "");
        assertEquals(r.report.status, "fatal");
        assertEquals(
          r.report.conditions[0]!.last_error,
          "job/broken failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
        );
        const text = await runCli([
          ...FAST,
          "k8s",
          "job/broken",
          "--namespace",
          NS,
          "--for",
          "complete",
        ], {
          env,
        });
        assertEquals(text.code, 3);
        assertStringIncludes(text.stderr, "job/broken failed: BackoffLimitExceeded");
      });

      await t.step("a selector with --all waits for every matching pod", async () => {
        await kube.create(nsPath("pods"), pod("shop-a", { app: "shop" }));
        await kube.create(nsPath("pods"), pod("shop-b", { app: "shop" }));
        await kube.patchStatus(`${nsPath("pods")}/shop-a`, readyPod);
        const args = ["k8s", "pods", "--selector", "app=shop", "--namespace", NS, "--for", "ready"];
        const what = `pods matching app=shop in namespace ${NS}`;
        const one = await runJson([...FAST, ...args], { env });
        assertEquals(one.code, 0, "without --all one Ready pod suffices");
        assertEquals(
          one.json.conditions[0]!.detail,
          `1/2 ${what}: Ready; pod/shop-a: Ready (phase Running)`,
        );
        const r = await runLate(
          [...EVENTS_ONLY, ...args, "--all"],
          () => kube.patchStatus(`${nsPath("pods")}/shop-b`, readyPod),
          env,
        );
        assertEquals(r.code, 0);
        assertEquals(
          r.attempts[0]!.error,
          `1/2 ${what}: Ready; pod/shop-b: not Ready (phase Pending)`,
        );
        assertEquals(r.report.conditions[0]!.detail, `2/2 ${what}: Ready`);
      });

      await t.step("--all without a selector takes every object of the kind", async () => {
        const r = await runJson([...FAST, "k8s", "namespaces", "--all"], { env });
        assertEquals(r.code, 0);
        assertMatch(r.json.conditions[0]!.detail, /^(\d+)\/\1 namespaces: exist$/);
      });

      await t.step("a selector matching nothing stays pending", async () => {
        const r = await runJson([
          ...SHORT,
          "k8s",
          "deploy",
          "--selector",
          "app=none",
          "--namespace",
          NS,
        ], {
          env,
        });
        assertEquals(r.code, 1);
        assertEquals(
          r.json.conditions[0]!.last_error,
          `no deployments matching app=none in namespace ${NS}`,
        );
      });

      await t.step("a custom resource, by kind, plural and short name", async () => {
        await kube.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "widgets.example.com" },
          spec: {
            group: "example.com",
            scope: "Namespaced",
            names: { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wd"] },
            versions: [{
              name: "v1",
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              },
            }],
          },
        });
        const crdReady = await runJson(
          [...FAST, "k8s", "crd/widgets.example.com", "--condition", "Established"],
          { env },
        );
        assertEquals(crdReady.code, 0);
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
        assertEquals(r.report.conditions[0]!.detail, "widget/w1 condition Ready=True (Reconciled)");
        for (const word of ["Widget", "widgets", "widgets.example.com"]) {
          const j = await runJson(
            [...FAST, "k8s", `${word}/w1`, "--namespace", NS, "--jsonpath", ".spec.size == 3"],
            { env },
          );
          assertEquals(j.code, 0, word);
        }
      });

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
        const gone = await runJson([
          ...FAST,
          "k8s",
          "cm/never",
          "--namespace",
          NS,
          "--for",
          "delete",
        ], {
          env,
        });
        assertEquals(gone.code, 0);
        assertEquals(
          gone.json.conditions[0]!.detail,
          `configmap/never does not exist in namespace ${NS}`,
        );
      });

      await t.step("a missing object stays pending until the timeout", async () => {
        const r = await runJson([...SHORT, "k8s", "deploy/nope", "--namespace", NS], { env });
        assertEquals(r.code, 1);
        assertEquals(r.stderr, "");
        assertEquals(r.json.status, "timeout");
        const c = r.json.conditions[0]!;
        assertEquals(c.satisfied, false);
        assertEquals(c.last_error, `deployment/nope not found in namespace ${NS}`);
      });

      await t.step("refused credentials are fatal and say which ones (exit 3)", async () => {
        const r = await runJson(
          [...FAST, "k8s", "ns/default", "--kubeconfig", kube.badKubeconfig],
          {
            env,
          },
        );
        assertEquals(r.code, 3);
        assertEquals(r.stderr, "");
        assertEquals(r.json.status, "fatal");
        assertEquals(
          r.json.conditions[0]!.last_error,
          `credentials refused (401 Unauthorized); bearer token of user "waitcmd-test-user", context "waitcmd-test" in ${kube.badKubeconfig}; server ${kube.server}`,
        );
        const cert = await runJson([...FAST, "k8s", "ns/default"], {
          env: { KUBECONFIG: kube.badCertKubeconfig },
        });
        assertEquals(cert.code, 3);
        assertStringIncludes(
          cert.json.conditions[0]!.last_error,
          'credentials refused (401 Unauthorized); client certificate of user "waitcmd-test-user"',
        );
        const forbidden = await runJson([...FAST, "k8s", "pod/x", "--namespace", NS], {
          env: { KUBECONFIG: kube.forbiddenKubeconfig },
        });
        assertEquals(forbidden.code, 3);
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
        "unknown kinds and contexts are fatal; a missing kubeconfig is retried",
        async () => {
          const kind = await runJson([...FAST, "k8s", "gadget/x"], { env });
          assertEquals(kind.code, 3);
          assertEquals(
            kind.json.conditions[0]!.last_error,
            'the server has no resource type "gadget" (not a kind, plural or short name it knows; see kubectl api-resources)',
          );
          const ctx = await runJson([...FAST, "k8s", "ns/default", "--context", "prod"], { env });
          assertEquals(ctx.code, 3);
          assertEquals(
            ctx.json.conditions[0]!.last_error,
            'context "prod" is not in the kubeconfig (contexts: waitcmd-test)',
          );
          const none = await runJson([...SHORT, "k8s", "ns/default"], {
            env: { KUBECONFIG: `${dir}/missing.kubeconfig` },
          });
          assertEquals(none.code, 1);
          assertEquals(
            none.json.conditions[0]!.last_error,
            `kubeconfig ${dir}/missing.kubeconfig (KUBECONFIG): no such file`,
          );
        },
      );

      await t.step("an unreachable API server is retried", async () => {
        const cfg = `${dir}/down.kubeconfig`;
        const closed = `https://127.0.0.1:${freePort()}`;
        const down = (await Deno.readTextFile(kube.kubeconfig)).replace(kube.server, closed);
        await Deno.writeTextFile(cfg, down);
        const r = await runJson([...SHORT, "k8s", "ns/default"], { env: { KUBECONFIG: cfg } });
        assertEquals(r.code, 1);
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
    } finally {
      await kube.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
