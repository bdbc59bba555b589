/**
 * What `waitcmd doctor` checks for the kinds that depend on this machine
 * (docs/contract.md §1): each check returns undefined when the kind can work
 * here, or the reason it cannot. Checks are quick, read-only and local;
 * kinds name them in their declaration (`doctor`), loaded only by doctor.
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";

type Env = Readonly<Record<string, string>>;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether a Unix socket at `path` accepts a connection. */
async function socketAnswers(path: string): Promise<string | undefined> {
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
    return undefined;
  } catch (e) {
    return describeError(e);
  }
}

/** The Docker engine's socket (DOCKER_HOST or /var/run/docker.sock) accepts connections. */
export async function dockerSocket(env: Env): Promise<string | undefined> {
  const host = env.DOCKER_HOST ?? "unix:///var/run/docker.sock";
  if (!host.startsWith("unix://")) return undefined; // tcp:// engines are checked when used.
  const path = host.slice("unix://".length);
  const why = await socketAnswers(path);
  return why === undefined ? undefined : `Docker socket ${path}: ${why} (set DOCKER_HOST)`;
}

/** A kubeconfig exists (--kubeconfig is per condition; here KUBECONFIG or ~/.kube/config), or we run in a pod. */
export async function kubeconfig(env: Env): Promise<string | undefined> {
  if (
    env.KUBERNETES_SERVICE_HOST &&
    await exists("/var/run/secrets/kubernetes.io/serviceaccount/token")
  ) {
    return undefined;
  }
  const files = (env.KUBECONFIG ?? "").split(":").filter(Boolean);
  const list = files.length > 0 ? files : [`${env.HOME ?? ""}/.kube/config`];
  for (const f of list) {
    if (!(await exists(f))) continue;
    const text = await Deno.readTextFile(f).catch(() => "");
    if (!/current-context:\s*\S/.test(text) && !/^\s*contexts:/m.test(text)) {
      return `kubeconfig ${f} has no context (use --context or set current-context)`;
    }
    return undefined;
  }
  return `no kubeconfig: ${list.join(", ")} not found (set KUBECONFIG or use --kubeconfig)`;
}

/** inotify instances and watches are not exhausted (file, log and glob watch directories). */
export async function inotify(): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return undefined;
  const read = async (p: string) => Number((await Deno.readTextFile(p).catch(() => "")).trim());
  const watches = await read("/proc/sys/fs/inotify/max_user_watches");
  const instances = await read("/proc/sys/fs/inotify/max_user_instances");
  if (watches > 0 && watches < 64) {
    return `fs.inotify.max_user_watches is ${watches}: changes are seen by polling only`;
  }
  if (instances > 0 && instances < 2) {
    return `fs.inotify.max_user_instances is ${instances}: changes are seen by polling only`;
  }
  return undefined;
}

/** The system resolver has a nameserver (dns --resolver wire without --server needs one). */
export async function resolver(): Promise<string | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile("/etc/resolv.conf");
  } catch (e) {
    return `cannot read /etc/resolv.conf: ${describeError(e)} (give dns --server)`;
  }
  return /^\s*nameserver\s+\S+/m.test(text)
    ? undefined
    : "no nameserver in /etc/resolv.conf (give dns --server)";
}

/**
 * Trusted roots for certificate checks (http https://, tls, orch, objstore):
 * Deno carries Mozilla's roots, so only a CA store that was asked for and is
 * missing is a problem: SSL_CERT_FILE naming no file, or
 * DENO_TLS_CA_STORE=system with no system bundle.
 */
export async function caStore(env: Env): Promise<string | undefined> {
  if (env.SSL_CERT_FILE && !(await exists(env.SSL_CERT_FILE))) {
    return `SSL_CERT_FILE ${env.SSL_CERT_FILE} does not exist`;
  }
  if ((env.DENO_TLS_CA_STORE ?? "").split(",").includes("system")) {
    const bundles = [
      "/etc/ssl/certs/ca-certificates.crt",
      "/etc/pki/tls/certs/ca-bundle.crt",
      "/etc/ssl/cert.pem",
    ];
    for (const p of bundles) if (await exists(p)) return undefined;
    return `DENO_TLS_CA_STORE=system but no system CA bundle (${bundles.join(", ")})`;
  }
  return undefined;
}

/** `name` is an executable on PATH. */
export async function onPath(name: string, env: Env): Promise<boolean> {
  for (const dir of (env.PATH ?? "").split(":").filter(Boolean)) {
    try {
      const info = await Deno.stat(`${dir}/${name}`);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** The system `ping` (iputils) that icmp runs is on PATH. */
export async function ping(env: Env): Promise<string | undefined> {
  return (await onPath("ping", env)) ? undefined : "no ping command on PATH (install iputils-ping)";
}
