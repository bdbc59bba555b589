/**
 * A real Kubernetes control plane for waitcmd's orch-kind tests: etcd and
 * kube-apiserver built from the Go module proxy (scripts/services/build-k8s.sh,
 * cached under {@linkcode cacheDir}) and started the way controller-runtime's
 * envtest does, on free loopback ports, in a temporary directory.
 *
 * Two shapes:
 * - `startKube()`: the API server alone. Nothing reconciles: tests create
 *   objects and patch their `status` subresource themselves
 *   ({@linkcode KubeEnv.patchStatus}); a deleted namespace stays
 *   `Terminating` forever and deleting an owner leaves its dependents.
 * - `startKube({ cluster: true })`: a working cluster without containers.
 *   kube-controller-manager and kube-scheduler of the same Kubernetes version
 *   run next to the API server, and KWOK (scripts/services/build-kwok.sh)
 *   plays the kubelet of one fake node ({@linkcode KubeEnv.nodeName}): pods
 *   are scheduled onto it and become Running and Ready, Job pods succeed,
 *   pods labelled {@linkcode STAGE_LABEL}`=fail` fail and pods labelled
 *   {@linkcode STAGE_LABEL}`=hold` stay Pending until the label goes.
 *   Deployments roll out, Jobs complete or fail, Services get EndpointSlices
 *   (and Endpoints) of their ready pods, PersistentVolumeClaims bind to a
 *   matching PersistentVolume the test creates (no provisioner runs: a
 *   `hostPath` volume with the claim's storage class), namespaces and owners are
 *   deleted with what they hold (namespace controller, garbage collector),
 *   and a pod deleted with a grace period stays `Terminating` for that long.
 *   {@linkcode KubeEnv.pauseControllers} freezes the controller-manager
 *   (SIGSTOP) to observe states it would otherwise leave at once. No node
 *   lifecycle controller runs (the fake node needs no heartbeat).
 *
 * Pods need no service account either way (the ServiceAccount admission plugin is off).
 *
 * Authentication: the admin kubeconfig uses a client certificate with
 * `O=system:masters`; a bearer-token kubeconfig, a refused one (401) and an
 * authenticated-but-unauthorised one (403) are written too. The cluster
 * components use the admin kubeconfig.
 *
 * @module
 */

import {
  buildMissing,
  freePort,
  killGroup,
  once,
  randomHex,
  runBuildScript,
  type Service,
  serviceDir,
  ServiceUnavailableError,
  sh,
  sharedService,
  spawnService,
  waitUntil,
} from "./_util.ts";
import { makePki } from "./tls.ts";

/** Kubernetes version built and started (keep in step with build-k8s.sh). */
export const KUBE_VERSION = "v1.33.13";
/** etcd version built and started (the one Kubernetes {@linkcode KUBE_VERSION} pins). */
export const ETCD_VERSION = "v3.5.21";

/** KWOK version built and started (keep in step with build-kwok.sh). */
export const KWOK_VERSION = "v0.8.0";

/**
 * Pod label read by the KWOK stages of a cluster ({@linkcode StartOptions.cluster}):
 * `hold` keeps a pod Pending (not Ready) until the label is removed or changed;
 * `fail` makes a pod fail (phase Failed, container exit code 1) instead of
 * starting. Put it in a pod template to affect a Deployment's or Job's pods.
 */
export const STAGE_LABEL = "waitcmd.test/stage";

/** Name of the fake node KWOK manages in a cluster. */
export const NODE_NAME = "kwok-node-0";

/** Options for {@linkcode startKube}. */
export interface StartOptions {
  /**
   * Also run kube-controller-manager, kube-scheduler and KWOK with one fake
   * node, so that controllers produce the status of workloads. Default false.
   */
  cluster?: boolean;
}

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
  /** Log files of the processes, for diagnostics (the cluster ones only with `cluster`). */
  readonly logs: {
    readonly etcd: string;
    readonly apiserver: string;
    readonly controllerManager?: string;
    readonly scheduler?: string;
    readonly kwok?: string;
  };
  /** Versions that run (`kwok` only with `cluster`). */
  readonly versions: { readonly kubernetes: string; readonly etcd: string; readonly kwok?: string };
  /** Whether controllers, scheduler and KWOK run ({@linkcode StartOptions.cluster}). */
  readonly cluster: boolean;
  /** The fake node KWOK manages ({@linkcode NODE_NAME}), or undefined without `cluster`. */
  readonly nodeName: string | undefined;
  /**
   * Freezes kube-controller-manager (SIGSTOP to its process group): objects
   * created or changed meanwhile keep the status they have, e.g. a
   * Deployment's new generation stays unobserved. Scheduler and KWOK go on.
   * Keep pauses short (seconds) and always {@linkcode resumeControllers}
   * (in a `finally`). Throws without `cluster`.
   */
  pauseControllers(): void;
  /** Lets a paused kube-controller-manager go on (SIGCONT); a no-op when it runs. */
  resumeControllers(): Promise<void>;
  /**
   * Kills kube-apiserver (SIGKILL, as a crash: no GOAWAY, open watches just
   * break) and waits until it has exited; connections to {@linkcode server}
   * are refused from then on. etcd, the controllers, the scheduler and KWOK
   * keep running and retry. A no-op when it is already stopped.
   */
  stopApiserver(): Promise<void>;
  /**
   * Starts kube-apiserver again on the same port, with the same flags and
   * certificates, and waits until `/readyz` answers 200. A no-op when it runs.
   */
  startApiserver(): Promise<void>;
  /** {@linkcode stopApiserver}, `downMs` of outage, then {@linkcode startApiserver}. */
  restartApiserver(downMs: number): Promise<void>;

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
 * about 6 minutes on 2 cores, and about 3.5 more with `cluster`, and reports
 * its progress on stderr) and returns the directory holding `etcd` and
 * `kube-apiserver`, and with `cluster` also `kube-controller-manager` and
 * `kube-scheduler`.
 */
export function buildKube(opts: StartOptions = {}): Promise<string> {
  if (!opts.cluster) {
    return runBuildScript("build-k8s.sh", `kube-apiserver ${KUBE_VERSION}, etcd ${ETCD_VERSION}`);
  }
  return runBuildScript(
    "build-k8s.sh",
    `kube-apiserver, kube-controller-manager, kube-scheduler ${KUBE_VERSION}, etcd ${ETCD_VERSION}`,
    ["--cluster"],
  );
}

/**
 * Runs build-kwok.sh (a no-op once cached; a cold build takes about 7 minutes
 * on 2 cores) and returns the directory holding `kwok`.
 */
export function buildKwok(): Promise<string> {
  return runBuildScript("build-kwok.sh", `kwok ${KWOK_VERSION}`);
}

/**
 * Builds what `startKube({ cluster: true })` needs (cached after the first
 * time); returns why it cannot be built here ({@linkcode ServiceUnavailableError}'s
 * message), or undefined when it can. For a test file's `ignoreWithout`.
 */
export function whyNoCluster(): Promise<string | undefined> {
  return buildMissing(async () => {
    await buildKube({ cluster: true });
    await buildKwok();
  });
}

/**
 * KWOK stages (kwok.x-k8s.io/v1alpha1), adapted from KWOK's "fast" node and
 * pod stages (kustomize/stage/{node,pod}/fast) with the {@linkcode STAGE_LABEL}
 * hooks and a graceful pod deletion (general/pod-delete.yaml): a deleted pod
 * goes when its grace period ends. Stages pick by selector; they exclude each
 * other so that exactly one applies to a pod at a time.
 */
function kwokStages(): string {
  const label = `.metadata.labels["${STAGE_LABEL}"]`;
  const readyStatus = '.status.conditions.[] | select( .type == "Ready" ) | .status';
  const expr = (key: string, operator: string, values?: string[]) => ({
    key,
    operator,
    ...(values ? { values } : {}),
  });
  const notDeleted = expr(".metadata.deletionTimestamp", "DoesNotExist");
  const stage = (
    name: string,
    kind: string,
    matchExpressions: object[],
    next: object,
    delay?: object,
  ) => ({
    apiVersion: "kwok.x-k8s.io/v1alpha1",
    kind: "Stage",
    metadata: { name },
    spec: {
      resourceRef: { apiGroup: "v1", kind },
      selector: { matchExpressions },
      ...(delay ? { delay } : {}),
      next,
    },
  });
  const quoted = (field: string) => `{{ ${field} | Quote }}`;
  /** A pod's status: its conditions (status, type, reason), its containers, then `rest`. */
  const podStatus = (
    conditions: [status: string, type: string, reason?: string][],
    running: boolean,
    state: string[],
    rest: string[],
  ) =>
    [
      "{{ $now := Now }}",
      "conditions:",
      ...conditions.flatMap(([status, type, reason]) => [
        `- lastTransitionTime: ${quoted("$now")}`,
        `  status: "${status}"`,
        `  type: ${type}`,
        ...(reason ? [`  reason: ${reason}`] : []),
      ]),
      "containerStatuses:",
      "{{ range .spec.containers }}",
      `- image: ${quoted(".image")}`,
      `  name: ${quoted(".name")}`,
      `  ready: ${running}`,
      "  restartCount: 0",
      `  started: ${running}`,
      "  state:",
      ...state.map((l) => `    ${l}`),
      "{{ end }}",
      ...rest,
    ].join("\n") + "\n";
  /** The state of a container that exited with `exitCode` (`reason`). */
  const terminated = (exitCode: number, reason: string) => [
    "terminated:",
    `  exitCode: ${exitCode}`,
    `  reason: ${reason}`,
    `  startedAt: ${quoted("$now")}`,
    `  finishedAt: ${quoted("$now")}`,
  ];
  const nodeStatus = [
    "{{ $now := Now }}",
    "{{ $lastTransitionTime := or .metadata.creationTimestamp $now }}",
    "conditions:",
    "{{ range NodeConditions }}",
    `- lastHeartbeatTime: ${quoted("$now")}`,
    `  lastTransitionTime: ${quoted("$lastTransitionTime")}`,
    ...["message", "reason", "status"].map((f) => `  ${f}: ${quoted(`.${f}`)}`),
    "  type: {{ .type  | Quote}}",
    "{{ end }}",
    "addresses:",
    ...[["NodeIP", "InternalIP"], ["NodeName", "Hostname"]].flatMap(([fn, type]) => [
      `{{ with ${fn} }}`,
      `- address: ${quoted(".")}`,
      `  type: ${type}`,
      "{{ end }}",
    ]),
    ...["allocatable", "capacity"].flatMap((
      k,
    ) => [k + ":", "  cpu: 1k", "  memory: 1Ti", "  pods: 1M"]),
    "nodeInfo:",
    "  architecture: amd64",
    ...["containerRuntime", "kernel", "kubeProxy", "kubelet"].map((c) =>
      `  ${c}Version: kwok-{{ Version }}`
    ),
    "  operatingSystem: linux",
    "phase: Running",
  ].join("\n") + "\n";
  const podIPArgs =
    '( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" )';
  const stages = [
    stage("node-initialize", "Node", [expr(readyStatus, "NotIn", ["True"])], {
      statusTemplate: nodeStatus,
    }),
    stage("pod-ready", "Pod", [
      notDeleted,
      expr(".status.phase", "In", ["Pending"]),
      expr(readyStatus, "NotIn", ["True"]),
      expr(label, "DoesNotExist"),
    ], {
      statusTemplate: podStatus(
        ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map((type) => ["True", type]),
        true,
        ["running:", `  startedAt: ${quoted("$now")}`],
        [
          "{{ with NodeIPWith .spec.nodeName }}",
          `hostIP: ${quoted(".")}`,
          "{{ end }}",
          `{{ with PodIPWith .spec.nodeName ${podIPArgs} }}`,
          `podIP: ${quoted(".")}`,
          "{{ end }}",
          "phase: Running",
          `startTime: ${quoted("$now")}`,
        ],
      ),
    }),
    // A kubelet leaves the pod-level reason and message empty when a
    // container exits; they are set here so that tests see them reported.
    stage("pod-fail", "Pod", [
      notDeleted,
      expr(".status.phase", "In", ["Pending"]),
      expr(label, "In", ["fail"]),
    ], {
      statusTemplate: podStatus(
        [["False", "Ready", "PodFailed"], ["True", "PodScheduled"]],
        false,
        terminated(1, "Error"),
        ["phase: Failed", "reason: Error", "message: exit code 1", `startTime: ${quoted("$now")}`],
      ),
    }),
    stage("pod-complete", "Pod", [
      notDeleted,
      expr(".status.phase", "In", ["Running"]),
      expr(".metadata.ownerReferences.[].kind", "In", ["Job"]),
    ], {
      statusTemplate: podStatus(
        [["False", "Ready", "PodCompleted"], ["True", "PodScheduled"]],
        false,
        terminated(0, "Completed"),
        ["phase: Succeeded"],
      ),
    }),
    // deletionTimestamp is when the grace period ends: wait until then.
    stage("pod-delete", "Pod", [expr(".metadata.deletionTimestamp", "Exists")], { delete: true }, {
      durationMilliseconds: 0,
      durationFrom: { expressionFrom: ".metadata.deletionTimestamp" },
    }),
  ];
  // JSON is YAML: one document a stage.
  return stages.map((s) => JSON.stringify(s, null, 2)).join("\n---\n") + "\n";
}

function b64(text: string): string {
  return btoa(text);
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
 * With `cluster`, also builds and starts kube-controller-manager,
 * kube-scheduler and KWOK, creates the fake node and waits until both
 * components answer `/healthz` and KWOK has made the node Ready.
 * Throws {@linkcode KubeUnavailableError} when the binaries cannot be built.
 * Call `stop()` when done (or use {@linkcode sharedKube}).
 *
 * Tests that keep the environment across test cases leave child processes
 * running, so they need `sanitizeOps: false, sanitizeResources: false`.
 */
export async function startKube(opts: StartOptions = {}): Promise<KubeEnv> {
  const cluster = opts.cluster ?? false;
  const bin = await buildKube({ cluster });
  const kwokBin = cluster ? await buildKwok() : undefined;
  const sd = await serviceDir("waitcmd-kube-");
  const dir = sd.dir;
  const services: Service[] = [];
  let client: Deno.HttpClient | undefined;
  const cleanup = once(async () => {
    client?.close();
    // SIGKILL, not SIGTERM, for the API server: on SIGTERM it sends HTTP/2
    // GOAWAY to open connections, and Deno's nghttp2-based Node HTTP layer (used by
    // @kubernetes/client-node in the test process) aborts the whole process on
    // an nghttp2 assertion when it gets one (denoland/deno#36788; seen here with
    // Deno 2.9.6 in 3 of 9 runs of the smoke test). Nothing of it needs to survive.
    // The cluster components (started after it) go the same way, first: nothing
    // of them needs to survive either, and SIGKILL also ends a paused (SIGSTOP)
    // controller-manager.
    for (const s of services.slice(1).reverse()) killGroup(s.pid, "SIGKILL");
    for (const s of services.reverse()) await s.stop();
    await sd.remove();
  });
  try {
    // --- certificates and keys -------------------------------------------
    const pki = await makePki({
      dir: `${dir}/pki`,
      caCommonName: "waitcmd-test-ca",
      server: { commonName: "kube-apiserver", dnsNames: ["localhost"], ips: ["127.0.0.1"] },
      client: { commonName: "waitcmd-admin", organization: "system:masters" },
    });
    // The same user, certified by a CA the API server does not trust.
    const rogue = await makePki({
      dir: `${dir}/rogue-pki`,
      caCommonName: "waitcmd-rogue-ca",
      client: { commonName: "waitcmd-admin", organization: "system:masters" },
    });
    await sh("openssl", [
      "genpkey",
      "-algorithm",
      "EC",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-out",
      `${dir}/sa.key`,
    ]);
    await sh("openssl", ["pkey", "-in", `${dir}/sa.key`, "-pubout", "-out", `${dir}/sa.pub`]);
    const adminToken = randomHex(16);
    const nobodyToken = randomHex(16);
    await Deno.writeTextFile(
      `${dir}/tokens.csv`,
      `${adminToken},waitcmd-token-admin,uid-token-admin,"system:masters"\n` +
        `${nobodyToken},waitcmd-nobody,uid-nobody\n`,
    );
    const caPem = pki.ca.certPem;
    const { certPem: adminCert, keyPem: adminKey } = pki.client!;
    const { certPem: rogueCert, keyPem: rogueKey } = rogue.client!;

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
    sd.setPids(services.map((s) => s.pid));
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
    const apiArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${dir}/apiserver-certs`,
      `--tls-cert-file=${pki.server.certFile}`,
      `--tls-private-key-file=${pki.server.keyFile}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      // The "kubernetes" Service would otherwise get loopback endpoints, which
      // validation rejects; no traffic ever goes to the service range.
      "--endpoint-reconciler-type=none",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      // TaintNodesByCondition taints a new node not-ready until the node
      // lifecycle controller sees it Ready; that controller does not run with
      // `cluster` (KWOK's fake node has no heartbeat to judge), so neither does
      // the taint.
      `--disable-admission-plugins=ServiceAccount${cluster ? ",TaintNodesByCondition" : ""}`,
      "--authorization-mode=RBAC",
      `--service-account-issuer=${server}/`,
      `--service-account-key-file=${dir}/sa.pub`,
      `--service-account-signing-key-file=${dir}/sa.key`,
      `--client-ca-file=${pki.ca.certFile}`,
      `--token-auth-file=${dir}/tokens.csv`,
      "--profiling=false",
    ];
    // Kept (and its index in `services`) so that stopApiserver/startApiserver can restart it.
    const apiIndex = services.length;
    let apiserver: Service | undefined = spawnService(`${bin}/kube-apiserver`, apiArgs, {
      logFile: apiLog,
      cwd: dir,
    });
    services.push(apiserver);
    sd.setPids(services.map((s) => s.pid));

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
    const badKubeconfig = await writeConfig("bad.kubeconfig", { token: randomHex(16) });
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

    // --- controllers, scheduler, KWOK and the fake node --------------------------
    const logs: {
      etcd: string;
      apiserver: string;
      controllerManager?: string;
      scheduler?: string;
      kwok?: string;
    } = { etcd: etcdLog, apiserver: apiLog };
    let controllerManager: Service | undefined;
    let paused = false;
    if (cluster && kwokBin) {
      const auth = [
        `--kubeconfig=${kubeconfig}`,
        // No --authentication-kubeconfig/--authorization-kubeconfig: their own
        // HTTPS port only has to answer /healthz (always allowed), and without
        // a requestheader CA on the API server they log errors in a loop.
        "--bind-address=127.0.0.1",
        `--tls-cert-file=${pki.server.certFile}`,
        `--tls-private-key-file=${pki.server.keyFile}`,
        // One instance: no lease to lose when a loaded machine delays a renewal
        // (a component that loses its lease exits).
        "--leader-elect=false",
        "--profiling=false",
      ];
      const kcmPort = freePort();
      logs.controllerManager = `${dir}/kube-controller-manager.log`;
      controllerManager = spawnService(`${bin}/kube-controller-manager`, [
        ...auth,
        `--secure-port=${kcmPort}`,
        "--use-service-account-credentials=false",
        // What the tests need, not "*": every controller costs informers and CPU
        // on a shared 2-core machine. No node-lifecycle-controller: it would
        // taint the fake node and evict its pods without a heartbeat.
        "--controllers=" + [
          "deployment-controller",
          "replicaset-controller",
          "statefulset-controller",
          "daemonset-controller",
          "job-controller",
          "garbage-collector-controller",
          "namespace-controller",
          "serviceaccount-controller",
          "pod-garbage-collector-controller",
          // Services get endpoints from ready pods (orch -f waits for them).
          "endpoints-controller",
          "endpointslice-controller",
          // Claims bind to matching volumes (static provisioning: tests create the volumes).
          "persistentvolume-binder-controller",
        ].join(","),
        `--root-ca-file=${pki.ca.certFile}`,
      ], { logFile: logs.controllerManager, cwd: dir });
      services.push(controllerManager);
      const schedPort = freePort();
      logs.scheduler = `${dir}/kube-scheduler.log`;
      services.push(spawnService(`${bin}/kube-scheduler`, [
        ...auth,
        `--secure-port=${schedPort}`,
      ], { logFile: logs.scheduler, cwd: dir }));
      sd.setPids(services.map((s) => s.pid));

      // The fake node, before KWOK, which manages the nodes with this label.
      await call("POST", "/api/v1/nodes", {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name: NODE_NAME,
          labels: {
            type: "kwok",
            "kubernetes.io/hostname": NODE_NAME,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
          },
          annotations: { "kwok.x-k8s.io/node": "fake" },
        },
        spec: {},
      });
      await Deno.writeTextFile(`${dir}/kwok.yaml`, kwokStages());
      logs.kwok = `${dir}/kwok.log`;
      services.push(spawnService(`${kwokBin}/kwok`, [
        `--kubeconfig=${kubeconfig}`,
        `--config=${dir}/kwok.yaml`,
        "--manage-all-nodes=false",
        "--manage-nodes-with-label-selector=type=kwok",
        "--node-ip=10.1.0.1",
        "--cidr=10.244.0.0/16",
        "--node-lease-duration-seconds=0",
      ], { logFile: logs.kwok, cwd: dir }));
      sd.setPids(services.map((s) => s.pid));

      const healthy = (port: number) => async () => {
        const r = await fetch(`https://127.0.0.1:${port}/healthz`, { client: http });
        await r.body?.cancel();
        return r.status === 200;
      };
      await waitUntil("kube-controller-manager /healthz", healthy(kcmPort), {
        timeoutMs: 90_000,
        everyMs: 250,
        logFile: logs.controllerManager,
      });
      await waitUntil("kube-scheduler /healthz", healthy(schedPort), {
        timeoutMs: 90_000,
        everyMs: 250,
        logFile: logs.scheduler,
      });
      await waitUntil(`node ${NODE_NAME} Ready (KWOK)`, async () => {
        const node = await call<{ status?: { conditions?: { type: string; status: string }[] } }>(
          "GET",
          `/api/v1/nodes/${NODE_NAME}`,
        );
        return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ??
          false;
      }, { timeoutMs: 60_000, everyMs: 250, logFile: logs.kwok });
    }

    let stopped = false;
    const env: KubeEnv = {
      kubeconfig,
      tokenKubeconfig,
      badKubeconfig,
      badCertKubeconfig,
      forbiddenKubeconfig,
      server,
      dir,
      caFile: pki.ca.certFile,
      caPem,
      adminToken,
      logs,
      versions: cluster
        ? { kubernetes: KUBE_VERSION, etcd: ETCD_VERSION, kwok: KWOK_VERSION }
        : { kubernetes: KUBE_VERSION, etcd: ETCD_VERSION },
      cluster,
      nodeName: cluster ? NODE_NAME : undefined,
      pauseControllers() {
        if (!controllerManager) {
          throw new Error("pauseControllers needs startKube({ cluster: true })");
        }
        killGroup(controllerManager.pid, "SIGSTOP");
        paused = true;
      },
      async resumeControllers() {
        if (!controllerManager || !paused) return;
        paused = false;
        killGroup(controllerManager.pid, "SIGCONT");
        // Let it take up its watches again before the caller goes on.
        await new Promise((r) => setTimeout(r, 100));
      },
      async stopApiserver() {
        const s = apiserver;
        if (!s) return;
        apiserver = undefined;
        // SIGKILL first: a crash, and no GOAWAY (see cleanup); stop() then reaps it.
        killGroup(s.pid, "SIGKILL");
        await s.stop();
      },
      async startApiserver() {
        if (apiserver || stopped) return;
        apiserver = spawnService(`${bin}/kube-apiserver`, apiArgs, { logFile: apiLog, cwd: dir });
        services[apiIndex] = apiserver;
        sd.setPids(services.map((s) => s.pid));
        await waitUntil("kube-apiserver /readyz after a restart", async () => {
          const r = await request("GET", "/readyz");
          await r.body?.cancel();
          return r.status === 200;
        }, { timeoutMs: 90_000, everyMs: 100, logFile: apiLog });
      },
      async restartApiserver(downMs: number) {
        await env.stopApiserver();
        await new Promise((r) => setTimeout(r, downMs));
        await env.startApiserver();
      },
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
      stop() {
        stopped = true;
        return cleanup();
      },
    };
    return env;
  } catch (err) {
    await cleanup();
    throw err;
  }
}

const shared = sharedService(() => startKube());

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
  return shared.get();
}

/** Stops the environment started by {@linkcode sharedKube}, if any. */
export function stopSharedKube(): Promise<void> {
  return shared.stop();
}
