/**
 * A real Kubernetes control plane for waitcmd's orch-kind tests: etcd and
 * kube-apiserver built from the Go module proxy (scripts/services/build-k8s.sh,
 * cached under {@linkcode cacheDir}) and started the way controller-runtime's
 * envtest does, on free loopback ports, in a temporary directory.
 *
 * No kubelet, scheduler or controller-manager runs: nothing reconciles. Tests
 * create objects and then patch their `status` subresource themselves to
 * simulate pods becoming ready, jobs finishing or deployments rolling out
 * ({@linkcode KubeEnv.patchStatus}). Consequences worth knowing:
 * - a deleted namespace stays `Terminating` forever (no namespace controller);
 * - deleting an owner leaves its dependents (no garbage collector);
 * - pods need no service account (the ServiceAccount admission plugin is off).
 *
 * Authentication: the admin kubeconfig uses a client certificate with
 * `O=system:masters`; a bearer-token kubeconfig, a refused one (401) and an
 * authenticated-but-unauthorised one (403) are written too.
 *
 * @module
 */

import {
  freePort,
  killGroup,
  reapOnExit,
  runBuildScript,
  type Service,
  ServiceUnavailableError,
  spawnService,
  waitUntil,
} from "./_util.ts";

/** Kubernetes version built and started (keep in step with build-k8s.sh). */
export const KUBE_VERSION = "v1.33.13";
/** etcd version built and started (the one Kubernetes {@linkcode KUBE_VERSION} pins). */
export const ETCD_VERSION = "v3.5.21";

/** The minimal shape of a Kubernetes object as the helpers see it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    uid?: string;
    [key: string]: unknown;
  };
  spec?: unknown;
  status?: unknown;
  [key: string]: unknown;
}

/** Options for {@linkcode KubeEnv.del}. */
export interface DeleteOptions {
  /** Sent as `?gracePeriodSeconds=`; defaults to 0 so pods bound to a (fake) node go at once. */
  gracePeriodSeconds?: number;
  /** `Background`, `Foreground` or `Orphan`; note that no garbage collector runs. */
  propagationPolicy?: "Background" | "Foreground" | "Orphan";
  /** Throw on 404 instead of returning false (default false). */
  mustExist?: boolean;
}

/** A running etcd + kube-apiserver pair and helpers to drive it from tests. */
export interface KubeEnv {
  /** Path of an admin kubeconfig (client certificate, `O=system:masters`, namespace `default`). */
  readonly kubeconfig: string;
  /** Path of an admin kubeconfig that authenticates with a bearer token instead. */
  readonly tokenKubeconfig: string;
  /** Path of a kubeconfig whose bearer token is not in the token file: every request gets 401. */
  readonly badKubeconfig: string;
  /** Path of a kubeconfig whose client certificate is signed by another CA: requests get 401. */
  readonly badCertKubeconfig: string;
  /** Path of a kubeconfig for a valid user with no RBAC permissions: requests get 403. */
  readonly forbiddenKubeconfig: string;
  /** API server URL, `https://127.0.0.1:<port>`. */
  readonly server: string;
  /** Temporary directory holding certificates, kubeconfigs, etcd data and logs. */
  readonly dir: string;
  /** Path of the CA certificate (PEM) that signed the serving and admin certificates. */
  readonly caFile: string;
  /** The CA certificate itself (PEM), e.g. for `Deno.createHttpClient({ caCerts })`. */
  readonly caPem: string;
  /** Admin bearer token (member of `system:masters`), as used by {@linkcode tokenKubeconfig}. */
  readonly adminToken: string;
  /** Log files of the two processes, for diagnostics. */
  readonly logs: { readonly etcd: string; readonly apiserver: string };
  /** Versions that run. */
  readonly versions: { readonly kubernetes: string; readonly etcd: string };

  /**
   * Raw request as admin (client certificate). `path` starts with `/`, e.g.
   * `/api/v1/namespaces`. A non-string body is sent as JSON. The caller must
   * consume or cancel the response body.
   */
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<Response>;
  /** GET `path` as admin; throws {@linkcode KubeApiError} unless 2xx. */
  get<T = KubeObject>(path: string): Promise<T>;
  /** GET `path`, or `undefined` on 404. */
  tryGet<T = KubeObject>(path: string): Promise<T | undefined>;
  /**
   * POST `obj` to the collection `path` (e.g. `/api/v1/namespaces/default/pods`)
   * and return the created object.
   */
  create<T = KubeObject>(path: string, obj: KubeObject): Promise<T>;
  /**
   * Server-side apply of `obj` (field manager `waitcmd-tests`, forced). The
   * object's path comes from its apiVersion/kind/metadata via API discovery,
   * so it also works for CRDs once they are established.
   */
  apply<T = KubeObject>(obj: KubeObject): Promise<T>;
  /** Patches the object at `path` (`merge` = JSON merge patch, the default). */
  patch<T = KubeObject>(
    path: string,
    patch: unknown,
    type?: "merge" | "strategic" | "json",
  ): Promise<T>;
  /**
   * JSON-merge-patches `{ status }` into the `/status` subresource of the
   * object at `path` (e.g. `/apis/apps/v1/namespaces/default/deployments/web`).
   * Lists such as `conditions` are replaced whole, as merge patches do.
   */
  patchStatus<T = KubeObject>(path: string, status: unknown): Promise<T>;
  /** Deletes the object at `path`; returns false if it did not exist. */
  del(path: string, opts?: DeleteOptions): Promise<boolean>;
  /** The REST path of an object from its apiVersion, kind, namespace and name (uses discovery). */
  pathOf(obj: KubeObject): Promise<string>;
  /** Stops kube-apiserver and etcd and removes {@linkcode dir} (set WAITCMD_KEEP_SERVICE_DIRS=1 to keep it). */
  stop(): Promise<void>;
}

/** A non-2xx answer from the API server. */
export class KubeApiError extends Error {
  /** HTTP status code. */
  readonly status: number;
  /** Response body (usually a JSON `Status` object). */
  readonly body: string;
  constructor(method: string, path: string, status: number, body: string) {
    super(`${method} ${path} -> ${status}: ${body.slice(0, 500)}`);
    this.name = "KubeApiError";
    this.status = status;
    this.body = body;
  }
}

/** Thrown when the binaries cannot be built (no Go toolchain, no module proxy, ...). */
export const KubeUnavailableError = ServiceUnavailableError;

/**
 * Runs build-k8s.sh (a no-op once the binaries are cached; a cold build takes
 * about 6 minutes on 2 cores and reports its progress on stderr) and returns the
 * directory holding `etcd` and `kube-apiserver`.
 */
export function buildKube(): Promise<string> {
  return runBuildScript("build-k8s.sh", `kube-apiserver ${KUBE_VERSION}, etcd ${ETCD_VERSION}`);
}

async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `openssl ${args.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
}

const ecKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A self-signed CA `<name>.crt`/`<name>.key` in `dir`. */
async function makeCa(dir: string, name: string, cn: string): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/${name}.cnf`,
    [
      "[req]",
      "distinguished_name = dn",
      "prompt = no",
      "x509_extensions = v3_ca",
      "[dn]",
      `CN = ${cn}`,
      "[v3_ca]",
      "basicConstraints = critical, CA:TRUE",
      "keyUsage = critical, keyCertSign, cRLSign, digitalSignature",
      "subjectKeyIdentifier = hash",
      "",
    ].join("\n"),
  );
  await openssl(dir, [
    "req",
    "-x509",
    "-new",
    ...ecKey,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-config",
    `${name}.cnf`,
  ]);
}

/** A leaf `<name>.crt`/`<name>.key` in `dir`, signed by CA `<ca>`. */
async function makeLeaf(
  dir: string,
  ca: string,
  name: string,
  subject: string,
  ext: string[],
): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/${name}.ext`,
    [
      "basicConstraints = critical, CA:FALSE",
      "keyUsage = critical, digitalSignature, keyEncipherment",
      "subjectKeyIdentifier = hash",
      "authorityKeyIdentifier = keyid",
      ...ext,
      "",
    ].join("\n"),
  );
  await openssl(dir, [
    "req",
    "-new",
    ...ecKey,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    subject,
  ]);
  const serial = "0x" + Array.from(crypto.getRandomValues(new Uint8Array(8)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.crt`,
    "-CAkey",
    `${ca}.key`,
    "-set_serial",
    serial,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ]);
}

function b64(text: string): string {
  return btoa(text);
}

function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

function kubeconfigYaml(
  server: string,
  caPem: string,
  user: { token: string } | { cert: string; key: string },
): string {
  const userLines = "token" in user
    ? [`    token: ${user.token}`]
    : [`    client-certificate-data: ${b64(user.cert)}`, `    client-key-data: ${b64(user.key)}`];
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: waitcmd-test",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caPem)}`,
    "users:",
    "- name: waitcmd-test-user",
    "  user:",
    ...userLines,
    "contexts:",
    "- name: waitcmd-test",
    "  context:",
    "    cluster: waitcmd-test",
    "    user: waitcmd-test-user",
    "    namespace: default",
    "current-context: waitcmd-test",
    "",
  ].join("\n");
}

/**
 * Builds (cached) and starts etcd and kube-apiserver, waits until `/readyz`
 * answers and the `default` namespace exists, and returns the environment.
 * Throws {@linkcode KubeUnavailableError} when the binaries cannot be built.
 * Call `stop()` when done (or use {@linkcode sharedKube}).
 *
 * Tests that keep the environment across test cases leave child processes
 * running, so they need `sanitizeOps: false, sanitizeResources: false`.
 */
export async function startKube(): Promise<KubeEnv> {
  const bin = await buildKube();
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-kube-" });
  const services: Service[] = [];
  const reap = reapOnExit(dir);
  let client: Deno.HttpClient | undefined;
  const cleanup = async () => {
    client?.close();
    // SIGKILL, not SIGTERM, for the API server: on SIGTERM it sends HTTP/2
    // GOAWAY to open connections, and Deno's nghttp2-based Node HTTP layer (used by
    // @kubernetes/client-node in the test process) aborts the whole process on
    // an nghttp2 assertion when it gets one (denoland/deno#36788; seen here with
    // Deno 2.9.6 in 3 of 9 runs of the smoke test). Nothing of it needs to survive.
    if (services[1]) killGroup(services[1].pid, "SIGKILL");
    for (const s of services.reverse()) await s.stop();
    reap.release();
    if (!Deno.env.get("WAITCMD_KEEP_SERVICE_DIRS")) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  };
  try {
    // --- certificates and keys -------------------------------------------
    await makeCa(dir, "ca", "waitcmd-test-ca");
    await makeCa(dir, "rogue-ca", "waitcmd-rogue-ca");
    await makeLeaf(dir, "ca", "serving", "/CN=kube-apiserver", [
      "extendedKeyUsage = serverAuth",
      "subjectAltName = IP:127.0.0.1, DNS:localhost",
    ]);
    await makeLeaf(dir, "ca", "admin", "/O=system:masters/CN=waitcmd-admin", [
      "extendedKeyUsage = clientAuth",
    ]);
    await makeLeaf(dir, "rogue-ca", "rogue-admin", "/O=system:masters/CN=waitcmd-admin", [
      "extendedKeyUsage = clientAuth",
    ]);
    await openssl(dir, [
      "genpkey",
      "-algorithm",
      "EC",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-out",
      "sa.key",
    ]);
    await openssl(dir, ["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
    const adminToken = randomToken();
    const nobodyToken = randomToken();
    await Deno.writeTextFile(
      `${dir}/tokens.csv`,
      `${adminToken},waitcmd-token-admin,uid-token-admin,"system:masters"\n` +
        `${nobodyToken},waitcmd-nobody,uid-nobody\n`,
    );
    const read = (f: string) => Deno.readTextFile(`${dir}/${f}`);
    const [caPem, adminCert, adminKey, rogueCert, rogueKey] = await Promise.all([
      read("ca.crt"),
      read("admin.crt"),
      read("admin.key"),
      read("rogue-admin.crt"),
      read("rogue-admin.key"),
    ]);

    // --- etcd --------------------------------------------------------------
    const etcdPort = freePort();
    const peerPort = freePort();
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const etcdLog = `${dir}/etcd.log`;
    await Deno.mkdir(`${dir}/etcd-data`, { mode: 0o700 });
    services.push(spawnService(`${bin}/etcd`, [
      "--name=default",
      `--data-dir=${dir}/etcd-data`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ], { logFile: etcdLog, cwd: dir }));
    reap.setPids(services.map((s) => s.pid));
    await waitUntil("etcd /health", async () => {
      const r = await fetch(`${etcdUrl}/health`);
      const body = await r.text();
      return r.ok && body.includes('"health":"true"');
    }, { timeoutMs: 30_000, logFile: etcdLog });

    // --- kube-apiserver ----------------------------------------------------
    const port = freePort();
    const server = `https://127.0.0.1:${port}`;
    const apiLog = `${dir}/kube-apiserver.log`;
    await Deno.mkdir(`${dir}/apiserver-certs`);
    services.push(spawnService(`${bin}/kube-apiserver`, [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${dir}/apiserver-certs`,
      `--tls-cert-file=${dir}/serving.crt`,
      `--tls-private-key-file=${dir}/serving.key`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      // The "kubernetes" Service would otherwise get loopback endpoints, which
      // validation rejects; no traffic ever goes to the service range.
      "--endpoint-reconciler-type=none",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      "--disable-admission-plugins=ServiceAccount",
      "--authorization-mode=RBAC",
      `--service-account-issuer=${server}/`,
      `--service-account-key-file=${dir}/sa.pub`,
      `--service-account-signing-key-file=${dir}/sa.key`,
      `--client-ca-file=${dir}/ca.crt`,
      `--token-auth-file=${dir}/tokens.csv`,
      "--profiling=false",
    ], { logFile: apiLog, cwd: dir }));
    reap.setPids(services.map((s) => s.pid));

    client = Deno.createHttpClient({ caCerts: [caPem], cert: adminCert, key: adminKey });
    const http = client;
    const request = async (
      method: string,
      path: string,
      body?: unknown,
      contentType = "application/json",
    ): Promise<Response> => {
      const headers: Record<string, string> = { accept: "application/json" };
      let payload: string | undefined;
      if (body !== undefined) {
        payload = typeof body === "string" ? body : JSON.stringify(body);
        headers["content-type"] = contentType;
      }
      return await fetch(`${server}${path}`, { method, headers, body: payload, client: http });
    };
    const call = async <T>(
      method: string,
      path: string,
      body?: unknown,
      contentType?: string,
    ): Promise<T> => {
      const r = await request(method, path, body, contentType);
      const text = await r.text();
      if (!r.ok) throw new KubeApiError(method, path, r.status, text);
      return JSON.parse(text) as T;
    };

    await waitUntil("kube-apiserver /readyz", async () => {
      const r = await request("GET", "/readyz");
      await r.body?.cancel();
      return r.status === 200;
    }, { timeoutMs: 90_000, everyMs: 250, logFile: apiLog });
    // The "default" namespace is created by a post-start controller shortly after.
    await waitUntil("namespace default", async () => {
      const r = await request("GET", "/api/v1/namespaces/default");
      await r.body?.cancel();
      return r.status === 200;
    }, { timeoutMs: 30_000, everyMs: 100, logFile: apiLog });

    // --- kubeconfigs ---------------------------------------------------------
    const writeConfig = async (name: string, user: Parameters<typeof kubeconfigYaml>[2]) => {
      const path = `${dir}/${name}`;
      await Deno.writeTextFile(path, kubeconfigYaml(server, caPem, user), { mode: 0o600 });
      return path;
    };
    const kubeconfig = await writeConfig("admin.kubeconfig", { cert: adminCert, key: adminKey });
    const tokenKubeconfig = await writeConfig("token.kubeconfig", { token: adminToken });
    const badKubeconfig = await writeConfig("bad.kubeconfig", { token: randomToken() });
    const badCertKubeconfig = await writeConfig("bad-cert.kubeconfig", {
      cert: rogueCert,
      key: rogueKey,
    });
    const forbiddenKubeconfig = await writeConfig("forbidden.kubeconfig", { token: nobodyToken });

    // --- discovery-based paths -------------------------------------------------
    const discovery = new Map<
      string,
      Promise<{ name: string; kind: string; namespaced: boolean }[]>
    >();
    const resourcesOf = (apiVersion: string) => {
      let p = discovery.get(apiVersion);
      if (!p) {
        const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        p = call<{ resources: { name: string; kind: string; namespaced: boolean }[] }>("GET", base)
          .then((l) => l.resources.filter((r) => !r.name.includes("/")));
        p.catch(() => discovery.delete(apiVersion));
        discovery.set(apiVersion, p);
      }
      return p;
    };
    const pathOf = async (obj: KubeObject): Promise<string> => {
      const { apiVersion, kind } = obj;
      const name = obj.metadata?.name;
      if (!apiVersion || !kind || !name) {
        throw new Error("pathOf needs apiVersion, kind and metadata.name");
      }
      const res = (await resourcesOf(apiVersion)).find((r) => r.kind === kind);
      if (!res) throw new Error(`no resource of kind ${kind} in ${apiVersion}`);
      const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const ns = res.namespaced ? `/namespaces/${obj.metadata?.namespace ?? "default"}` : "";
      return `${base}${ns}/${res.name}/${encodeURIComponent(name)}`;
    };

    const patchTypes = {
      merge: "application/merge-patch+json",
      strategic: "application/strategic-merge-patch+json",
      json: "application/json-patch+json",
    } as const;

    let stopped = false;
    const env: KubeEnv = {
      kubeconfig,
      tokenKubeconfig,
      badKubeconfig,
      badCertKubeconfig,
      forbiddenKubeconfig,
      server,
      dir,
      caFile: `${dir}/ca.crt`,
      caPem,
      adminToken,
      logs: { etcd: etcdLog, apiserver: apiLog },
      versions: { kubernetes: KUBE_VERSION, etcd: ETCD_VERSION },
      request,
      get: <T>(path: string) => call<T>("GET", path),
      async tryGet<T>(path: string): Promise<T | undefined> {
        try {
          return await call<T>("GET", path);
        } catch (err) {
          if (err instanceof KubeApiError && err.status === 404) return undefined;
          throw err;
        }
      },
      create: <T>(path: string, obj: KubeObject) => call<T>("POST", path, obj),
      async apply<T>(obj: KubeObject): Promise<T> {
        const path = await pathOf(obj);
        return await call<T>(
          "PATCH",
          `${path}?fieldManager=waitcmd-tests&force=true`,
          obj,
          "application/apply-patch+yaml",
        );
      },
      patch: <T>(path: string, patch: unknown, type: keyof typeof patchTypes = "merge") =>
        call<T>("PATCH", path, patch, patchTypes[type]),
      patchStatus: <T>(path: string, status: unknown) =>
        call<T>("PATCH", `${path}/status`, { status }, patchTypes.merge),
      async del(path: string, opts: DeleteOptions = {}): Promise<boolean> {
        const q = new URLSearchParams({ gracePeriodSeconds: String(opts.gracePeriodSeconds ?? 0) });
        if (opts.propagationPolicy) q.set("propagationPolicy", opts.propagationPolicy);
        const r = await request("DELETE", `${path}?${q}`);
        const text = await r.text();
        if (r.status === 404 && !opts.mustExist) return false;
        if (!r.ok) throw new KubeApiError("DELETE", path, r.status, text);
        return true;
      },
      pathOf,
      async stop() {
        if (stopped) return;
        stopped = true;
        await cleanup();
      },
    };
    return env;
  } catch (err) {
    await cleanup();
    throw err;
  }
}

let shared: Promise<KubeEnv> | undefined;

/**
 * One {@linkcode KubeEnv} per test process, started on first use. Tests share
 * it, so each should work in its own namespace (or with unique names). It is
 * stopped by {@linkcode stopSharedKube}, or at the latest when the process
 * unloads (processes killed, directory removed). A failed start is remembered:
 * later calls reject with the same error instead of building again.
 *
 * Tests using it need `sanitizeOps: false, sanitizeResources: false`.
 */
export function sharedKube(): Promise<KubeEnv> {
  if (!shared) {
    shared = startKube();
    shared.catch(() => {}); // the caller sees the rejection; avoid an unhandled one here
  }
  return shared;
}

/** Stops the environment started by {@linkcode sharedKube}, if any. */
export async function stopSharedKube(): Promise<void> {
  const s = shared;
  shared = undefined;
  if (!s) return;
  try {
    await (await s).stop();
  } catch {
    // it never started
  }
}
