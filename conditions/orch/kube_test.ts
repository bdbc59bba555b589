import { assertEquals, assertRejects } from "../../tests/_assert.ts";
import { describeRequestError, type HttpReply } from "../_common/httpx.ts";
import {
  type ApiResource,
  collectionPath,
  fromAggregated,
  resolveKind,
  resolveResource,
} from "./discovery.ts";
import { httpProblem, KubeError } from "./errors.ts";
import { readAll, readLines } from "./kube.ts";
import { describeCredentials, requestSecrets, userSecrets } from "./credentials.ts";
import { kubeconfigFiles } from "./kubeconfig.ts";
import { PODS } from "./_fake_kube.ts";

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
  assertEquals(RESOURCES[0], PODS);
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

/** An answer whose body is `chunks` (then ends), or endless copies of the first. */
function reply(chunks: string[], endless = false): HttpReply & { closed: boolean } {
  const enc = new TextEncoder();
  let i = 0;
  const r = {
    status: 200,
    statusText: "OK",
    closed: false,
    header: () => undefined,
    body: new ReadableStream<Uint8Array>({
      pull(c) {
        if (endless) return c.enqueue(enc.encode(chunks[0]!));
        if (i < chunks.length) c.enqueue(enc.encode(chunks[i++]!));
        else c.close();
      },
    }),
    close() {
      r.closed = true;
    },
  };
  return r;
}

Deno.test("readAll() reads an answer whole, up to its cap; over it is an error, read no further", async () => {
  const signal = new AbortController().signal;
  // A multi-byte character split across chunks is decoded whole.
  assertEquals(await readAll(reply(['{"a":"\u00e9', '\u00e9"}']), signal), '{"a":"éé"}');
  const endless = reply(["x".repeat(1000)], true);
  const e = await assertRejects(() => readAll(endless, signal, 10_000), KubeError);
  assertEquals([e.kind, e.message], [
    "http",
    "an answer larger than 10000 bytes (the most waitcmd reads)",
  ]);
  assertEquals(endless.closed, true);
});

Deno.test("readLines() splits a watch stream into lines; a line over the cap is an error", async () => {
  const signal = new AbortController().signal;
  const lines: string[] = [];
  for await (const l of readLines(reply(['{"a":', '1}\n\n{"b"', ':2}\n{"c":3}']), signal)) {
    lines.push(l);
  }
  assertEquals(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
  const endless = reply(["y".repeat(4096)], true);
  const e = await assertRejects(async () => {
    for await (const _ of readLines(endless, signal, 100_000)) { /* none */ }
  }, KubeError);
  assertEquals(
    e.message,
    "an event larger than 100000 bytes (the most waitcmd reads)",
  );
  assertEquals(endless.closed, true);
});

Deno.test("userSecrets() and requestSecrets() find every credential to redact", () => {
  const key = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n";
  assertEquals(
    userSecrets({
      name: "u",
      token: "tok-123 ",
      password: "pw-456",
      keyData: btoa(key),
      authProvider: {
        name: "oidc",
        config: {
          "id-token": "idt-789",
          "refresh-token": "rft-012",
          "client-secret": "cls-345",
          "client-id": "public-id",
          tokenFile: "/path/token",
        },
      },
    }),
    ["tok-123 ", "tok-123", "pw-456", btoa(key), key, key.trim(), "idt-789", "rft-012", "cls-345"],
  );
  assertEquals(userSecrets(null), []);
  const creds = (headers: Record<string, string>, k?: string) => ({
    headers,
    ca: undefined,
    cert: undefined,
    key: k,
    insecure: false,
    servername: undefined,
    proxy: undefined,
  });
  assertEquals(requestSecrets(creds({ Authorization: "Bearer exec-token-1", accept: "x" })), [
    "Bearer exec-token-1",
    "exec-token-1",
  ]);
  assertEquals(requestSecrets(creds({ authorization: `Basic ${btoa("admin:hunter2")}` }, key)), [
    `Basic ${btoa("admin:hunter2")}`,
    btoa("admin:hunter2"),
    "admin:hunter2",
    "hunter2",
    key,
    key.trim(),
  ]);
});

Deno.test("resolveKind() finds a manifest's type by group and kind", () => {
  const apps: ApiResource = {
    group: "apps",
    version: "v1",
    plural: "deployments",
    singular: "deployment",
    kind: "Deployment",
    namespaced: true,
    shortNames: ["deploy"],
    verbs: [],
  };
  const list = [...fromAggregated(CORE, true), apps];
  assertEquals(resolveKind(list, "apps/v1", "Deployment"), apps);
  assertEquals(resolveKind(list, "apps/v1beta1", "Deployment"), apps, "the served version");
  assertEquals(resolveKind(list, "v1", "Pod")?.plural, "pods");
  assertEquals(resolveKind(list, "extensions/v1beta1", "Deployment"), undefined);
  assertEquals(resolveKind(list, "v1", "pod"), undefined, "kinds are exact");
});
