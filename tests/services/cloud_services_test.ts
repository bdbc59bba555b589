/**
 * Smoke tests of the real cloud services the test suite starts: a
 * kube-apiserver + etcd control plane (kube.ts) and a versitygw S3 endpoint
 * (s3.ts). They check that each service runs, that the helpers work, and
 * that each one refuses bad credentials — the property that makes them
 * better test targets than fakes.
 */

import { deepStrictEqual } from "node:assert";
import { startedTest } from "./_util.ts";
import { type KubeObject, sharedKube, stopSharedKube } from "./kube.ts";
import { startS3 } from "../../conditions/objstore/_service.ts";

/** Reads a kubeconfig written by kube.ts (flat YAML of known shape) into fetch options. */
async function clientFromKubeconfig(path: string): Promise<{
  server: string;
  client: Deno.HttpClient;
  headers: Record<string, string>;
}> {
  const text = await Deno.readTextFile(path);
  const field = (name: string) => text.match(new RegExp(`^\\s*${name}: (\\S+)$`, "m"))?.[1];
  const server = field("server");
  const ca = field("certificate-authority-data");
  assert(server && ca, `kubeconfig ${path} lacks server or CA`);
  const token = field("token");
  const cert = field("client-certificate-data");
  const key = field("client-key-data");
  const client = cert && key
    ? Deno.createHttpClient({ caCerts: [atob(ca)], cert: atob(cert), key: atob(key) })
    : Deno.createHttpClient({ caCerts: [atob(ca)] });
  return { server, client, headers: token ? { authorization: `Bearer ${token}` } : {} };
}

async function statusWith(kubeconfig: string, path: string): Promise<number> {
  const { server, client, headers } = await clientFromKubeconfig(kubeconfig);
  try {
    const r = await fetch(`${server}${path}`, { headers, client });
    await r.body?.cancel();
    return r.status;
  } finally {
    client.close();
  }
}

startedTest(
  "kube: apiserver runs, helpers work, bad credentials are refused",
  "kube-apiserver",
  sharedKube,
  async (env, t) => {
    try {
      assert((await sharedKube()) === env, "sharedKube() returns the same environment");

      await t.step("version is the pinned one", async () => {
        const v = await env.get<{ gitVersion: string; major: string }>("/version");
        assertEquals(v.gitVersion, env.versions.kubernetes);
        assertEquals(v.major, "1");
      });

      await t.step("create a namespace and read it back", async () => {
        const name = `smoke-${crypto.randomUUID().slice(0, 8)}`;
        const created = await env.create("/api/v1/namespaces", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name, labels: { suite: "waitcmd" } },
        });
        assertEquals(created.metadata?.name, name);
        const read = await env.get(`/api/v1/namespaces/${name}`);
        assertEquals(read.metadata?.uid, created.metadata?.uid);
        assertEquals(read.metadata?.labels?.suite, "waitcmd");
        assertEquals(await env.tryGet(`/api/v1/namespaces/${name}-missing`), undefined);
      });

      await t.step("apply a deployment and patch its status like a controller", async () => {
        const dep: KubeObject = {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web", namespace: "default" },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: {
              metadata: { labels: { app: "web" } },
              spec: { containers: [{ name: "web", image: "example.invalid/web:1" }] },
            },
          },
        };
        const path = await env.pathOf(dep);
        assertEquals(path, "/apis/apps/v1/namespaces/default/deployments/web");
        const applied = await env.apply<KubeObject & { metadata: { generation: number } }>(dep);
        await env.patchStatus(path, {
          observedGeneration: applied.metadata.generation,
          replicas: 2,
          updatedReplicas: 2,
          readyReplicas: 2,
          availableReplicas: 2,
          conditions: [{ type: "Available", status: "True", reason: "MinimumReplicasAvailable" }],
        });
        const got = await env.get<{ status: { readyReplicas: number } }>(path);
        assertEquals(got.status.readyReplicas, 2);
        assertEquals(await env.del(path), true);
        assertEquals(await env.del(path), false);
      });

      await t.step("admin kubeconfigs are accepted", async () => {
        assertEquals(await statusWith(env.kubeconfig, "/api/v1/namespaces/default"), 200);
        assertEquals(await statusWith(env.tokenKubeconfig, "/api/v1/namespaces/default"), 200);
      });

      await t.step("bad kubeconfigs get 401, an unauthorised user 403", async () => {
        assertEquals(await statusWith(env.badKubeconfig, "/api/v1/namespaces"), 401);
        assertEquals(await statusWith(env.badCertKubeconfig, "/api/v1/namespaces"), 401);
        assertEquals(await statusWith(env.forbiddenKubeconfig, "/api/v1/namespaces"), 403);
      });

      await t.step("@kubernetes/client-node accepts the kubeconfig files", async () => {
        const k8s = await import("@kubernetes/client-node");
        const kc = new k8s.KubeConfig();
        kc.loadFromFile(env.kubeconfig);
        const core = kc.makeApiClient(k8s.CoreV1Api);
        const ns = await core.readNamespace({ name: "default" });
        assertEquals(ns.metadata?.name, "default");
        const bad = new k8s.KubeConfig();
        bad.loadFromFile(env.badKubeconfig);
        const err = await assertRejects(() =>
          bad.makeApiClient(k8s.CoreV1Api).readNamespace({ name: "default" })
        );
        assertEquals((err as { code?: number }).code, 401);
      });
    } finally {
      const dir = env.dir;
      await stopSharedKube();
      assertEquals(await Deno.stat(dir).then(() => true, () => false), false, "dir removed");
    }
  },
);

startedTest(
  "s3: versitygw keeps metadata and refuses a wrong secret",
  "versitygw",
  startS3,
  async (env, t) => {
    try {
      await t.step("create bucket, put object with metadata, head it back", async () => {
        await env.createBucket("smoke");
        const etag = await env.putObject("smoke", "dir/file.txt", "hello", {
          owner: "waitcmd",
          "build-id": "42",
        }, "text/plain");
        assert(etag, "put returns an ETag");
        const head = await env.headObject("smoke", "dir/file.txt");
        assertEquals(head.ContentLength, 5);
        assertEquals(head.ETag, etag);
        assertEquals(head.ContentType, "text/plain");
        assertEquals(head.Metadata, { owner: "waitcmd", "build-id": "42" });
      });

      await t.step("missing object is 404, deleted object is gone", async () => {
        const err = await assertRejects(() => env.headObject("smoke", "nope"));
        assertEquals(httpStatus(err), 404);
        await env.putObject("smoke", "tmp", new Uint8Array([1, 2, 3]));
        await env.deleteObject("smoke", "tmp");
        assertEquals(httpStatus(await assertRejects(() => env.headObject("smoke", "tmp"))), 404);
      });

      await t.step("a wrong secret is refused with 403, an unknown key too (404)", async () => {
        const { ListBucketsCommand, HeadObjectCommand } = await import("@aws-sdk/client-s3");
        const wrong = env.clientWith(env.accessKeyId, env.secretAccessKey + "x");
        const e1 = await assertRejects(() => wrong.send(new ListBucketsCommand({})));
        assertEquals(httpStatus(e1), 403);
        assertEquals((e1 as Error).name, "SignatureDoesNotMatch");
        const e2 = await assertRejects(() =>
          wrong.send(new HeadObjectCommand({ Bucket: "smoke", Key: "dir/file.txt" }))
        );
        assertEquals(httpStatus(e2), 403);
        // Unlike AWS (403 InvalidAccessKeyId), versitygw answers an unknown
        // access key with 404 XAdminUserNotFound: refused all the same, but a
        // client must read the error code, not take every 404 for NoSuchKey.
        const unknown = env.clientWith("AKNOBODY", env.secretAccessKey);
        const e3 = await assertRejects(() => unknown.send(new ListBucketsCommand({})));
        assertEquals([httpStatus(e3), (e3 as Error).name], [404, "XAdminUserNotFound"]);
      });
    } finally {
      const dir = env.dir;
      await env.stop();
      assertEquals(await Deno.stat(dir).then(() => true, () => false), false, "dir removed");
    }
  },
);

function assert(cond: unknown, msg = "assertion failed"): asserts cond {
  if (!cond) throw new Error(msg);
}

function assertEquals<T>(actual: T, expected: T, msg?: string): void {
  if (msg === undefined) deepStrictEqual(actual, expected);
  else deepStrictEqual(actual, expected, msg);
}

/** Awaits `fn()`, which must reject, and returns what it rejected with. */
async function assertRejects(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}
