/**
 * The orch kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { buildMissing } from "../../tests/services/_util.ts";
import { buildKube, type KubeEnv, startKube } from "../../tests/services/kube.ts";
import { DEAD_MARK, type KindSuite } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => {
    // A kubeconfig whose server is the silent port and whose token is the secret.
    Deno.writeTextFileSync(
      `${d.dir}/kubeconfig`,
      [
        "apiVersion: v1",
        "kind: Config",
        `clusters: [{name: c, cluster: {server: 'https://127.0.0.1:${d.silentTcp}', insecure-skip-tls-verify: true}}]`,
        `users: [{name: u, user: {token: ${DEAD_MARK}}}]`,
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
        "",
      ].join("\n"),
    );
    return { args: ["orch", "pod/x", "--kubeconfig", `${d.dir}/kubeconfig`] };
  },
  live: {
    needs: "kube-apiserver and etcd",
    missing: () => buildMissing(() => buildKube()),
    async make() {
      const kube: KubeEnv = await startKube();
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "live-web", namespace: "default" },
        spec: { containers: [{ name: "web", image: "busybox" }] },
      };
      const path = "/api/v1/namespaces/default/pods/live-web";
      let apiserver = true;
      const kc = (k: string) => ["--kubeconfig", k];
      return {
        satisfied: ["orch", "pod/live-web", ...kc(kube.tokenKubeconfig)],
        detail: /pod\/live-web exists.*/,
        // Nothing schedules the pod (no scheduler runs): it is never Ready.
        pending: ["orch", "pod/live-web", "--for", "ready", ...kc(kube.tokenKubeconfig)],
        pendingError: /not ready|Pending|not scheduled/,
        up: async () => {
          if (!apiserver) {
            await kube.startApiserver();
            apiserver = true;
          }
          if (!(await kube.tryGet(path))) await kube.create("/api/v1/namespaces/default/pods", pod);
        },
        down: async () => {
          await kube.stopApiserver();
          apiserver = false;
        },
        // A pooled HTTP/2 connection may meet the apiserver stopping before a refused connect.
        downError: /not found|connection (refused|closed|reset)/,
        // Refused credentials are fatal for orch (docs/contract.md, orch).
        wrong: {
          args: ["orch", "pod/live-web", ...kc(kube.badKubeconfig)],
          error: "credentials refused (401 Unauthorized)",
          fatal: true,
        },
        secrets: [kube.adminToken],
        usage: ["orch", "pod/live-web", ...kc(kube.tokenKubeconfig), "--for", "sometime"],
        remove: () => kube.stop(),
      };
    },
  },
  usage: [
    [["k8s", "deploy"], 'expected KIND/NAME, or KIND with --selector or --all, got "deploy"'],
    [
      ["k8s", "deployment"],
      'expected KIND/NAME, or KIND with --selector or --all, got "deployment"',
    ],
    [
      ["k8s", "deploy/"],
      'expected KIND/NAME (deployment/web) or KIND with --selector, got "deploy/"',
    ],
    [["k8s", "/web"], 'expected KIND/NAME (deployment/web) or KIND with --selector, got "/web"'],
    [
      ["k8s", "deploy/a/b"],
      'expected KIND/NAME (deployment/web) or KIND with --selector, got "deploy/a/b"',
    ],
    [
      ["k8s", "deploy/web", "--selector", "app=web"],
      "--selector: cannot be combined with KIND/NAME",
    ],
    [["k8s", "deploy/web", "--all"], "--all: cannot be combined with KIND/NAME"],
    [
      ["k8s", "pods", "--selector", "app web"],
      '--selector: expected requirements like app=web, tier!=db, env in (a,b) or !key, got "app web"',
    ],
    [
      ["k8s", "pods", "--selector", "a b"],
      '--selector: expected requirements like app=web, tier!=db, env in (a,b) or !key, got "a b"',
    ],
    [
      ["k8s", "pod/p", "--namespace", "Bad_NS"],
      '--namespace: expected a namespace name like default, got "Bad_NS"',
    ],
    [
      ["k8s", "pod/p", "--for", "rollout"],
      "--for: rollout works with deployments, statefulsets and daemonsets, not pods",
    ],
    [
      ["k8s", "deployments.apps/web", "--for", "complete"],
      "--for: complete works with jobs, not deployments",
    ],
    [
      ["k8s", "pod/p", "--for", "ready", "--condition", "Ready"],
      "--condition: cannot be combined with --for; give one wait type",
    ],
    [
      ["k8s", "pod/p", "--condition", "Ready", "--jsonpath", ".a"],
      "--jsonpath: cannot be combined with --condition; give one wait type",
    ],
    [
      ["k8s", "job/j", "--for", "complete", "--jsonpath", ".a"],
      "--jsonpath: cannot be combined with --for; give one wait type",
    ],
    [
      ["k8s", "pod/p", "--jsonpath", ".status.phase =="],
      "--jsonpath: expected a value after .status.phase ==",
    ],
    [
      ["k8s", "pod/p", "--condition", "Ready=Not Yet"],
      '--condition: expected a condition type like Available or Ready=False, got "Ready=Not Yet"',
    ],
    [["k8s", "pod/p", "--context", ""], "--context: expected a value, got an empty string"],
    [
      ["k8s"],
      "missing target KIND/NAME (deployment/web), KIND with --selector or --all, or -f FILE for the objects of manifests",
    ],
    [
      ["k8s", "deploy/web", "-f", "app.yaml"],
      '--file: cannot be combined with a target ("deploy/web"); the manifests name the objects',
    ],
    [["k8s", "-f", ""], "--file: expected a file, a directory or - (standard input)"],
    [
      ["k8s", "-f", "app.yaml", "--selector", "app=web"],
      "--selector: cannot be combined with --file; each object waits for the readiness of its kind (or --for create, --for delete)",
    ],
    [
      ["k8s", "-f", "app.yaml", "--condition", "Ready"],
      "--condition: cannot be combined with --file; each object waits for the readiness of its kind (or --for create, --for delete)",
    ],
    [
      ["k8s", "-f", "app.yaml", "--for", "rollout"],
      "--for: rollout cannot be combined with --file; give create or delete, or none for the readiness of each object's kind",
    ],
  ],
};
