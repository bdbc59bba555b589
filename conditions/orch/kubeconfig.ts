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
import { type Credentials, describeCredentials, type KcUser, userSecrets } from "./credentials.ts";
import { KubeError } from "./errors.ts";
import { fileType } from "./files.ts";
import { commonJsExports } from "../../engine/commonjs.ts";

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

/**
 * The largest kubeconfig read, and the largest file it names (token file, certificate, key, CA
 * bundle): the cap of files given to flags (docs/contract.md §9).
 */
export const KUBECONFIG_MAX_BYTES = 4 << 20;

/** The parts of client-node's types that are used here. */
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
  loadFromString(config: string): void;
  makePathsAbsolute(rootDirectory: string): void;
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

function text(v: Uint8Array | string | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === "string" ? v : new TextDecoder().decode(v);
}

/** A loaded kubeconfig and the facts of its context. */
export interface Kubeconfig {
  readonly kc: KubeConfigLike;
  readonly conn: Connection;
  /** The credentials of its user that it holds itself (tokens, password, key), to redact. */
  readonly secrets: readonly string[];
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
  return await import("./k8s_lib.ts") as unknown as KubeModule;
});

/**
 * The YAML parser that finds the files a kubeconfig names before client-node reads them
 * ({@linkcode loadKubeconfig}); imported by the probe's `create` too, before the clock starts.
 */
export const yamlLibrary: Memo<typeof import("yaml")> = memoize(async () => {
  return commonJsExports(await import("yaml"));
});

/**
 * Loads the kubeconfig of `source` (the merged files, else the in-cluster
 * config in a pod) and checks its context. Throws `KubeError("missing")` when
 * there is none, `KubeError("config")` when it cannot be read, `KubeError("context")` when the
 * context or its cluster is missing.
 */
export async function loadKubeconfig(source: ConfigSource): Promise<Kubeconfig> {
  const k8s = await kubeClientLibrary.get();
  const kc = new k8s.KubeConfig();
  const { files, from } = kubeconfigFiles(source);
  const existing: string[] = [];
  for (const f of files) {
    // Only a file that is not there is missing; one that cannot be read is the next attempt's.
    if (await Deno.stat(f).then(() => true, (e) => !(e instanceof Deno.errors.NotFound))) {
      existing.push(f);
    }
  }
  const env = source.env;
  if (existing.length === 0) {
    if (from === "default" && env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
      try {
        kc.loadFromCluster();
      } catch (e) {
        throw new KubeError("config", `in-cluster config: ${describeError(e)}`);
      }
    } else {
      throw missingKubeconfig(files, from);
    }
  } else {
    await mergeFiles(k8s, kc, existing);
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
  const user = kc.getCurrentUser();
  const conn = {
    server: cluster.server.replace(/\/+$/, ""),
    namespace: ctx.namespace?.trim() || "default",
    credentials: `${describeCredentials(user)}, context ${JSON.stringify(ctxName)}${where}`,
  };
  return { kc, conn, secrets: userSecrets(user) };
}

/**
 * What the next request sends (credentials may rotate: exec plugins, token
 * files): its headers and TLS material. Throws `KubeError("credentials")`
 * when getting them fails.
 */
export async function requestCredentials(kc: KubeConfigLike): Promise<Credentials> {
  const opts: HttpsOptions = {};
  // client-node reads an auth provider's token file again every minute, synchronously.
  const tokenFile = kc.getCurrentUser()?.authProvider?.config?.tokenFile;
  if (typeof tokenFile === "string" && tokenFile !== "") {
    await checkRegular(tokenFile, `token file ${tokenFile}`);
  }
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
  // client-node's applyOptions leaves basic auth out (only its applyToHTTPSOptions sets it).
  const user = kc.getCurrentUser();
  const basic = opts.auth ??
    (user?.username ? `${user.username}:${user.password ?? ""}` : undefined);
  if (basic && !headers.Authorization) headers.Authorization = `Basic ${btoa(basic)}`;
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

async function mergeFiles(k8s: KubeModule, kc: KubeConfigLike, files: string[]): Promise<void> {
  const clusters: KcCluster[] = [];
  const users: KcUser[] = [];
  const contexts: KcContext[] = [];
  let current = "";
  for (const f of files) {
    const text = await readBounded(f, `kubeconfig ${f}`);
    // client-node reads the files a kubeconfig names synchronously: each is checked first.
    await checkNamedFiles(text, f);
    const one = new k8s.KubeConfig();
    try {
      one.loadFromString(text);
      one.makePathsAbsolute(dirname(f));
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

function dirname(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/**
 * No kubeconfig file exists where the flags and the environment point, outside a cluster: no
 * retry can fix it, so the run ends at once (docs/contract.md §5 orch). The files a kubeconfig
 * names (token files, certificates) are another matter: a sidecar may still be writing them.
 */
function missingKubeconfig(files: readonly string[], from: string): KubeError {
  if (from === "default") {
    return withHint(
      new KubeError(
        "missing",
        files.length
          ? `no kubeconfig: ${files[0]} does not exist (set --kubeconfig or KUBECONFIG)`
          : "no kubeconfig: set --kubeconfig or KUBECONFIG",
      ),
      "point KUBECONFIG or --kubeconfig at the cluster's kubeconfig, or run in a pod with a " +
        "service account",
    );
  }
  const which = files.length > 1 ? "none of these exist" : "no such file";
  return withHint(
    new KubeError("missing", `kubeconfig ${files.join(", ")} (${from}): ${which}`),
    `fix ${from}: it names no kubeconfig file`,
  );
}

/**
 * Throws `KubeError("config")` (pending: the file may be fixed) when `path` exists and is not a
 * regular file of at most {@linkcode KUBECONFIG_MAX_BYTES}: a named pipe without a writer or a
 * device would block a read or never end it (docs/contract.md §5 orch).
 */
async function checkRegular(path: string, what: string): Promise<Deno.FileInfo | undefined> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch {
    return undefined;
  }
  if (!info.isFile) {
    throw new KubeError(
      "config",
      `${what}: not a regular file (${
        fileType(info)
      }); waitcmd reads kubeconfigs and the files they name only from regular files`,
    );
  }
  if (info.size > KUBECONFIG_MAX_BYTES) {
    throw new KubeError("config", `${what}: larger than ${KUBECONFIG_MAX_BYTES >> 20} MiB`);
  }
  return info;
}

/** The text of the regular file `path`, read asynchronously, at most {@linkcode KUBECONFIG_MAX_BYTES}. */
async function readBounded(path: string, what: string): Promise<string> {
  if (!await checkRegular(path, what)) throw new KubeError("config", `${what}: no such file`);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    throw new KubeError("config", `${what}: ${firstLine(e).replace(/: \w+ '.*'$/, "")}`);
  }
  try {
    const buf = new Uint8Array(KUBECONFIG_MAX_BYTES + 1);
    let size = 0;
    while (size < buf.length) {
      const n = await file.read(buf.subarray(size));
      if (n === null) break;
      size += n;
    }
    if (size > KUBECONFIG_MAX_BYTES) {
      throw new KubeError("config", `${what}: larger than ${KUBECONFIG_MAX_BYTES >> 20} MiB`);
    }
    return new TextDecoder().decode(buf.subarray(0, size));
  } finally {
    file.close();
  }
}

/**
 * Checks the files a kubeconfig's text names (token files, client certificates and keys, CA
 * bundles) with {@linkcode checkRegular}, as client-node will resolve them: certificates, keys
 * and CA bundles relative to the kubeconfig's directory, token files as written.
 */
async function checkNamedFiles(text: string, file: string): Promise<void> {
  const { parse } = await yamlLibrary.get();
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return; // client-node reports what is wrong with it
  }
  const dir = dirname(file);
  const paths: [string, string][] = [];
  const at = (v: unknown, key: string, relative: boolean) => {
    if (typeof v !== "object" || v === null) return;
    const p = (v as Record<string, unknown>)[key];
    if (typeof p !== "string" || p === "") return;
    paths.push([key, relative && !p.startsWith("/") ? `${dir}/${p}` : p]);
  };
  const list = (key: string, inner: string) => {
    const l = (doc as Record<string, unknown> | null)?.[key];
    return Array.isArray(l)
      ? l.map((e) =>
        typeof e === "object" && e !== null ? (e as Record<string, unknown>)[inner] : undefined
      )
      : [];
  };
  for (const c of list("clusters", "cluster")) at(c, "certificate-authority", true);
  for (const u of list("users", "user")) {
    at(u, "client-certificate", true);
    at(u, "client-key", true);
    at(u, "token-file", false);
    const provider = (u as Record<string, unknown> | undefined)?.["auth-provider"];
    at((provider as Record<string, unknown> | undefined)?.config, "tokenFile", false);
  }
  for (const [key, path] of paths) await checkRegular(path, `kubeconfig ${file}: ${key} ${path}`);
}
