import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, usageError } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { realClock } from "../../engine/clock.ts";
import type { ApiResource } from "./discovery.ts";
import { KubeError } from "./errors.ts";
import {
  capturesOf,
  daemonSetRollout,
  deploymentRollout,
  jobComplete,
  judgeCondition,
  judgeObject,
  judgeSelected,
  type KubeObject,
  podReady,
  statefulSetRollout,
  type Verdict,
} from "./judge.ts";
import { parseJsonPathExpr } from "../_common/jsonpath.ts";
import { checkSelector, type OrchOptions, supports } from "./mod.ts";
import { AUTH_GRACE_MS, type KubeApi, OrchProbe } from "./probe.ts";
import { DEADLINE_EXCEEDED, DEADLINE_VERDICT, PODS } from "./_fake_kube.ts";

const v = (state: Verdict["state"], text: string): Verdict => ({ state, text });

function obj(generation: number, spec: unknown, status: unknown): KubeObject {
  return { metadata: { name: "x", generation }, spec, status };
}

Deno.test("deploymentRollout() follows kubectl rollout status", async (t) => {
  const spec = { replicas: 3 };
  const rows: [string, KubeObject, Verdict][] = [
    [
      "spec update not observed",
      obj(2, spec, {
        observedGeneration: 1,
        updatedReplicas: 3,
        replicas: 3,
        availableReplicas: 3,
      }),
      v("wait", "waiting for the spec update to be observed (generation 2, observed 1)"),
    ],
    [
      "new replicas not updated",
      obj(1, spec, {
        observedGeneration: 1,
        updatedReplicas: 1,
        replicas: 3,
        availableReplicas: 3,
      }),
      v("wait", "1 out of 3 new replicas have been updated"),
    ],
    [
      "old replicas pending termination",
      obj(1, spec, {
        observedGeneration: 1,
        updatedReplicas: 3,
        replicas: 4,
        availableReplicas: 3,
      }),
      v("wait", "1 old replicas are pending termination"),
    ],
    [
      "updated replicas not available",
      obj(1, spec, {
        observedGeneration: 1,
        updatedReplicas: 3,
        replicas: 3,
        availableReplicas: 2,
      }),
      v("wait", "2 of 3 updated replicas are available"),
    ],
    [
      "rolled out",
      obj(1, spec, {
        observedGeneration: 1,
        updatedReplicas: 3,
        replicas: 3,
        availableReplicas: 3,
      }),
      v("ok", "rolled out (3/3 replicas updated and available)"),
    ],
    [
      "progress deadline exceeded is final",
      obj(1, spec, DEADLINE_EXCEEDED),
      DEADLINE_VERDICT,
    ],
    [
      "zero replicas roll out at once",
      obj(1, { replicas: 0 }, { observedGeneration: 1 }),
      v("ok", "rolled out (0/0 replicas updated and available)"),
    ],
  ];
  for (const [name, o, want] of rows) {
    await t.step(name, () => assertEquals(deploymentRollout(o), want));
  }
});

Deno.test("statefulSetRollout() and daemonSetRollout() follow kubectl rollout status", async (t) => {
  const sts = (status: unknown, strategy: unknown = { type: "RollingUpdate" }) =>
    obj(2, { replicas: 2, updateStrategy: strategy }, status);
  const rows: [string, Verdict, Verdict][] = [
    [
      "sts not observed",
      statefulSetRollout(sts({ observedGeneration: 1 })),
      v("wait", "waiting for the spec update to be observed (generation 2, observed 1)"),
    ],
    [
      "sts pods not ready",
      statefulSetRollout(sts({ observedGeneration: 2, readyReplicas: 1 })),
      v("wait", "1 of 2 pods are ready"),
    ],
    [
      "sts revision differs",
      statefulSetRollout(sts({
        observedGeneration: 2,
        readyReplicas: 2,
        updatedReplicas: 1,
        currentRevision: "web-1",
        updateRevision: "web-2",
      })),
      v("wait", "1 of 2 pods are at revision web-2"),
    ],
    [
      "sts rolled out",
      statefulSetRollout(sts({
        observedGeneration: 2,
        readyReplicas: 2,
        updatedReplicas: 2,
        currentRevision: "web-2",
        updateRevision: "web-2",
      })),
      v("ok", "rolled out (2 pods at revision web-2)"),
    ],
    [
      "sts partitioned",
      statefulSetRollout(sts(
        { observedGeneration: 2, readyReplicas: 2, updatedReplicas: 1 },
        { type: "RollingUpdate", rollingUpdate: { partition: 1 } },
      )),
      v("ok", "partitioned roll out complete (1 new pods updated)"),
    ],
    [
      "sts OnDelete cannot be followed",
      statefulSetRollout(sts({ observedGeneration: 2 }, { type: "OnDelete" })),
      v("fail", "rollout status needs the RollingUpdate strategy, not OnDelete"),
    ],
    [
      "ds pods not updated",
      daemonSetRollout(obj(1, {}, {
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 2,
      })),
      v("wait", "2 out of 3 new pods have been updated"),
    ],
    [
      "ds pods not available",
      daemonSetRollout(obj(1, {}, {
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 1,
      })),
      v("wait", "1 of 3 updated pods are available"),
    ],
    [
      "ds rolled out",
      daemonSetRollout(obj(1, {}, {
        observedGeneration: 1,
        desiredNumberScheduled: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 3,
      })),
      v("ok", "rolled out (3/3 pods updated and available)"),
    ],
  ];
  for (const [name, got, want] of rows) await t.step(name, () => assertEquals(got, want));
});

Deno.test("podReady() waits for Ready and gives up on finished pods", async (t) => {
  const pod = (status: unknown): KubeObject => ({ metadata: { name: "p" }, status });
  const rows: [string, KubeObject, Verdict][] = [
    [
      "pending with a waiting container",
      pod({
        phase: "Pending",
        containerStatuses: [{ name: "web", state: { waiting: { reason: "ContainerCreating" } } }],
      }),
      v("wait", "not Ready (phase Pending; container web: ContainerCreating)"),
    ],
    [
      "running, not ready",
      pod({ phase: "Running", conditions: [{ type: "Ready", status: "False" }] }),
      v("wait", "not Ready (phase Running)"),
    ],
    [
      "ready",
      pod({ phase: "Running", conditions: [{ type: "Ready", status: "True" }] }),
      v("ok", "Ready (phase Running)"),
    ],
    [
      "failed is fatal",
      pod({ phase: "Failed", reason: "Evicted", message: "low on memory" }),
      v("fail", "failed (phase Failed: Evicted: low on memory)"),
    ],
    [
      "succeeded never becomes ready",
      pod({ phase: "Succeeded" }),
      v("fail", "completed (phase Succeeded) and will never be Ready"),
    ],
  ];
  for (const [name, o, want] of rows) await t.step(name, () => assertEquals(podReady(o), want));
});

Deno.test("jobComplete() waits for Complete; Failed is final", async (t) => {
  const job = (spec: unknown, status: unknown): KubeObject => ({
    metadata: { name: "j" },
    spec,
    status,
  });
  const rows: [string, KubeObject, Verdict][] = [
    [
      "running",
      job({}, { active: 1 }),
      v("wait", "not complete (active 1, succeeded 0, failed 0)"),
    ],
    [
      "suspended",
      job({ suspend: true }, {}),
      v("wait", "suspended (active 0, succeeded 0, failed 0)"),
    ],
    [
      "complete",
      job({}, { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] }),
      v("ok", "complete (1 succeeded)"),
    ],
    [
      "failed",
      job({}, {
        failed: 3,
        conditions: [{
          type: "Failed",
          status: "True",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
        }],
      }),
      v("fail", "failed: BackoffLimitExceeded: Job has reached the specified backoff limit"),
    ],
  ];
  for (const [name, o, want] of rows) await t.step(name, () => assertEquals(jobComplete(o), want));
});

Deno.test("judgeCondition() matches type and status like kubectl wait, generation included", async (t) => {
  const o = (generation: number, conditions: unknown[], observed?: number): KubeObject => ({
    metadata: { name: "x", generation },
    status: { conditions, ...(observed === undefined ? {} : { observedGeneration: observed }) },
  });
  const avail = { type: "Available", status: "True", reason: "MinimumReplicasAvailable" };
  const rows: [string, Verdict, Verdict][] = [
    [
      "absent",
      judgeCondition(o(1, []), "Available", "True"),
      v("wait", "no condition Available yet"),
    ],
    [
      "holds, case-insensitive",
      judgeCondition(o(1, [avail]), "available", "true"),
      v("ok", "condition Available=True (MinimumReplicasAvailable)"),
    ],
    [
      "other status",
      judgeCondition(o(1, [avail]), "Available", "False"),
      v("wait", "condition Available=True: MinimumReplicasAvailable; want Available=False"),
    ],
    [
      "stale by status.observedGeneration",
      judgeCondition(o(2, [avail], 1), "Available", "True"),
      v("wait", "condition Available=True is stale (observed generation 1, current 2)"),
    ],
    [
      "stale by the condition's own observedGeneration",
      judgeCondition(o(3, [{ ...avail, observedGeneration: 2 }], 3), "Available", "True"),
      v("wait", "condition Available=True is stale (observed generation 2, current 3)"),
    ],
  ];
  for (const [name, got, want] of rows) await t.step(name, () => assertEquals(got, want));
});

Deno.test("judgeObject() picks the rule by wait type and resource", async () => {
  const pods = { group: "", plural: "pods" };
  const nodes = { group: "", plural: "nodes" };
  const ready = { status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } };
  assertEquals(await judgeObject(ready, pods, { type: "ready" }), v("ok", "Ready (phase Running)"));
  assertEquals(await judgeObject(ready, nodes, { type: "ready" }), v("ok", "condition Ready=True"));
  assertEquals(
    await judgeObject({ status: { phase: "Active" } }, nodes, { type: "exists" }),
    v("ok", "exists (phase Active)"),
  );
  assertEquals(
    await judgeObject({ metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } }, nodes, {
      type: "exists",
    }),
    v("ok", "exists (terminating)"),
  );
});

Deno.test("judgeSelected() needs one object, or every one with --all", async (t) => {
  const ok = (label: string) => ({ label, verdict: v("ok", "Ready (phase Running)") });
  const no = (label: string) => ({ label, verdict: v("wait", "not Ready (phase Pending)") });
  const bad = (label: string) => ({ label, verdict: v("fail", "failed (phase Failed)") });
  const what = "pods matching app=web in namespace default";
  const rows: [string, ReturnType<typeof judgeSelected>, unknown][] = [
    [
      "nothing selected is pending",
      judgeSelected([], true, what, "Ready"),
      { status: "pending", error: `no ${what}` },
    ],
    [
      "--all: every one holds",
      judgeSelected([ok("pod/a"), ok("pod/b")], true, what, "Ready"),
      { status: "satisfied", detail: `2/2 ${what}: Ready` },
    ],
    [
      "--all: one not yet",
      judgeSelected([ok("pod/a"), no("pod/b"), no("pod/c")], true, what, "Ready"),
      {
        status: "pending",
        error: `1/3 ${what}: Ready; pod/b: not Ready (phase Pending) (and 1 more)`,
      },
    ],
    [
      "--all: one failed is fatal",
      judgeSelected([ok("pod/a"), bad("pod/b")], true, what, "Ready"),
      { status: "fatal", error: "pod/b: failed (phase Failed)" },
    ],
    [
      "any: one holds",
      judgeSelected([no("pod/a"), ok("pod/b")], false, what, "Ready"),
      { status: "satisfied", detail: `1/2 ${what}: Ready; pod/b: Ready (phase Running)` },
    ],
    [
      "any: a failed one among pending ones is not fatal",
      judgeSelected([bad("pod/a"), no("pod/b")], false, what, "Ready"),
      { status: "pending", error: `0/2 ${what}: Ready; pod/a: failed (phase Failed) (and 1 more)` },
    ],
    [
      "any: all failed is fatal",
      judgeSelected([bad("pod/a"), bad("pod/b")], false, what, "Ready"),
      { status: "fatal", error: "pod/a: failed (phase Failed)" },
    ],
  ];
  for (const [name, got, want] of rows) await t.step(name, () => assertEquals(got, want));
});

Deno.test("checkSelector() accepts kubectl's selector syntax", async (t) => {
  for (
    const ok of [
      "app=web",
      "app==web,tier!=db",
      "env in (a, b),!legacy",
      "app",
      "app.kubernetes.io/name=web",
      "x=",
    ]
  ) {
    await t.step(ok, () => assertEquals(checkSelector(ok), undefined));
  }
  assertEquals(checkSelector(""), "expected a label selector like app=web, got an empty string");
  assertEquals(checkSelector("a=(b"), 'unbalanced "(" in "a=(b"');
  assertEquals(
    checkSelector("app=web app"),
    'expected requirements like app=web, tier!=db, env in (a,b) or !key, got "app=web app"',
  );
});

Deno.test("supports() limits rollout and complete to their resources", () => {
  assertEquals(supports({ type: "rollout" }, { group: "apps", plural: "statefulsets" }), undefined);
  assertEquals(
    supports({ type: "rollout" }, { group: "", plural: "pods" }),
    "--for rollout works with deployments, statefulsets and daemonsets, not pods",
  );
  assertEquals(supports({ type: "complete" }, { group: "batch", plural: "jobs" }), undefined);
  assertEquals(
    supports({ type: "complete" }, { group: "batch", plural: "cronjobs" }),
    "--for complete works with jobs, not cronjobs",
  );
  assertEquals(supports({ type: "ready" }, { group: "x.io", plural: "widgets" }), undefined);
});

Deno.test("orch parse() reads targets, selectors and wait types", async (t) => {
  await t.step("KIND/NAME defaults to exists", () => {
    assertEquals(optionsOf<OrchOptions>(["k8s", "deploy/web"]), {
      resource: "deploy",
      selection: { by: "name", name: "web" },
      want: { type: "exists" },
      namespace: undefined,
    });
  });
  await t.step("KIND with --selector and --all", () => {
    const s = optionsOf<OrchOptions>([
      ...["kubernetes", "pods", "--selector", " app=web ", "--all", "--for", "ready"],
      ...["--namespace", "shop"],
    ]);
    assertEquals(s.selection, { by: "selector", selector: "app=web", all: true });
    assertEquals([s.want.type, s.namespace], ["ready", "shop"]);
  });
  await t.step("--condition defaults its status to True", () => {
    assertEquals(optionsOf<OrchOptions>(["orch", "deploy/web", "--condition", "Available"]).want, {
      type: "condition",
      condition: "Available",
      status: "True",
    });
    assertEquals(optionsOf<OrchOptions>(["orch", "pod/p", "--condition", "Ready=False"]).want, {
      type: "condition",
      condition: "Ready",
      status: "False",
    });
  });
  await t.step("--jsonpath keeps its source", () => {
    const w =
      optionsOf<OrchOptions>(["k8s", "deploy/web", "--jsonpath", ".status.readyReplicas >= 2"])
        .want;
    assert(w.type === "jsonpath");
    assertEquals(w.expr.source, ".status.readyReplicas >= 2");
  });
  await t.step("--for create is kubectl's name for exists", () => {
    assertEquals(optionsOf<OrchOptions>(["k8s", "cm/lock", "--for", "create"]).want, {
      type: "exists",
    });
  });
  await t.step("-f and --file take manifests instead of a target", () => {
    const c = conditionOf(["k8s", "-f", "deploy/", "--namespace", "shop"]);
    assertEquals([c.name, c.target], ["k8s -f deploy/", "-f deploy/"]);
    assertEquals(c.options, {
      resource: "",
      selection: { by: "selector", selector: undefined, all: true },
      want: { type: "readiness" },
      namespace: "shop",
      file: "deploy/",
    });
    for (const [word, type] of [["create", "exists"], ["exists", "exists"], ["delete", "delete"]]) {
      const o = optionsOf<OrchOptions>(["orch", "--file", "-", "--for", word!]);
      assertEquals([o.file, o.want.type], ["-", type]);
    }
  });
  await t.step("unknown words (CRDs) are left to discovery", () => {
    assertEquals(
      optionsOf<OrchOptions>(["k8s", "widgets.example.com/w1", "--for", "rollout"]).resource,
      "widgets.example.com",
    );
  });
});

Deno.test("orch parse() rejects malformed targets and combinations", async (t) => {
  await stepUsageErrors(t, "orch");
  await t.step("--for values come from the enum", async () => {
    assert(
      (await usageError(["k8s", "pod/p", "--for", "readdy"])).startsWith(
        "waitcmd: condition 1 (k8s): --for: ",
      ),
    );
  });
  await t.step("a --jsonpath syntax error is a usage error", async () => {
    assert(
      (await usageError(["k8s", "pod/p", "--jsonpath", ".a >"])).startsWith(
        "waitcmd: condition 1 (k8s): --jsonpath: ",
      ),
    );
  });
});

Deno.test("OrchProbe.watch() lists, watches from the list's version and lists again after 410 or an end", async () => {
  const spec = optionsOf<OrchOptions>(["k8s", "pod/web", "--namespace", "shop"]);
  const calls: string[] = [];
  let lists = 0;
  let watches = 0;
  const fake: KubeApi = {
    connection: () =>
      Promise.resolve({ server: "https://k", namespace: "default", credentials: "test" }),
    discover: () => Promise.resolve({ resources: [PODS], fetchedAt: Date.now() }),
    get: () => Promise.reject(new Error("not used")),
    getJson(path: string) {
      calls.push(`list ${path}`);
      return Promise.resolve({ metadata: { resourceVersion: String(++lists) } });
    },
    async *watch(path: string, query: Record<string, string>) {
      calls.push(`watch ${path} rv=${query.resourceVersion} ${query.fieldSelector}`);
      const n = ++watches;
      if (n === 1) {
        yield { type: "MODIFIED", object: {} };
        yield { type: "BOOKMARK", object: { metadata: { resourceVersion: "9" } } };
        throw new KubeError("http", "too old resource version", 410);
      }
      if (n === 2) {
        yield { type: "ADDED", object: {} };
        return;
      }
      throw new KubeError("auth", "credentials refused", 401);
    },
  } as unknown as KubeApi;
  const probe = new OrchProbe(spec, fake, realClock);
  const ctl = new AbortController();
  let wakes = 0;
  for await (const _ of probe.watch({ signal: ctl.signal, notice() {} })) wakes++;
  assertEquals(calls, [
    "list /api/v1/namespaces/shop/pods?fieldSelector=metadata.name%3Dweb&limit=1",
    "watch /api/v1/namespaces/shop/pods rv=1 metadata.name=web",
    "list /api/v1/namespaces/shop/pods?fieldSelector=metadata.name%3Dweb&limit=1",
    "watch /api/v1/namespaces/shop/pods rv=2 metadata.name=web",
    "list /api/v1/namespaces/shop/pods?fieldSelector=metadata.name%3Dweb&limit=1",
    "watch /api/v1/namespaces/shop/pods rv=3 metadata.name=web",
  ]);
  // One wake after each list, one per change; none for the bookmark; refused credentials end it.
  assertEquals(wakes, 5);
});

Deno.test("OrchProbe.check(): refused credentials are fatal, except just after the server was unreachable", async () => {
  const spec = optionsOf<OrchOptions>(["k8s", "pod/web"]);
  let now = 0;
  const clock = { now: () => now, sleep: () => Promise.resolve() };
  const answers: KubeError[] = [];
  const fake = {
    connection: () => {
      const e = answers.shift();
      return e ? Promise.reject(e) : Promise.reject(new Error("no answer scripted"));
    },
  } as unknown as KubeApi;
  const refused = () => new KubeError("auth", "access forbidden (403 Forbidden): RBAC", 403);
  const check = () => new OrchProbe(spec, fake, clock);
  const signal = new AbortController().signal;

  // First contact: a 403 is fatal.
  answers.push(refused());
  assertEquals((await check().check(signal)).status, "fatal");

  // Unreachable, then a 403 within the grace: pending (a restarted server loading its RBAC data).
  const probe = check();
  answers.push(new KubeError("network", "https://k: connection refused"), refused());
  assertEquals((await probe.check(signal)).status, "pending");
  now = AUTH_GRACE_MS - 1;
  const r = await probe.check(signal);
  assertEquals(r, {
    status: "pending",
    error: "access forbidden (403 Forbidden): RBAC (the server was just unreachable)",
  });
  // Still refused after the grace: fatal.
  now = AUTH_GRACE_MS + 1;
  answers.push(refused());
  assertEquals(await probe.check(signal), {
    status: "fatal",
    error: "access forbidden (403 Forbidden): RBAC",
  });
});

/** A resource type as discovery gives it. */
function resource(group: string, plural: string, kind: string, namespaced = true): ApiResource {
  return {
    group,
    version: "v1",
    plural,
    singular: kind.toLowerCase(),
    kind,
    namespaced,
    shortNames: [],
    verbs: ["get", "list", "watch"],
  };
}

/** A KubeApi that answers GETs from `routes` (by path, query included) and records them. */
function fakeApi(
  resources: ApiResource[],
  routes: Record<string, unknown | (() => unknown)>,
): KubeApi & { paths: string[] } {
  const paths: string[] = [];
  return {
    paths,
    connection: () =>
      Promise.resolve({ server: "https://k", namespace: "default", credentials: "test" }),
    discover: () => Promise.resolve({ resources, fetchedAt: Date.now() }),
    get(path: string) {
      paths.push(path);
      const route = routes[path];
      if (route === undefined) return Promise.resolve({ status: 404, json: {}, text: "" });
      const json = typeof route === "function" ? route() : route;
      if (json instanceof Error) return Promise.reject(json);
      return Promise.resolve({ status: 200, json, text: JSON.stringify(json) });
    },
  } as unknown as KubeApi & { paths: string[] };
}

/** The options of one object of `k8s -f` (what manifest.ts makes). */
function leaf(apiVersion: string, kind: string, name: string, namespace = "shop"): OrchOptions {
  return {
    resource: kind,
    apiVersion,
    selection: { by: "name", name },
    want: { type: "readiness" },
    namespace,
  };
}

Deno.test("OrchProbe.check() on a manifest's object: its kind's readiness and newest Warning event", async (t) => {
  const signal = new AbortController().signal;
  const deployments = resource("apps", "deployments", "Deployment");
  const services = resource("", "services", "Service");
  const claims = resource("", "persistentvolumeclaims", "PersistentVolumeClaim");
  const types = [deployments, services, claims];
  const stuck = {
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "u1",
      generation: 1,
      creationTimestamp: "2026-01-01T10:00:00Z",
    },
    spec: { replicas: 1 },
    status: {
      observedGeneration: 1,
      conditions: [{
        type: "Progressing",
        status: "False",
        reason: "ProgressDeadlineExceeded",
        message: 'ReplicaSet "web-5d8f9c7b6d" has timed out progressing.',
      }],
    },
  };
  const scheduling = {
    type: "Warning",
    reason: "FailedScheduling",
    involvedObject: { kind: "Pod", name: "web-5d8f9c7b6d-x2k4q" },
    message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
    eventTime: "2026-01-01T10:00:01.000000Z",
  };
  const events = "/api/v1/namespaces/shop/events?fieldSelector=type%3DWarning";

  await t.step(
    "a Deployment past its progress deadline is fatal, its pods' warning said",
    async () => {
      const api = fakeApi(types, {
        "/apis/apps/v1/namespaces/shop/deployments/web": stuck,
        [events]: { items: [scheduling] },
      });
      const r = await new OrchProbe(leaf("apps/v1", "Deployment", "web"), api, realClock).check(
        signal,
      );
      assertEquals(r, {
        status: "fatal",
        error:
          `deployment/web rollout exceeded its progress deadline: ProgressDeadlineExceeded: ReplicaSet "web-5d8f9c7b6d" has timed out progressing.; Warning FailedScheduling: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.`,
      });
      assertEquals(api.paths.length, 2, "one get, one event list");
    },
  );

  await t.step("events that cannot be read leave the verdict as it is", async () => {
    const api = fakeApi(types, {
      "/apis/apps/v1/namespaces/shop/deployments/web": stuck,
      [events]: () => new KubeError("auth", "access forbidden (403 Forbidden)", 403),
    });
    const r = await new OrchProbe(leaf("apps/v1", "Deployment", "web"), api, realClock).check(
      signal,
    );
    assertEquals(r.status, "fatal");
    assert(r.status === "fatal" && !r.error.includes("Warning"), JSON.stringify(r));
  });

  await t.step("a Service waits for a ready endpoint in its EndpointSlices", async () => {
    const slices = "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=" +
      "kubernetes.io%2Fservice-name%3Dweb";
    let ready = false;
    const api = fakeApi(types, {
      "/api/v1/namespaces/shop/services/web": {
        metadata: { name: "web", namespace: "shop", uid: "s1" },
        spec: { selector: { app: "web" } },
      },
      [slices]: () => ({ items: [{ endpoints: [{ conditions: { ready } }] }] }),
      "/api/v1/namespaces/shop/events?fieldSelector=involvedObject.uid%3Ds1%2Ctype%3DWarning": {
        items: [],
      },
    });
    const probe = new OrchProbe(leaf("v1", "Service", "web"), api, realClock);
    assertEquals(await probe.check(signal), {
      status: "pending",
      error: "service/web no ready endpoints (1 not ready)",
    });
    ready = true;
    assertEquals(await probe.check(signal), {
      status: "satisfied",
      detail: "service/web 1 ready endpoint",
    });
  });

  await t.step("a kind the server does not serve (yet) is pending, not fatal", async () => {
    const api = fakeApi(types, {});
    const r = await new OrchProbe(leaf("example.com/v1", "Widget", "w1"), api, realClock).check(
      signal,
    );
    assertEquals(r, {
      status: "pending",
      error: "the server does not serve Widget of example.com/v1 (yet; see kubectl api-resources)",
    });
  });

  await t.step("a missing object is pending, --for delete of a leaf holds", async () => {
    const api = fakeApi(types, {});
    const missing = leaf("v1", "PersistentVolumeClaim", "data");
    assertEquals(await new OrchProbe(missing, api, realClock).check(signal), {
      status: "pending",
      error: "persistentvolumeclaim/data not found in namespace shop",
    });
    assertEquals(
      await new OrchProbe({ ...missing, want: { type: "delete" } }, api, realClock).check(signal),
      {
        status: "satisfied",
        detail: "persistentvolumeclaim/data does not exist in namespace shop",
      },
    );
  });
});

Deno.test("OrchProbe.check() reads a selector's objects page by page", async () => {
  const pods = resource("", "pods", "Pod");
  const pod = (name: string, ready: boolean) => ({
    metadata: { name },
    status: { phase: "Running", conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
  });
  const base = "/api/v1/namespaces/default/pods?limit=250&labelSelector=app%3Dweb";
  const api = fakeApi([pods], {
    [base]: { metadata: { continue: "p2" }, items: [pod("a", true), pod("b", true)] },
    [`${base}&continue=p2`]: { metadata: { continue: "" }, items: [pod("c", false)] },
  });
  const o = optionsOf<OrchOptions>([
    ...["k8s", "pods", "--selector", "app=web", "--all", "--for", "ready"],
  ]);
  const r = await new OrchProbe(o, api, realClock).check(new AbortController().signal);
  assertEquals(r, {
    status: "pending",
    error:
      "2/3 pods matching app=web in namespace default: Ready; pod/c: not Ready (phase Running)",
  });
  assertEquals(api.paths, [base, `${base}&continue=p2`]);
});

Deno.test("OrchProbe.watch() of a manifest's Service watches its EndpointSlices too", async () => {
  const calls: string[] = [];
  const fake = {
    connection: () =>
      Promise.resolve({ server: "https://k", namespace: "default", credentials: "test" }),
    discover: () =>
      Promise.resolve({
        resources: [resource("", "services", "Service")],
        fetchedAt: Date.now(),
      }),
    getJson(path: string) {
      calls.push(`list ${path}`);
      return Promise.resolve({ metadata: { resourceVersion: "1" } });
    },
    async *watch(path: string, query: Record<string, string>) {
      calls.push(`watch ${path} ${query.fieldSelector ?? query.labelSelector}`);
      yield { type: "MODIFIED", object: {} };
      throw new KubeError("auth", "credentials refused", 401);
    },
  } as unknown as KubeApi;
  const probe = new OrchProbe(leaf("v1", "Service", "web"), fake, realClock);
  let wakes = 0;
  for await (const _ of probe.watch({ signal: new AbortController().signal, notice() {} })) {
    wakes++;
  }
  assertEquals(calls.sort(), [
    "list /api/v1/namespaces/shop/services?fieldSelector=metadata.name%3Dweb&limit=1",
    "list /apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb&limit=1",
    "watch /api/v1/namespaces/shop/services metadata.name=web",
    "watch /apis/discovery.k8s.io/v1/namespaces/shop/endpointslices kubernetes.io/service-name=web",
  ]);
  // Each collection: one wake after its list, one for its change; refused credentials end both.
  assertEquals(wakes, 4);
});

Deno.test("judgeObject() --jsonpath keeps the value it compared, captured as value", async () => {
  const want = { type: "jsonpath" as const, expr: parseJsonPathExpr(".status.readyReplicas >= 2") };
  const obj = { status: { readyReplicas: 3 } };
  const v = await judgeObject(obj, { group: "apps", plural: "deployments" }, want);
  assertEquals(v.state, "ok");
  assertEquals(capturesOf(v), { captures: { value: "3" } });
  const selected = judgeSelected([{ label: "pod/a", verdict: v }], false, "pods", "x");
  assertEquals(selected.status === "satisfied" && selected.captures, { value: "3" });
  assertEquals(capturesOf({ state: "ok", text: "ready" }), {});
});
