import { assertEquals } from "../../tests/_assert.ts";
import { describeRequestError } from "../_common/httpx.ts";
import { type ApiResource, collectionPath, fromAggregated, resolveResource } from "./discovery.ts";
import { httpProblem } from "./errors.ts";
import { describeCredentials, kubeconfigFiles } from "./kubeconfig.ts";

/** A slice of a real aggregated discovery answer (kube-apiserver v1.33). */
const CORE = {
  kind: "APIGroupDiscoveryList",
  items: [{
    metadata: {},
    versions: [{
      version: "v1",
      resources: [
        {
          resource: "pods",
          responseKind: { group: "", version: "", kind: "Pod" },
          scope: "Namespaced",
          singularResource: "pod",
          verbs: ["get", "list", "watch"],
          shortNames: ["po"],
          subresources: [{ subresource: "status" }],
        },
        {
          resource: "events",
          responseKind: { kind: "Event" },
          scope: "Namespaced",
          singularResource: "event",
          shortNames: ["ev"],
        },
        {
          resource: "namespaces",
          responseKind: { kind: "Namespace" },
          scope: "Cluster",
          singularResource: "namespace",
          shortNames: ["ns"],
        },
      ],
    }],
  }],
};

const GROUPS = {
  kind: "APIGroupDiscoveryList",
  items: [
    {
      metadata: { name: "apps" },
      versions: [{
        version: "v1",
        resources: [{
          resource: "deployments",
          responseKind: { kind: "Deployment" },
          scope: "Namespaced",
          singularResource: "deployment",
          shortNames: ["deploy"],
        }],
      }],
    },
    {
      metadata: { name: "events.k8s.io" },
      versions: [{
        version: "v1",
        resources: [{
          resource: "events",
          responseKind: { kind: "Event" },
          scope: "Namespaced",
          singularResource: "event",
          shortNames: ["ev"],
        }],
      }],
    },
    {
      metadata: { name: "example.com" },
      versions: [
        {
          version: "v2",
          resources: [{
            resource: "widgets",
            responseKind: { kind: "Widget" },
            scope: "Namespaced",
            singularResource: "widget",
            shortNames: ["wd"],
          }],
        },
        {
          version: "v1",
          resources: [{
            resource: "widgets",
            responseKind: { kind: "Widget" },
            scope: "Namespaced",
            singularResource: "widget",
          }],
        },
      ],
    },
  ],
};

const RESOURCES: ApiResource[] = [...fromAggregated(CORE, true), ...fromAggregated(GROUPS, false)];

Deno.test("fromAggregated() reads resources of aggregated discovery", () => {
  assertEquals(RESOURCES[0], {
    group: "",
    version: "v1",
    plural: "pods",
    singular: "pod",
    kind: "Pod",
    namespaced: true,
    shortNames: ["po"],
    verbs: ["get", "list", "watch"],
  });
  assertEquals(RESOURCES.map((r) => `${r.group}/${r.version}/${r.plural}`), [
    "/v1/pods",
    "/v1/events",
    "/v1/namespaces",
    "apps/v1/deployments",
    "events.k8s.io/v1/events",
    "example.com/v2/widgets",
    "example.com/v1/widgets",
  ]);
});

Deno.test("resolveResource() finds a resource the way kubectl does", async (t) => {
  const rows: [string, string | undefined][] = [
    ["pods", "/v1/pods"],
    ["pod", "/v1/pods"],
    ["po", "/v1/pods"],
    ["Pod", "/v1/pods"],
    ["deploy", "apps/v1/deployments"],
    ["Deployment", "apps/v1/deployments"],
    ["deployments.apps", "apps/v1/deployments"],
    ["deployment.v1.apps", "apps/v1/deployments"],
    ["ev", "/v1/events"],
    ["events.events.k8s.io", "events.k8s.io/v1/events"],
    ["wd", "example.com/v2/widgets"],
    ["widget.v1.example.com", "example.com/v1/widgets"],
    ["widgets.example.com", "example.com/v2/widgets"],
    ["gadgets", undefined],
    ["deployments.batch", undefined],
  ];
  for (const [word, want] of rows) {
    await t.step(word, () => {
      const r = resolveResource(RESOURCES, word);
      assertEquals(r && `${r.group}/${r.version}/${r.plural}`, want);
    });
  }
});

Deno.test("collectionPath() builds core, group, namespaced and cluster paths", () => {
  const [pods, , namespaces, deployments] = RESOURCES;
  assertEquals(collectionPath(pods!, "shop"), "/api/v1/namespaces/shop/pods");
  assertEquals(collectionPath(namespaces!, "shop"), "/api/v1/namespaces");
  assertEquals(
    collectionPath(deployments!, "default"),
    "/apis/apps/v1/namespaces/default/deployments",
  );
});

Deno.test("describeCredentials() says how the user authenticates, never the secret", () => {
  assertEquals(
    describeCredentials({ name: "eks", exec: { command: "aws" }, token: "t0ken" }),
    'exec plugin "aws" of user "eks"',
  );
  assertEquals(describeCredentials({ name: "ci", token: "t0ken" }), 'bearer token of user "ci"');
  assertEquals(
    describeCredentials({ name: "admin", certData: "PEM", impersonateUser: "bob" }),
    'client certificate of user "admin", impersonating "bob"',
  );
  assertEquals(
    describeCredentials({
      name: "sa",
      authProvider: { name: "tokenFile", config: { tokenFile: "/t" } },
    }),
    'token file of user "sa"',
  );
  assertEquals(
    describeCredentials({ name: "u", username: "bob" }),
    'basic auth (user "bob") of user "u"',
  );
  assertEquals(describeCredentials(null), "no credentials");
});

Deno.test("kubeconfigFiles() takes --kubeconfig, else KUBECONFIG, else ~/.kube/config", () => {
  assertEquals(
    kubeconfigFiles({ kubeconfig: "/k", env: { KUBECONFIG: "/a:/b", HOME: "/h" } }),
    { files: ["/k"], from: "--kubeconfig" },
  );
  assertEquals(
    kubeconfigFiles({ env: { KUBECONFIG: "/a::/b", HOME: "/h" } }),
    { files: ["/a", "/b"], from: "KUBECONFIG" },
  );
  assertEquals(kubeconfigFiles({ env: { HOME: "/h" } }), {
    files: ["/h/.kube/config"],
    from: "default",
  });
  assertEquals(kubeconfigFiles({ env: {} }), { files: [], from: "default" });
});

Deno.test("describeRequestError() and httpProblem() give short reasons", () => {
  const fetchErr = new TypeError(
    "error sending request for url (https://127.0.0.1:1/api): client error (Connect): tcp connect error: Connection refused (os error 111)",
  );
  assertEquals(describeRequestError(fetchErr), "connection refused");
  assertEquals(
    describeRequestError(Object.assign(new Error("x"), { code: "ECONNREFUSED" })),
    "connection refused",
  );
  assertEquals(
    httpProblem({ status: 404, text: '{"kind":"Status","message":"pods \\"x\\" not found"}' }),
    '404 Not Found: pods "x" not found',
  );
  assertEquals(httpProblem({ status: 500, text: "" }), "500 Internal Server Error");
});

Deno.test("orch imports client-node when its probe is made, before the run's clock starts", async () => {
  const { probeOf } = await import("../../tests/_kit.ts");
  const { kubeClientLibrary } = await import("./kubeconfig.ts");
  kubeClientLibrary.reset(); // as if never imported: other tests of this file may have
  const probe = await probeOf(["orch", "pod/x", "--kubeconfig", "/nonexistent/kubeconfig"]);
  const loaded = kubeClientLibrary.peek();
  assertEquals(loaded === undefined, false, "client-node is not being imported");
  assertEquals(typeof (await loaded!).KubeConfig, "function");
  await probe.close?.();
});
