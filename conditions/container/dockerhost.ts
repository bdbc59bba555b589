/**
 * Where the Docker Engine is: DOCKER_HOST read like the docker CLI reads it.
 * Pure, so the kind's parse can turn a bad DOCKER_HOST into a usage error.
 *
 * @module
 */

/** How to reach the engine: dockerode options and the address shown in errors. */
export interface Engine {
  /** `unix:///var/run/docker.sock`, `tcp://127.0.0.1:2375`. */
  readonly display: string;
  /** A unix socket or named pipe; "" is the default socket, resolved when connecting. */
  readonly socketPath?: string;
  readonly host?: string;
  readonly port?: string;
  readonly protocol?: "http" | "https";
  /** DOCKER_CERT_PATH, for https. */
  readonly certPath?: string;
  /** HOME, for the default socket's ~/.docker/run/docker.sock. */
  readonly home?: string;
}

/**
 * The engine from DOCKER_HOST (unix://, npipe://, tcp://), else the default
 * socket. Throws an Error saying what is wrong with DOCKER_HOST.
 */
export function engineFromEnv(env: Readonly<Record<string, string>>): Engine {
  const host = env.DOCKER_HOST ?? "";
  if (host === "") {
    if (Deno.build.os === "windows") {
      return { display: "npipe:////./pipe/docker_engine", socketPath: "//./pipe/docker_engine" };
    }
    return { display: "unix:///var/run/docker.sock", socketPath: "", home: env.HOME };
  }
  if (host.startsWith("unix://")) {
    const path = host.slice("unix://".length);
    if (path === "") {
      return { display: "unix:///var/run/docker.sock", socketPath: "", home: env.HOME };
    }
    return { display: host, socketPath: path };
  }
  if (host.startsWith("npipe://")) {
    return { display: host, socketPath: host.slice("npipe://".length) || "//./pipe/docker_engine" };
  }
  const tcp = /^(?:tcp|http|https):\/\/(\[[0-9A-Fa-f:.]+\]|[^:/\s]+)(?::(\d+))?\/?$/.exec(host) ??
    /^()(\[[0-9A-Fa-f:.]+\]|[^:/\s]+):(\d+)$/.exec(host)?.slice(1);
  if (tcp) {
    const hostname = tcp[1]!.replace(/^\[|\]$/g, "");
    const port = tcp[2] ?? (env.DOCKER_TLS_VERIFY === "1" ? "2376" : "2375");
    const tls = env.DOCKER_TLS_VERIFY === "1" || port === "2376" || host.startsWith("https://");
    return {
      display: host,
      host: hostname,
      port,
      protocol: tls ? "https" : "http",
      certPath: tls ? env.DOCKER_CERT_PATH || undefined : undefined,
    };
  }
  const scheme = /^([a-z]+):\/\//.exec(host)?.[1];
  throw new Error(
    scheme
      ? `DOCKER_HOST: ${scheme}:// is not supported; use unix://PATH or tcp://HOST:PORT`
      : `DOCKER_HOST: expected unix://PATH or tcp://HOST:PORT, got ${JSON.stringify(host)}`,
  );
}
