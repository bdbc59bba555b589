/**
 * orch's kubeconfig: which files (`--kubeconfig`, KUBECONFIG, ~/.kube/config,
 * else the in-cluster config), merged as kubectl merges them, and the
 * credentials of its context through `@kubernetes/client-node` (imported on
 * first use: exec credential plugins, token files, client certificates).
 *
 * @module
 */

import { describeError, withHint } from "../../engine/errors.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import { KubeError } from "./errors.ts";

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
export interface KcUser {
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

/** The parts of client-node's KubeConfig that are used here. */
export interface KubeConfigLike {
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

/** A loaded kubeconfig and the facts of its context. */
export interface Kubeconfig {
  readonly kc: KubeConfigLike;
  readonly conn: Connection;
}

/** What one request sends: headers (authentication included) and TLS material. */
export interface Credentials {
  readonly headers: Record<string, string>;
  readonly ca: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
  /** The cluster skips certificate verification (`insecure-skip-tls-verify`). */
  readonly insecure: boolean;
  /** The cluster's `tls-server-name`. */
  readonly servername: string | undefined;
  /** The cluster's `proxy-url`. */
  readonly proxy: string | undefined;
}

type KubeModule = { KubeConfig: new () => KubeConfigLike };

/**
 * Imports client-node (once) without letting its Node deprecation warnings
 * reach stderr. The probe's `create` calls it, so that its evaluation (over
 * half a second) happens before the run's clock starts (docs/contract.md §2).
 */
export const kubeClientLibrary: Memo<KubeModule> = memoize(async () => {
  const { default: process } = await import("node:process");
  process.noDeprecation = true;
  return await import("@kubernetes/client-node") as unknown as KubeModule;
});

/**
 * Loads the kubeconfig of `source` (the merged files, else the in-cluster
 * config in a pod) and checks its context. Throws `KubeError("config")` when
 * there is none or it cannot be read, `KubeError("context")` when the context
 * or its cluster is missing.
 */
export async function loadKubeconfig(source: ConfigSource): Promise<Kubeconfig> {
  const k8s = await kubeClientLibrary.get();
  const kc = new k8s.KubeConfig();
  const { files, from } = kubeconfigFiles(source);
  const existing: string[] = [];
  for (const f of files) {
    if (await Deno.stat(f).then(() => true, () => false)) existing.push(f);
  }
  const env = source.env;
  if (existing.length === 0) {
    if (from === "default" && env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
      try {
        kc.loadFromCluster();
      } catch (e) {
        throw new KubeError("config", `in-cluster config: ${describeError(e)}`);
      }
    } else if (from === "default") {
      throw withHint(
        new KubeError(
          "config",
          files.length
            ? `no kubeconfig: ${files[0]} does not exist (set --kubeconfig or KUBECONFIG)`
            : "no kubeconfig: set --kubeconfig or KUBECONFIG",
        ),
        "point KUBECONFIG or --kubeconfig at the cluster's kubeconfig, or run in a pod with a " +
          "service account",
      );
    } else {
      throw withHint(
        new KubeError("config", `kubeconfig ${files.join(", ")} (${from}): no such file`),
        `nothing at ${files.join(", ")} yet: write the kubeconfig there (waiting for it), or ` +
          `fix ${from}`,
      );
    }
  } else {
    mergeFiles(k8s, kc, existing);
  }
  const ctxName = source.context ?? kc.currentContext;
  if (!ctxName) {
    throw new KubeError(
      "context",
      `kubeconfig ${existing.join(", ")} has no current context; pass --context`,
    );
  }
  const ctx = kc.getContextObject(ctxName);
  if (!ctx) {
    const names = kc.contexts.map((c) => c.name);
    throw withHint(
      new KubeError(
        "context",
        `context ${JSON.stringify(ctxName)} is not in the kubeconfig` +
          (names.length ? ` (contexts: ${names.join(", ")})` : ""),
      ),
      names.length
        ? `pass --context with one of: ${names.join(", ")} (kubectl config get-contexts)`
        : "this kubeconfig has no contexts: it is empty, or not the one meant",
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
  const conn = {
    server: cluster.server.replace(/\/+$/, ""),
    namespace: ctx.namespace?.trim() || "default",
    credentials: `${describeCredentials(kc.getCurrentUser())}, context ${
      JSON.stringify(ctxName)
    }${where}`,
  };
  return { kc, conn };
}

/**
 * What the next request sends (credentials may rotate: exec plugins, token
 * files): its headers and TLS material. Throws `KubeError("credentials")`
 * when getting them fails.
 */
export async function requestCredentials(kc: KubeConfigLike): Promise<Credentials> {
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
  return {
    headers,
    ca: text(opts.ca),
    cert: text(opts.cert),
    key: text(opts.key),
    insecure: opts.rejectUnauthorized === false || cluster.skipTLSVerify,
    servername: opts.servername ?? (cluster.tlsServerName || undefined),
    proxy: cluster.proxyUrl || undefined,
  };
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
