/**
 * The frame of the e2e tests against a real cluster (tests/services/kube.ts): the test is ignored
 * with the reason where the cluster's binaries cannot be built here, and its cluster and its
 * temporary directory are stopped and removed whatever the test does.
 *
 * @module
 */

import { ignoreWithout } from "../_kit.ts";
import { type KubeEnv, startKube, whyNoCluster } from "../services/kube.ts";

/** Why the suite cannot build the cluster's binaries here, or undefined when it can. */
const whyMissing = await whyNoCluster();

/** What a cluster test is given: the cluster, `KUBECONFIG` for the CLI, a temporary directory. */
export interface ClusterRun {
  kube: KubeEnv;
  env: Record<string, string>;
  dir: string;
}

/** Declares a Deno test `name` run by `fn` against a fresh cluster (controllers, scheduler, KWOK). */
export function clusterTest(
  name: string,
  fn: (t: Deno.TestContext, run: ClusterRun) => Promise<void>,
): void {
  Deno.test({
    name,
    ignore: ignoreWithout(
      "kube-apiserver, kube-controller-manager, kube-scheduler and kwok",
      whyMissing,
    ),
    sanitizeOps: false,
    sanitizeResources: false,
    async fn(t) {
      const kube = await startKube({ cluster: true });
      const dir = await Deno.makeTempDir({ prefix: "waitcmd-cluster-e2e-" });
      try {
        await fn(t, { kube, env: { KUBECONFIG: kube.kubeconfig }, dir });
      } finally {
        await kube.stop();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  });
}

/**
 * Defines a namespaced custom resource `PLURAL.example.com` (version v1, a status subresource,
 * any fields): an administrator's definition, served by no controller.
 */
export async function createCrd(
  kube: KubeEnv,
  names: { plural: string; singular: string; kind: string; shortNames?: string[] },
): Promise<void> {
  await kube.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${names.plural}.example.com` },
    spec: {
      group: "example.com",
      scope: "Namespaced",
      names,
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
}
