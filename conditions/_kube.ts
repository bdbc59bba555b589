/**
 * A small Kubernetes API client for the orch kind: kubeconfig loading and
 * authentication through `@kubernetes/client-node` (imported lazily: exec
 * credential plugins, token files, client certificates, in-cluster config),
 * requests through Deno's own `fetch` (abortable, kept-alive connections),
 * API discovery (aggregated discovery, else the legacy per-group documents)
 * and watch streams.
 *
 * Nothing here decides whether a condition holds; errors come back as
 * {@linkcode KubeError} values that say whether a retry can help.
 *
 * @module
 */

import { describeError } from "./_net.ts";

/** Why a request failed. */
export type KubeErrorKind =
  /** No kubeconfig, unreadable or invalid file: may be fixed by the time of the next attempt. */
  | "config"
  /** The kubeconfig names a context that does not exist: no retry can fix it. */
  | "context"
  /** Connection refused, DNS, TLS, reset, ...: retried. */
  | "network"
  /** 401 or 403: the credentials were refused (fatal). */
  | "auth"
  /** Any other HTTP error status. */
  | "http"
  /** The exec credential plugin or the token file failed. */
  | "credentials";

/** A failed request, as a short lower-case text and a kind. */
export class KubeError extends Error {
  constructor(
    readonly kind: KubeErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "KubeError";
  }
}

/** One resource type the API server serves. */
export interface ApiResource {
  /** `""` for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name used in paths: `deployments`. */
  readonly plural: string;
  readonly singular: string;
  /** `Deployment`. */
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly verbs: readonly string[];
}

/** Where to find a kubeconfig, from the flags and the environment. */
export interface ConfigSource {
  /** `--kubeconfig`. */
  readonly kubeconfig?: string;
  /** `--context`. */
  readonly context?: string;
  readonly env: Readonly<Record<string, string>>;
}

/** The kubeconfig files to read, in merge order (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config). */
export function kubeconfigFiles(src: ConfigSource): { files: string[]; from: string } {
  if (src.kubeconfig !== undefined) return { files: [src.kubeconfig], from: "--kubeconfig" };
  const list = src.env.KUBECONFIG ?? "";
  const files = list.split(Deno.build.os === "windows" ? ";" : ":").filter((f) => f !== "");
  if (files.length) return { files, from: "KUBECONFIG" };
  const home = src.env.HOME ?? src.env.USERPROFILE ?? "";
  return { files: home ? [`${home}/.kube/config`] : [], from: "default" };
}

/** The parts of client-node's types that are used here. */
interface KcUser {
  readonly name: string;
  readonly certData?: string;
  readonly certFile?: string;
  readonly exec?: { command?: string } | null;
  readonly authProvider?: { name?: string; config?: Record<string, unknown> } | null;
  readonly token?: string;
  readonly username?: string;
  readonly impersonateUser?: string;
}

interface KcCluster {
  readonly name: string;
  readonly server: string;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
}

interface KcContext {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
  readonly namespace?: string;
}

interface KubeConfigLike {
  clusters: KcCluster[];
  users: KcUser[];
  contexts: KcContext[];
  currentContext: string;
  loadFromFile(file: string): void;
  loadFromCluster(): void;
  loadFromOptions(options: unknown): void;
  getCurrentCluster(): KcCluster | null;
  getCurrentUser(): KcUser | null;
  getContextObject(name: string): KcContext | null;
  setCurrentContext(name: string): void;
}

/** What client-node's options give a request. */
interface HttpsOptions {
  headers?: Record<string, string>;
  ca?: Uint8Array | string;
  cert?: Uint8Array | string;
  key?: Uint8Array | string;
  rejectUnauthorized?: boolean;
  servername?: string;
  auth?: string;
}

/** A loaded kubeconfig: where the server is and who we are. */
export interface Connection {
  /** `https://127.0.0.1:6443` (without a trailing slash). */
  readonly server: string;
  /** The context's namespace, else `default`. */
  readonly namespace: string;
  /** Which credentials are used, for error messages: `client certificate of user "admin" (context "kind")`. */
  readonly credentials: string;
}

/** How the kubeconfig's user authenticates, as shown when the server refuses it. */
export function describeCredentials(user: KcUser | null | undefined): string {
  if (!user) return "no credentials";
  let how: string;
  if (user.exec?.command) how = `exec plugin ${JSON.stringify(user.exec.command)}`;
  else if (user.authProvider?.config?.tokenFile) how = "token file";
  else if (user.authProvider?.name) how = `auth provider ${JSON.stringify(user.authProvider.name)}`;
  else if (user.token) how = "bearer token";
  else if (user.certData || user.certFile) how = "client certificate";
  else if (user.username) how = `basic auth (user ${JSON.stringify(user.username)})`;
  else how = "no credentials";
  const as = user.impersonateUser ? `, impersonating ${JSON.stringify(user.impersonateUser)}` : "";
  return `${how} of user ${JSON.stringify(user.name)}${as}`;
}

function text(v: Uint8Array | string | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === "string" ? v : new TextDecoder().decode(v);
}

/** A request's answer: status and body stream. */
interface RawResponse {
  readonly status: number;
  readonly body: ReadableStream<Uint8Array> | null;
}

/** Sends GET requests with one set of TLS material. */
interface Transport {
  readonly key: string;
  get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<RawResponse>;
  close(): void;
}

/** Deno's fetch with its own HTTP client (CA, client certificate, proxy). */
function fetchTransport(key: string, tls: {
  ca?: string;
  cert?: string;
  key?: string;
  proxy?: string;
}): Transport {
  const opts: Deno.CreateHttpClientOptions & { cert?: string; key?: string } = {};
  if (tls.ca) opts.caCerts = [tls.ca];
  if (tls.cert && tls.key) {
    opts.cert = tls.cert;
    opts.key = tls.key;
  }
  if (tls.proxy) opts.proxy = { url: tls.proxy };
  const client = Deno.createHttpClient(opts);
  return {
    key,
    async get(url, headers, signal) {
      const r = await fetch(url, { headers, signal, client });
      return { status: r.status, body: r.body };
    },
    close: () => client.close(),
  };
}

/**
 * `node:https`, for what Deno's fetch cannot do: `insecure-skip-tls-verify`
 * and `tls-server-name`.
 */
function nodeTransport(key: string, tls: HttpsOptions): Transport {
  let agent: { destroy(): void } | undefined;
  return {
    key,
    async get(url, headers, signal) {
      const https = await import("node:https");
      agent ??= new https.Agent({
        keepAlive: true,
        ca: text(tls.ca),
        cert: text(tls.cert),
        key: text(tls.key),
        rejectUnauthorized: tls.rejectUnauthorized ?? true,
        servername: tls.servername,
      });
      const a = agent as InstanceType<typeof https.Agent>;
      return await new Promise<RawResponse>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        const req = https.request(url, { method: "GET", headers, agent: a });
        // Destroying the request (and so its socket) is what ends a watch stream.
        const abort = () => req.destroy(signal.reason instanceof Error ? signal.reason : undefined);
        signal.addEventListener("abort", abort, { once: true });
        req.on("error", (e) => {
          signal.removeEventListener("abort", abort);
          reject(e);
        });
        req.on("response", (res) => {
          let ended = false;
          let ctl!: ReadableStreamDefaultController<Uint8Array>;
          const end = (e?: Error) => {
            signal.removeEventListener("abort", stopBody);
            if (ended) return;
            ended = true;
            if (e) ctl.error(e);
            else ctl.close();
          };
          // An abort ends the body at once; it does not wait for the socket's events.
          const stopBody = () => {
            req.destroy();
            end(new Error("aborted"));
          };
          signal.removeEventListener("abort", abort);
          const body = new ReadableStream<Uint8Array>({
            start(c) {
              ctl = c;
              res.on("data", (chunk: Uint8Array) => {
                if (!ended) ctl.enqueue(new Uint8Array(chunk));
              });
              res.on("end", () => end());
              res.on("error", (e) => end(e));
              // Closed before its end: the connection broke.
              res.on("close", () => end(new Error("connection closed")));
            },
            cancel() {
              ended = true;
              signal.removeEventListener("abort", stopBody);
              req.destroy();
            },
          });
          if (signal.aborted) stopBody();
          else signal.addEventListener("abort", stopBody, { once: true });
          resolve({ status: res.statusCode ?? 0, body });
        });
        req.end();
      });
    },
    close() {
      agent?.destroy();
      agent = undefined;
    },
  };
}

/** `connection refused`, `cannot resolve host: ...`, `tls: ...` from a fetch or node error. */
export function describeRequestError(e: unknown): string {
  const code = (e as { code?: string }).code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET") return "connection reset by peer";
  if (code === "ENOTFOUND") return "cannot resolve host";
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  let t = cause instanceof Error ? cause.message : String(cause);
  const m = /client error \([A-Za-z]+\): (.*)$/s.exec(t);
  if (m) t = m[1]!;
  t = t.replace(/^error sending request[^:]*\): /, "").replace(/^tcp connect error: /, "");
  if (/invalid peer certificate|certificate verify failed|UnknownIssuer/i.test(t)) {
    return `tls: the server's certificate is not trusted (${
      /\((\w+)\)|: (\w+)$/.exec(t)?.slice(1).find(Boolean) ?? "verification failed"
    })`;
  }
  if (/dns error|failed to lookup address/i.test(t)) return "cannot resolve host";
  return describeError(t);
}

/** The `message` of a Kubernetes `Status` body, else a snippet of the body. */
function statusMessage(body: string): string {
  try {
    const j = JSON.parse(body) as { message?: unknown };
    if (typeof j.message === "string" && j.message) return j.message;
  } catch {
    // not JSON
  }
  return body.trim().slice(0, 200);
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  410: "Gone",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** `403 Forbidden`. */
export function statusText(status: number): string {
  return REASONS[status] ? `${status} ${REASONS[status]}` : `${status}`;
}

/** An answer read whole: status and parsed JSON (undefined when the body is not JSON). */
export interface JsonResponse {
  readonly status: number;
  readonly json: unknown;
  readonly text: string;
}

/** An event of a watch stream. */
export interface WatchEvent {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

type KubeModule = { KubeConfig: new () => KubeConfigLike };

/** Imports client-node without letting its Node deprecation warnings reach stderr. */
async function importClient(): Promise<KubeModule> {
  const { default: process } = await import("node:process");
  process.noDeprecation = true;
  return await import("@kubernetes/client-node") as unknown as KubeModule;
}

const DISCOVERY_ACCEPT = [
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
  "application/json",
].join(",");

/** A discovered set of resources and when it was fetched. */
export interface Discovery {
  readonly resources: readonly ApiResource[];
  readonly fetchedAt: number;
}

/**
 * One client per condition: loads the kubeconfig on first use (and again
 * after a failed load), keeps its HTTP connections across attempts, caches
 * discovery. `close()` releases the connections.
 */
export class KubeClient {
  #kc: KubeConfigLike | undefined;
  #conn: Connection | undefined;
  #transport: Transport | undefined;
  #discovery: Promise<Discovery> | undefined;
  #connecting: Promise<Connection> | undefined;
  /** Serialises credential lookups, so an exec plugin runs once when attempts and the watch start together. */
  #prepLock: Promise<unknown> = Promise.resolve();

  constructor(readonly source: ConfigSource) {}

  /** Loads the kubeconfig (once it loads, it is kept) and returns the connection facts. */
  connection(): Promise<Connection> {
    if (!this.#connecting) {
      const p = this.#load();
      this.#connecting = p;
      p.catch(() => {
        if (this.#connecting === p) this.#connecting = undefined;
      });
    }
    return this.#connecting;
  }

  async #load(): Promise<Connection> {
    const k8s = await importClient();
    const kc = new k8s.KubeConfig();
    const { files, from } = kubeconfigFiles(this.source);
    const existing: string[] = [];
    for (const f of files) {
      if (await Deno.stat(f).then(() => true, () => false)) existing.push(f);
    }
    const env = this.source.env;
    if (existing.length === 0) {
      if (from === "default" && env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
        try {
          kc.loadFromCluster();
        } catch (e) {
          throw new KubeError("config", `in-cluster config: ${describeError(e)}`);
        }
      } else if (from === "default") {
        throw new KubeError(
          "config",
          files.length
            ? `no kubeconfig: ${files[0]} does not exist (set --kubeconfig or KUBECONFIG)`
            : "no kubeconfig: set --kubeconfig or KUBECONFIG",
        );
      } else {
        throw new KubeError(
          "config",
          `kubeconfig ${files.join(", ")} (${from}): no such file`,
        );
      }
    } else {
      mergeFiles(k8s, kc, existing);
    }
    const ctxName = this.source.context ?? kc.currentContext;
    if (!ctxName) {
      throw new KubeError(
        "context",
        `kubeconfig ${existing.join(", ")} has no current context; pass --context`,
      );
    }
    const ctx = kc.getContextObject(ctxName);
    if (!ctx) {
      const names = kc.contexts.map((c) => c.name);
      throw new KubeError(
        "context",
        `context ${JSON.stringify(ctxName)} is not in the kubeconfig` +
          (names.length ? ` (contexts: ${names.join(", ")})` : ""),
      );
    }
    kc.setCurrentContext(ctxName);
    const cluster = kc.getCurrentCluster();
    if (!cluster?.server) {
      throw new KubeError(
        "context",
        `context ${JSON.stringify(ctxName)} names cluster ${
          JSON.stringify(ctx.cluster)
        }, which is not in the kubeconfig or has no server`,
      );
    }
    const where = existing.length ? ` in ${existing.join(", ")}` : " (in-cluster)";
    this.#kc = kc;
    this.#conn = {
      server: cluster.server.replace(/\/+$/, ""),
      namespace: ctx.namespace?.trim() || "default",
      credentials: `${describeCredentials(kc.getCurrentUser())}, context ${
        JSON.stringify(ctxName)
      }${where}`,
    };
    return this.#conn;
  }

  /** Headers and a transport for the next request (credentials may rotate). */
  #prepare(): Promise<{ transport: Transport; headers: Record<string, string> }> {
    const p = this.#prepLock.then(() => this.#prepareNow());
    this.#prepLock = p.catch(() => {});
    return p;
  }

  async #prepareNow(): Promise<{ transport: Transport; headers: Record<string, string> }> {
    await this.connection();
    const kc = this.#kc!;
    const opts: HttpsOptions = {};
    try {
      const k = kc as unknown as { applyOptions?(o: HttpsOptions): Promise<void> };
      if (typeof k.applyOptions === "function") await k.applyOptions(opts);
      else {
        await (kc as unknown as { applyToHTTPSOptions(o: HttpsOptions): Promise<void> })
          .applyToHTTPSOptions(opts);
      }
    } catch (e) {
      throw new KubeError("credentials", `getting credentials: ${firstLine(e)}`);
    }
    const headers: Record<string, string> = { accept: "application/json", "user-agent": "waitcmd" };
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k] = String(v).trim();
    if (opts.auth && !headers.Authorization) headers.Authorization = `Basic ${btoa(opts.auth)}`;
    const cluster = kc.getCurrentCluster()!;
    const ca = text(opts.ca);
    const cert = text(opts.cert);
    const key = text(opts.key);
    const node = cluster.skipTLSVerify || !!cluster.tlsServerName;
    const tkey = JSON.stringify([node, ca, cert, key, cluster.proxyUrl]);
    if (this.#transport?.key !== tkey) {
      this.#transport?.close();
      this.#transport = node
        ? nodeTransport(tkey, opts)
        : fetchTransport(tkey, { ca, cert, key, proxy: cluster.proxyUrl });
    }
    return { transport: this.#transport, headers };
  }

  /** Starts a GET; network failures become `KubeError("network")`, 401/403 `KubeError("auth")`. */
  async #send(path: string, signal: AbortSignal, accept?: string): Promise<RawResponse> {
    const { transport, headers } = await this.#prepare();
    if (accept) headers.accept = accept;
    const url = this.#conn!.server + path;
    let r: RawResponse;
    try {
      r = await transport.get(url, headers, signal);
    } catch (e) {
      if (signal.aborted) throw signal.reason ?? e;
      throw new KubeError("network", `${this.#conn!.server}: ${describeRequestError(e)}`);
    }
    if (r.status === 401 || r.status === 403) {
      const body = await readAll(r.body, signal).catch(() => "");
      const msg = statusMessage(body);
      const what = r.status === 401
        ? `credentials refused (${statusText(401)})`
        : `access forbidden (${statusText(403)}): ${msg}`;
      throw new KubeError(
        "auth",
        `${what}; ${this.#conn!.credentials}; server ${this.#conn!.server}`,
        r.status,
      );
    }
    return r;
  }

  /** GET and read the whole answer; statuses other than 401/403 are returned, not thrown. */
  async get(path: string, signal: AbortSignal, accept?: string): Promise<JsonResponse> {
    const r = await this.#send(path, signal, accept);
    let body: string;
    try {
      body = await readAll(r.body, signal);
    } catch (e) {
      if (signal.aborted) throw signal.reason ?? e;
      throw new KubeError("network", `reading the answer: ${describeRequestError(e)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    return { status: r.status, json, text: body };
  }

  /** GET that must answer 2xx with JSON; else a `KubeError("http")`. */
  async getJson(path: string, signal: AbortSignal, accept?: string): Promise<unknown> {
    const r = await this.get(path, signal, accept);
    if (r.status < 200 || r.status > 299 || r.json === undefined) {
      throw new KubeError("http", `GET ${path}: ${httpProblem(r)}`, r.status);
    }
    return r.json;
  }

  /** Every resource type the server serves (cached; `refresh` fetches again). */
  discover(signal: AbortSignal, refresh = false): Promise<Discovery> {
    if (refresh || !this.#discovery) {
      const p = this.#fetchDiscovery(signal);
      this.#discovery = p;
      p.catch(() => {
        if (this.#discovery === p) this.#discovery = undefined;
      });
    }
    return this.#discovery;
  }

  async #fetchDiscovery(signal: AbortSignal): Promise<Discovery> {
    const [core, groups] = await Promise.all([
      this.getJson("/api", signal, DISCOVERY_ACCEPT),
      this.getJson("/apis", signal, DISCOVERY_ACCEPT),
    ]);
    const resources: ApiResource[] = [];
    for (const [doc, isCore] of [[core, true], [groups, false]] as const) {
      const d = doc as { kind?: string };
      if (d.kind === "APIGroupDiscoveryList") {
        resources.push(...fromAggregated(doc, isCore));
      } else {
        resources.push(...await this.#legacyDiscovery(doc, isCore, signal));
      }
    }
    return { resources: dedupe(resources), fetchedAt: Date.now() };
  }

  async #legacyDiscovery(doc: unknown, isCore: boolean, signal: AbortSignal) {
    const versions: { group: string; groupVersion: string }[] = [];
    if (isCore) {
      for (const v of (doc as { versions?: string[] }).versions ?? []) {
        versions.push({ group: "", groupVersion: v });
      }
    } else {
      for (const g of (doc as { groups?: LegacyGroup[] }).groups ?? []) {
        const preferred = g.preferredVersion?.groupVersion;
        const all = (g.versions ?? []).map((v) => v.groupVersion);
        const ordered = preferred ? [preferred, ...all.filter((v) => v !== preferred)] : all;
        for (const gv of ordered) versions.push({ group: g.name, groupVersion: gv });
      }
    }
    const lists = await Promise.all(versions.map(async (v) => {
      const base = v.group === "" ? `/api/${v.groupVersion}` : `/apis/${v.groupVersion}`;
      try {
        return { v, list: await this.getJson(base, signal) as LegacyResourceList };
      } catch (e) {
        if (e instanceof KubeError && e.kind === "http") return { v, list: { resources: [] } };
        throw e;
      }
    }));
    const out: ApiResource[] = [];
    for (const { v, list } of lists) {
      const version = v.groupVersion.includes("/")
        ? v.groupVersion.slice(v.groupVersion.indexOf("/") + 1)
        : v.groupVersion;
      for (const r of list.resources ?? []) {
        if (!r.name || r.name.includes("/")) continue;
        out.push({
          group: v.group,
          version,
          plural: r.name,
          singular: r.singularName || r.kind.toLowerCase(),
          kind: r.kind,
          namespaced: !!r.namespaced,
          shortNames: r.shortNames ?? [],
          verbs: r.verbs ?? [],
        });
      }
    }
    return out;
  }

  /**
   * Yields every event of a watch on `path` (a collection) from
   * `resourceVersion` until the stream ends; throws `KubeError` on failure and
   * `KubeError("http", ..., 410)` when the version is too old.
   */
  async *watch(
    path: string,
    query: Record<string, string>,
    signal: AbortSignal,
  ): AsyncGenerator<WatchEvent> {
    const q = new URLSearchParams({ ...query, watch: "1", allowWatchBookmarks: "true" });
    const r = await this.#send(`${path}?${q}`, signal);
    if (r.status !== 200) {
      const body = await readAll(r.body, signal).catch(() => "");
      throw new KubeError(
        "http",
        `watch ${path}: ${httpProblem({ status: r.status, text: body })}`,
        r.status,
      );
    }
    if (!r.body) return;
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    const stop = () => reader.cancel().catch(() => {});
    signal.addEventListener("abort", stop, { once: true });
    if (signal.aborted) stop();
    let buf = "";
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          let ev: WatchEvent;
          try {
            ev = JSON.parse(line) as WatchEvent;
          } catch {
            continue;
          }
          if (ev.type === "ERROR") {
            const st = ev.object as { code?: number; message?: string };
            throw new KubeError(
              "http",
              `watch ${path}: ${st.message ?? "error event"}`,
              st.code,
            );
          }
          yield ev;
        }
      }
    } catch (e) {
      if (signal.aborted || e instanceof KubeError) throw e;
      throw new KubeError("network", `watch ${path}: ${describeRequestError(e)}`);
    } finally {
      signal.removeEventListener("abort", stop);
      reader.cancel().catch(() => {});
    }
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.#transport?.close();
    this.#transport = undefined;
  }
}

interface LegacyGroup {
  name: string;
  preferredVersion?: { groupVersion: string };
  versions?: { groupVersion: string }[];
}

interface LegacyResourceList {
  resources?: {
    name: string;
    singularName?: string;
    kind: string;
    namespaced?: boolean;
    shortNames?: string[];
    verbs?: string[];
  }[];
}

interface AggregatedList {
  items?: {
    metadata?: { name?: string };
    versions?: {
      version: string;
      resources?: {
        resource: string;
        singularResource?: string;
        responseKind?: { kind?: string };
        scope?: string;
        shortNames?: string[];
        verbs?: string[];
      }[];
    }[];
  }[];
}

/** Resources of an aggregated discovery document (versions in the server's order of preference). */
export function fromAggregated(doc: unknown, isCore: boolean): ApiResource[] {
  const out: ApiResource[] = [];
  for (const g of (doc as AggregatedList).items ?? []) {
    const group = isCore ? "" : g.metadata?.name ?? "";
    for (const v of g.versions ?? []) {
      for (const r of v.resources ?? []) {
        if (!r.resource || r.resource.includes("/")) continue;
        const kind = r.responseKind?.kind ?? "";
        out.push({
          group,
          version: v.version,
          plural: r.resource,
          singular: r.singularResource || kind.toLowerCase(),
          kind,
          namespaced: r.scope === "Namespaced",
          shortNames: r.shortNames ?? [],
          verbs: r.verbs ?? [],
        });
      }
    }
  }
  return out;
}

/** Keeps the first (preferred) version of each group's resource. */
function dedupe(list: ApiResource[]): ApiResource[] {
  const seen = new Set<string>();
  return list.filter((r) => {
    const k = `${r.group}/${r.plural}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * Finds the resource a user's word means, as kubectl does: a plural, singular,
 * short name or kind (case-insensitive), optionally qualified by its group
 * (`deployments.apps`) or version and group (`deployment.v1.apps`). The core
 * group wins over others; then the server's order.
 */
export function resolveResource(
  resources: readonly ApiResource[],
  word: string,
): ApiResource | undefined {
  const w = word.toLowerCase();
  const matches = (r: ApiResource, name: string) =>
    r.plural === name || r.singular === name || r.shortNames.includes(name) ||
    r.kind.toLowerCase() === name;
  const exact = resources.find((r) => matches(r, w));
  if (exact) return exact;
  const dot = w.indexOf(".");
  if (dot < 0) return undefined;
  const name = w.slice(0, dot);
  const rest = w.slice(dot + 1);
  const byGroup = resources.find((r) => r.group === rest && matches(r, name));
  if (byGroup) return byGroup;
  const dot2 = rest.indexOf(".");
  if (dot2 < 0) return undefined;
  const version = rest.slice(0, dot2);
  const group = rest.slice(dot2 + 1);
  return resources.find((r) => r.group === group && r.version === version && matches(r, name));
}

/** The REST path of a resource's collection (`/apis/apps/v1/namespaces/ns/deployments`). */
export function collectionPath(r: ApiResource, namespace: string): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return r.namespaced
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`
    : `${base}/${r.plural}`;
}

function mergeFiles(k8s: KubeModule, kc: KubeConfigLike, files: string[]): void {
  const clusters: KcCluster[] = [];
  const users: KcUser[] = [];
  const contexts: KcContext[] = [];
  let current = "";
  for (const f of files) {
    const one = new k8s.KubeConfig();
    try {
      one.loadFromFile(f);
    } catch (e) {
      throw new KubeError("config", `kubeconfig ${f}: ${firstLine(e)}`);
    }
    // kubectl's rule: the first file to define a name wins.
    for (const c of one.clusters ?? []) {
      if (!clusters.some((x) => x.name === c.name)) clusters.push(c);
    }
    for (const u of one.users ?? []) if (!users.some((x) => x.name === u.name)) users.push(u);
    for (const c of one.contexts ?? []) {
      if (!contexts.some((x) => x.name === c.name)) contexts.push(c);
    }
    current ||= one.currentContext ?? "";
  }
  kc.loadFromOptions({ clusters, users, contexts, currentContext: current });
}

function firstLine(e: unknown): string {
  const t = describeError(e).trim().split("\n")[0] ?? "";
  return t.length > 200 ? t.slice(0, 200) + "..." : t;
}

/** `404 Not Found: deployments.apps "web" not found`. */
export function httpProblem(r: { status: number; text: string }): string {
  const msg = statusMessage(r.text);
  return msg ? `${statusText(r.status)}: ${msg}` : statusText(r.status);
}

async function readAll(
  body: ReadableStream<Uint8Array> | null,
  signal: AbortSignal,
): Promise<string> {
  if (!body) return "";
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  let out = "";
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return out;
      out += value;
    }
  } finally {
    signal.removeEventListener("abort", stop);
  }
}
