import { assertEquals } from "../../tests/_assert.ts";
import { newestWarning, warningSelector } from "./events.ts";
import type { KubeObject } from "./judge.ts";

const DEPLOY = { group: "apps", plural: "deployments" };
const web: KubeObject = {
  metadata: { name: "web", uid: "u-Deployment-web", creationTimestamp: "2026-01-01T10:00:00Z" },
};

function event(
  kind: string,
  name: string,
  reason: string,
  at: string,
  extra: Record<string, unknown> = {},
): KubeObject {
  return {
    type: "Warning",
    involvedObject: { kind, name, uid: `u-${kind}-${name}` },
    reason,
    message: `${reason} of ${name}`,
    lastTimestamp: at,
    ...extra,
  };
}

Deno.test("warningSelector() lists a workload's namespace warnings, else the object's by uid", () => {
  assertEquals(warningSelector(DEPLOY, web), "type=Warning");
  assertEquals(warningSelector({ group: "batch", plural: "jobs" }, web), "type=Warning");
  assertEquals(
    warningSelector({ group: "", plural: "persistentvolumeclaims" }, {
      metadata: { name: "data", uid: "u-1" },
    }),
    "involvedObject.uid=u-1,type=Warning",
  );
});

Deno.test("newestWarning() prefers the object's own newest Warning", () => {
  const events = [
    event("Deployment", "web", "Old", "2026-01-01T10:00:05Z"),
    event("Deployment", "web", "New", "2026-01-01T10:00:09Z"),
    event("Pod", "web-5d8f9c7b6d-x2k4q", "FailedScheduling", "2026-01-01T10:00:10Z"),
    { ...event("Deployment", "web", "Normalish", "2026-01-01T10:00:11Z"), type: "Normal" },
  ];
  assertEquals(newestWarning(events, web, DEPLOY), {
    text: "Warning New: New of web",
    message: "New of web",
  });
});

Deno.test("newestWarning() falls back to the pods and ReplicaSets a Deployment made", async (t) => {
  const at = "2026-01-01T10:00:03Z";
  const rows: [string, KubeObject[], string | undefined][] = [
    [
      "a pod's FailedScheduling (events.k8s.io: eventTime, message in note)",
      [{
        type: "Warning",
        involvedObject: { kind: "Pod", name: "web-5d8f9c7b6d-x2k4q" },
        reason: "FailedScheduling",
        note: "0/1 nodes are available:\n 1 node(s) didn't match Pod's node affinity/selector.",
        eventTime: "2026-01-01T10:00:02.123456Z",
      }],
      "Warning FailedScheduling: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
    ],
    [
      "the newest of a ReplicaSet's and a pod's",
      [
        event("ReplicaSet", "web-5d8f9c7b6d", "FailedCreate", "2026-01-01T10:00:04Z"),
        event("Pod", "web-5d8f9c7b6d-x2k4q", "FailedScheduling", at),
      ],
      "Warning FailedCreate: FailedCreate of web-5d8f9c7b6d",
    ],
    [
      "another deployment's pods do not count",
      [
        event("Pod", "webapp-5d8f9c7b6d-x2k4q", "FailedScheduling", at),
        event("Pod", "web-api-5d8f9c7b6d-x2k4q", "FailedScheduling", at),
        event("Pod", "web", "FailedScheduling", at),
      ],
      undefined,
    ],
    [
      "events older than the object (a former web) do not count",
      [event("Pod", "web-5d8f9c7b6d-x2k4q", "FailedScheduling", "2026-01-01T09:00:00Z")],
      undefined,
    ],
  ];
  for (const [name, events, want] of rows) {
    await t.step(name, () => assertEquals(newestWarning(events, web, DEPLOY)?.text, want));
  }
});

Deno.test("newestWarning() matches the pod names of each workload kind", async (t) => {
  const rows: [string, string, string, boolean][] = [
    ["statefulsets", "apps", "db-0", true],
    ["statefulsets", "apps", "db-x2k4q", false],
    ["daemonsets", "apps", "db-x2k4q", true],
    ["replicasets", "apps", "db-x2k4q", true],
    ["jobs", "batch", "db-x2k4q", true],
    ["jobs", "batch", "db-3-x2k4q", true],
    ["persistentvolumeclaims", "", "db-0", false],
  ];
  const db = { metadata: { name: "db", uid: "u-db" } };
  for (const [plural, group, pod, counts] of rows) {
    await t.step(`${plural}: ${pod}`, () => {
      const found = newestWarning(
        [event("Pod", pod, "BackOff", "2026-01-01T10:00:00Z")],
        db,
        { group, plural },
      );
      assertEquals(found !== undefined, counts);
    });
  }
});
