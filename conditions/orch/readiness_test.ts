import { assertEquals } from "../../tests/_assert.ts";
import { DEADLINE_EXCEEDED, DEADLINE_VERDICT } from "./_fake_kube.ts";
import type { KubeObject, Verdict } from "./judge.ts";
import {
  claimBound,
  daemonSetReady,
  genericReady,
  needsEndpoints,
  readiness,
  type ResourceType,
  serviceReady,
  statefulSetReady,
} from "./readiness.ts";

const v = (state: Verdict["state"], text: string): Verdict => ({ state, text });

const APPS = (plural: string): ResourceType => ({ group: "apps", plural });
const CORE = (plural: string): ResourceType => ({ group: "", plural });

Deno.test("readiness() picks the rule of the object's kind", async (t) => {
  const rows: [string, ResourceType, KubeObject, Verdict][] = [
    [
      "a Deployment: rollout status, its progress deadline fatal",
      APPS("deployments"),
      {
        metadata: { generation: 1 },
        spec: { replicas: 1 },
        status: DEADLINE_EXCEEDED,
      },
      DEADLINE_VERDICT,
    ],
    [
      "a Deployment at a generation not yet observed",
      APPS("deployments"),
      {
        metadata: { generation: 3 },
        spec: { replicas: 1 },
        status: { observedGeneration: 2, updatedReplicas: 1, replicas: 1, availableReplicas: 1 },
      },
      v("wait", "waiting for the spec update to be observed (generation 3, observed 2)"),
    ],
    [
      "a StatefulSet rolled out",
      APPS("statefulsets"),
      {
        metadata: { generation: 1 },
        spec: { replicas: 2 },
        status: {
          observedGeneration: 1,
          readyReplicas: 2,
          updatedReplicas: 2,
          currentRevision: "db-1",
          updateRevision: "db-1",
        },
      },
      v("ok", "rolled out (2 pods at revision db-1)"),
    ],
    [
      "a DaemonSet with pods still to update",
      APPS("daemonsets"),
      {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 2 },
      },
      v("wait", "2 out of 3 new pods have been updated"),
    ],
    [
      "a Job complete",
      { group: "batch", plural: "jobs" },
      { status: { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] } },
      v("ok", "complete (1 succeeded)"),
    ],
    [
      "a Pod not Ready",
      CORE("pods"),
      { status: { phase: "Pending" } },
      v("wait", "not Ready (phase Pending)"),
    ],
    [
      "a PersistentVolumeClaim Bound",
      CORE("persistentvolumeclaims"),
      { spec: { volumeName: "pv-1" }, status: { phase: "Bound" } },
      v("ok", "Bound to pv-1"),
    ],
    [
      "a Service of type ExternalName",
      CORE("services"),
      { spec: { type: "ExternalName", externalName: "db.example.com" } },
      v("ok", "ExternalName service for db.example.com"),
    ],
    [
      "a ReplicaSet is any other object: it exists",
      APPS("replicasets"),
      { metadata: { generation: 1 }, status: { observedGeneration: 1, replicas: 1 } },
      v("ok", "exists (no Ready or Available condition)"),
    ],
    [
      "a custom resource with a Ready condition",
      { group: "example.com", plural: "widgets" },
      {
        metadata: { generation: 2 },
        status: {
          observedGeneration: 2,
          conditions: [{ type: "Ready", status: "False", reason: "Pending", message: "no disk" }],
        },
      },
      v("wait", "condition Ready=False: Pending: no disk"),
    ],
  ];
  for (const [name, r, obj, want] of rows) {
    await t.step(name, () => assertEquals(readiness(obj, r), want));
  }
});

Deno.test("statefulSetReady() and daemonSetReady() count ready pods under OnDelete", async (t) => {
  const onDelete = { updateStrategy: { type: "OnDelete" } };
  const rows: [string, () => Verdict, Verdict][] = [
    [
      "StatefulSet, generation not observed",
      () =>
        statefulSetReady({
          metadata: { generation: 2 },
          spec: { replicas: 2, ...onDelete },
          status: { observedGeneration: 1, readyReplicas: 2 },
        }),
      v("wait", "waiting for the spec update to be observed (generation 2, observed 1)"),
    ],
    [
      "StatefulSet, one pod of two ready",
      () =>
        statefulSetReady({
          metadata: { generation: 1 },
          spec: { replicas: 2, ...onDelete },
          status: { observedGeneration: 1, readyReplicas: 1 },
        }),
      v("wait", "1 of 2 pods are ready"),
    ],
    [
      "StatefulSet, every pod ready",
      () =>
        statefulSetReady({
          metadata: { generation: 1 },
          spec: { replicas: 2, ...onDelete },
          status: { observedGeneration: 1, readyReplicas: 2 },
        }),
      v("ok", "2 pods ready"),
    ],
    [
      "DaemonSet, every scheduled pod ready",
      () =>
        daemonSetReady({
          metadata: { generation: 1 },
          spec: onDelete,
          status: { observedGeneration: 1, desiredNumberScheduled: 3, numberReady: 3 },
        }),
      v("ok", "3/3 pods ready"),
    ],
    [
      "DaemonSet, a pod not ready",
      () =>
        daemonSetReady({
          metadata: { generation: 1 },
          spec: onDelete,
          status: { observedGeneration: 1, desiredNumberScheduled: 3, numberReady: 2 },
        }),
      v("wait", "2 of 3 pods are ready"),
    ],
  ];
  for (const [name, judge, want] of rows) await t.step(name, () => assertEquals(judge(), want));
});

Deno.test("claimBound() waits for Bound; Lost is final", () => {
  assertEquals(claimBound({}), v("wait", "not Bound (phase Pending)"));
  assertEquals(claimBound({ status: { phase: "Bound" } }), v("ok", "Bound"));
  assertEquals(
    claimBound({ spec: { volumeName: "pv-9" }, status: { phase: "Lost" } }),
    v("fail", "Lost: its volume pv-9 is gone"),
  );
});

Deno.test("serviceReady() needs a ready endpoint, or a load balancer's address", async (t) => {
  const svc = { spec: { type: "ClusterIP", selector: { app: "web" } } };
  const slice = (...ready: (boolean | undefined)[]) => ({
    endpoints: ready.map((r) => ({
      addresses: ["10.0.0.1"],
      conditions: r === undefined ? {} : { ready: r },
    })),
  });
  const rows: [string, KubeObject, KubeObject[] | undefined, Verdict][] = [
    ["no slices yet", svc, [], v("wait", "no endpoints yet")],
    [
      "only endpoints not ready",
      svc,
      [slice(false, false)],
      v("wait", "no ready endpoints (2 not ready)"),
    ],
    ["a ready endpoint", svc, [slice(false), slice(true)], v("ok", "1 ready endpoint")],
    ["ready unset counts as ready", svc, [slice(undefined, true)], v("ok", "2 ready endpoints")],
    [
      "no selector: endpoints managed by hand",
      { spec: { type: "ClusterIP" } },
      undefined,
      v("ok", "exists (no selector: its endpoints are managed by hand)"),
    ],
    [
      "a LoadBalancer without an address",
      { spec: { type: "LoadBalancer", selector: { app: "web" } }, status: { loadBalancer: {} } },
      undefined,
      v("wait", "no load balancer address yet"),
    ],
    [
      "a LoadBalancer with addresses",
      {
        spec: { type: "LoadBalancer" },
        status: { loadBalancer: { ingress: [{ ip: "203.0.113.7" }, { hostname: "lb.example" }] } },
      },
      undefined,
      v("ok", "load balancer at 203.0.113.7, lb.example"),
    ],
  ];
  for (const [name, obj, slices, want] of rows) {
    await t.step(name, () => assertEquals(serviceReady(obj, slices), want));
  }
});

Deno.test("needsEndpoints() is true for a Service with a selector and endpoints of its own", () => {
  const svc = (spec: unknown) => ({ spec });
  assertEquals(needsEndpoints(svc({ selector: { app: "a" } }), CORE("services")), true);
  assertEquals(
    needsEndpoints(svc({ type: "NodePort", selector: { a: "b" } }), CORE("services")),
    true,
  );
  assertEquals(needsEndpoints(svc({}), CORE("services")), false);
  assertEquals(
    needsEndpoints(svc({ type: "LoadBalancer", selector: { a: "b" } }), CORE("services")),
    false,
  );
  assertEquals(needsEndpoints(svc({ type: "ExternalName" }), CORE("services")), false);
  assertEquals(needsEndpoints(svc({ selector: { a: "b" } }), CORE("pods")), false);
});

Deno.test("genericReady() reads observedGeneration, then Ready, else Available, else existence", async (t) => {
  const rows: [string, KubeObject, Verdict][] = [
    [
      "no status at all",
      { metadata: { generation: 1 } },
      v("ok", "exists (no Ready or Available condition)"),
    ],
    [
      "spec not observed yet",
      { metadata: { generation: 2 }, status: { observedGeneration: 1 } },
      v("wait", "waiting for the spec update to be observed (generation 2, observed 1)"),
    ],
    [
      "Ready=True",
      {
        metadata: { generation: 1 },
        status: { conditions: [{ type: "Ready", status: "True", reason: "Reconciled" }] },
      },
      v("ok", "condition Ready=True (Reconciled)"),
    ],
    [
      "Ready=True of an older generation",
      {
        metadata: { generation: 3 },
        status: { conditions: [{ type: "Ready", status: "True", observedGeneration: 2 }] },
      },
      v("wait", "condition Ready=True is stale (observed generation 2, current 3)"),
    ],
    [
      "Available, when there is no Ready",
      {
        status: {
          conditions: [{
            type: "Available",
            status: "False",
            reason: "MinimumReplicasUnavailable",
          }],
        },
      },
      v("wait", "condition Available=False: MinimumReplicasUnavailable"),
    ],
    [
      "Ready wins over Available",
      {
        status: {
          conditions: [
            { type: "Available", status: "True" },
            { type: "Ready", status: "Unknown" },
          ],
        },
      },
      v("wait", "condition Ready=Unknown"),
    ],
  ];
  for (const [name, obj, want] of rows) {
    await t.step(name, () => assertEquals(genericReady(obj), want));
  }
});
