/**
 * container (alias docker): a Docker container, or every container of a
 * Compose service, has a status (and a health).
 *
 * Talks to the engine with dockerode (imported lazily) at DOCKER_HOST, else
 * the default socket. The engine's events stream asks for an attempt as soon
 * as a matching container is created, started, stopped or changes health.
 *
 * @module
 */

import { realClock } from "../engine/clock.ts";
import type { ConditionKind, KindInput, ProbeResult, WatchContext } from "../engine/types.ts";
import { describeError } from "./_net.ts";

/** Label Compose puts on a service's containers. */
export const COMPOSE_SERVICE = "com.docker.compose.service";
/** Label Compose puts on a project's containers. */
export const COMPOSE_PROJECT = "com.docker.compose.project";
const COMPOSE_ONEOFF = "com.docker.compose.oneoff";

/** Values of `--status` (Docker's State.Status). */
export const STATUSES: readonly string[] = [
  "created",
  "running",
  "paused",
  "restarting",
  "exited",
  "dead",
];
/** Values of `--health`; `none` means the container has no healthcheck. */
export const HEALTHS: readonly string[] = ["healthy", "unhealthy", "starting", "none"];

/** What one container looks like to a check. */
export interface ContainerState {
  /** Name without the leading slash. */
  readonly name: string;
  readonly id: string;
  /** created, running, paused, restarting, removing, exited, dead. */
  readonly status: string;
  /** healthy, unhealthy, starting, or none without a healthcheck. */
  readonly health: string;
  readonly exitCode: number | undefined;
}

/** What the condition asks for. */
export interface ContainerWant {
  readonly status: string;
  /** Undefined: health is not checked. */
  readonly health: string | undefined;
}

/** How the target was found. */
export type Selection =
  | { readonly by: "container" }
  | { readonly by: "service"; readonly service: string };

/** `running, healthy`; `exited (exit code 1)`; the health only when there is a healthcheck. */
export function describeContainer(c: ContainerState): string {
  const code = (c.status === "exited" || c.status === "dead") && c.exitCode !== undefined
    ? ` (exit code ${c.exitCode})`
    : "";
  // Docker keeps the last health of a stopped container; it only means something while it runs.
  const live = c.status === "running" || c.status === "paused" || c.status === "restarting";
  const health = c.health !== "none" && live ? `, ${c.health}` : "";
  return `${c.status}${code}${health}`;
}

/** `running`, `running, healthy`, `running, no healthcheck`. */
function wantText(want: ContainerWant): string {
  if (want.health === undefined) return want.status;
  return `${want.status}, ${want.health === "none" ? "no healthcheck" : want.health}`;
}

function holds(c: ContainerState, want: ContainerWant): boolean {
  return c.status === want.status && (want.health === undefined || c.health === want.health);
}

/** Decides an attempt from the containers found (all of them must match). */
export function judgeContainers(
  found: readonly ContainerState[],
  want: ContainerWant,
  sel: Selection,
): ProbeResult {
  if (sel.by === "container" || found.length === 1) {
    const c = found[0]!;
    const of = sel.by === "service" ? ` (service ${sel.service})` : "";
    const text = `container ${c.name} ${describeContainer(c)}${of}`;
    return holds(c, want)
      ? { status: "satisfied", detail: text }
      : { status: "pending", error: `${text}; want ${wantText(want)}` };
  }
  const ok = found.filter((c) => holds(c, want));
  const shown = wantText(want);
  if (ok.length === found.length) {
    return {
      status: "satisfied",
      detail: `service ${sel.service}: ${found.length} containers ${shown}`,
    };
  }
  const bad = found.filter((c) => !holds(c, want));
  const first = bad[0]!;
  const more = bad.length > 1 ? ` (and ${bad.length - 1} more)` : "";
  return {
    status: "pending",
    error: `service ${sel.service}: ${ok.length}/${found.length} containers ${shown}; ` +
      `${first.name} ${describeContainer(first)}${more}`,
  };
}

/** How to reach the engine: dockerode options and the address shown in errors. */
export interface Engine {
  /** `unix:///var/run/docker.sock`, `tcp://127.0.0.1:2375`. */
  readonly display: string;
  readonly socketPath?: string;
  readonly host?: string;
  readonly port?: string;
  readonly protocol?: "http" | "https";
  /** DOCKER_CERT_PATH, for https. */
  readonly certPath?: string;
  /** HOME, for the default socket's ~/.docker/run/docker.sock. */
  readonly home?: string;
}

/** The engine from DOCKER_HOST (unix://, npipe://, tcp://), else the default socket; or an error text. */
export function engineFromEnv(env: Readonly<Record<string, string>>): Engine | { error: string } {
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
  return {
    error: scheme
      ? `DOCKER_HOST: ${scheme}:// is not supported; use unix://PATH or tcp://HOST:PORT`
      : `DOCKER_HOST: expected unix://PATH or tcp://HOST:PORT, got ${JSON.stringify(host)}`,
  };
}

// --- dockerode (imported lazily) -----------------------------------------

/** The parts of `docker inspect` a check reads. */
interface InspectInfo {
  Id: string;
  Name: string;
  State?: { Status?: string; ExitCode?: number; Health?: { Status?: string } };
}

interface ListedContainer {
  Id: string;
  Names?: string[];
  Labels?: Record<string, string>;
}

interface EventStream extends AsyncIterable<Uint8Array | string> {
  destroy(): void;
}

interface DockerClient {
  getContainer(id: string): { inspect(opts: { abortSignal?: AbortSignal }): Promise<InspectInfo> };
  listContainers(opts: {
    all: boolean;
    filters: Record<string, string[]>;
    abortSignal?: AbortSignal;
  }): Promise<ListedContainer[]>;
  getEvents(opts: {
    filters: Record<string, string[]>;
    since?: number;
    abortSignal?: AbortSignal;
  }): Promise<EventStream>;
}

interface DockerError {
  statusCode?: number;
  code?: string;
  json?: { message?: string } | null;
  message?: string;
}

function asDockerError(e: unknown): DockerError {
  return typeof e === "object" && e !== null ? e as DockerError : { message: String(e) };
}

/** A request error as a short text: `no such file or directory`, `connection refused`. */
function requestError(e: unknown): string {
  const err = asDockerError(e);
  switch (err.code) {
    case "ENOENT":
      return "no such socket";
    case "ECONNREFUSED":
      return "connection refused";
    case "EACCES":
      return "permission denied";
    case "ETIMEDOUT":
      return "connection timed out";
  }
  if (err.json?.message) return describeError(err.json.message);
  return describeError(e);
}

/** Whether the request never got an HTTP answer (the engine is unreachable). */
function unreachable(e: unknown): boolean {
  return asDockerError(e).statusCode === undefined;
}

function fromInspect(i: InspectInfo): ContainerState {
  return {
    name: i.Name.replace(/^\//, ""),
    id: i.Id,
    status: i.State?.Status ?? "unknown",
    health: i.State?.Health?.Status ?? "none",
    exitCode: i.State?.ExitCode,
  };
}

const NAME = /^\/?[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Finds and inspects the target's containers. */
class ContainerClient {
  #docker: Promise<DockerClient> | undefined;
  /** The engine's address as shown in errors, once the default socket is resolved. */
  #display: string;

  constructor(
    readonly target: string,
    readonly project: string | undefined,
    readonly engine: Engine,
  ) {
    this.#display = engine.display;
  }

  docker(): Promise<DockerClient> {
    this.#docker ??= (async () => {
      const { default: Docker } = await import("dockerode");
      const e = this.engine;
      let opts: Record<string, unknown>;
      if (e.socketPath !== undefined) {
        let socketPath = e.socketPath;
        if (socketPath === "") {
          // Like the docker CLI: a rootless/Desktop socket in ~/.docker/run first.
          const user = e.home ? `${e.home}/.docker/run/docker.sock` : "";
          socketPath = user && (await Deno.stat(user).then(() => true, () => false))
            ? user
            : "/var/run/docker.sock";
          this.#display = `unix://${socketPath}`;
        }
        opts = { socketPath };
      } else {
        opts = { host: e.host, port: e.port, protocol: e.protocol };
        if (e.certPath) {
          const read = (f: string) => Deno.readTextFile(`${e.certPath}/${f}`);
          opts = {
            ...opts,
            ca: await read("ca.pem"),
            cert: await read("cert.pem"),
            key: await read("key.pem"),
          };
        }
      }
      return new Docker(opts) as unknown as DockerClient;
    })();
    this.#docker.catch(() => (this.#docker = undefined));
    return this.#docker;
  }

  /** Whether an event's actor is (one of) the target's containers. */
  concerns(actorId: string, attrs: Record<string, string>): boolean {
    const t = this.target.replace(/^\//, "");
    const service = attrs[COMPOSE_SERVICE] === t &&
      (this.project === undefined || attrs[COMPOSE_PROJECT] === this.project);
    if (this.project !== undefined) return service;
    return service || attrs.name === t || actorId === t ||
      (/^[0-9a-f]+$/.test(t) && actorId.startsWith(t));
  }

  /** The containers the target names, or an error text. */
  async find(
    signal: AbortSignal,
  ): Promise<{ found: ContainerState[]; sel: Selection } | { error: string; fatal?: boolean }> {
    let docker: DockerClient;
    try {
      docker = await this.docker();
    } catch (e) {
      return { error: `cannot set up the Docker client: ${describeError(e)}`, fatal: true };
    }
    const t = this.target.replace(/^\//, "");
    const engineDown = (e: unknown) => ({
      error: `cannot reach the Docker engine at ${this.#display}: ${requestError(e)}`,
    });
    let prefixMatch: ContainerState | undefined;
    try {
      if (this.project === undefined) {
        try {
          const c = fromInspect(await docker.getContainer(t).inspect({ abortSignal: signal }));
          // Docker also matches id prefixes: a service "db" must not become the container "db3f...".
          if (c.name === t || c.id === t) return { found: [c], sel: { by: "container" } };
          prefixMatch = c;
        } catch (e) {
          if (asDockerError(e).statusCode !== 404) throw e;
        }
      }
      const labels = [`${COMPOSE_SERVICE}=${t}`];
      if (this.project !== undefined) labels.push(`${COMPOSE_PROJECT}=${this.project}`);
      const listed = (await docker.listContainers({
        all: true,
        filters: { label: labels },
        abortSignal: signal,
      })).filter((c) => c.Labels?.[COMPOSE_ONEOFF] !== "True");
      const found: ContainerState[] = [];
      for (const c of listed) {
        try {
          found.push(fromInspect(await docker.getContainer(c.Id).inspect({ abortSignal: signal })));
        } catch (e) {
          if (asDockerError(e).statusCode !== 404) throw e; // Removed meanwhile: gone.
        }
      }
      if (found.length) {
        found.sort((a, b) => a.name.localeCompare(b.name));
        return { found, sel: { by: "service", service: t } };
      }
      if (prefixMatch) return { found: [prefixMatch], sel: { by: "container" } };
      return {
        error: this.project === undefined
          ? `no container or compose service named ${JSON.stringify(t)}`
          : `no container of compose service ${JSON.stringify(t)} in project ${
            JSON.stringify(this.project)
          }`,
      };
    } catch (e) {
      if (signal.aborted) return { error: "aborted" };
      if (unreachable(e)) return engineDown(e);
      return { error: `docker engine: ${requestError(e)}` };
    }
  }

  /**
   * Yields on every event of a matching container (create, start, die,
   * health_status, ...; not the exec_* noise of healthchecks). Reconnects
   * with a growing pause when the stream fails; catches up with `since`.
   */
  async *watch({ signal }: WatchContext): AsyncGenerator<void> {
    let since: number | undefined;
    let pauseMs = 250;
    let connections = 0;
    while (!signal.aborted) {
      let stream: EventStream | undefined;
      try {
        const docker = await this.docker();
        stream = await docker.getEvents({
          filters: { type: ["container"] },
          ...(since !== undefined ? { since } : {}),
          abortSignal: signal,
        });
      } catch {
        if (signal.aborted) return;
        await realClock.sleep(pauseMs, signal);
        pauseMs = Math.min(pauseMs * 2, 5000);
        continue;
      }
      const s = stream;
      const stop = () => s.destroy();
      signal.addEventListener("abort", stop, { once: true });
      try {
        // Something may have happened while the stream was down.
        if (connections++ > 0) yield;
        pauseMs = 250;
        let buf = "";
        const dec = new TextDecoder();
        for await (const chunk of s) {
          buf += typeof chunk === "string" ? chunk : dec.decode(chunk, { stream: true });
          let nl: number;
          let hit = false;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line && this.#relevant(line, (t) => (since = t))) hit = true;
          }
          if (hit) yield;
          if (signal.aborted) break;
        }
      } catch {
        // The stream broke (engine restarted): reconnect below.
      } finally {
        signal.removeEventListener("abort", stop);
        s.destroy();
      }
      if (signal.aborted) return;
      await realClock.sleep(pauseMs, signal);
    }
  }

  #relevant(line: string, seen: (time: number) => void): boolean {
    let ev: {
      Type?: string;
      Action?: string;
      time?: number;
      Actor?: { ID?: string; Attributes?: Record<string, string> };
    };
    try {
      ev = JSON.parse(line);
    } catch {
      return false;
    }
    if (typeof ev.time === "number") seen(ev.time);
    if (ev.Type !== "container" || !ev.Action || ev.Action.startsWith("exec_")) return false;
    return this.concerns(ev.Actor?.ID ?? "", ev.Actor?.Attributes ?? {});
  }
}

function wantOf(input: KindInput): ContainerWant {
  const status = input.string("status") ?? "running";
  const health = input.string("health");
  if (health !== undefined && health !== "none" && ["created", "exited", "dead"].includes(status)) {
    input.fail(
      "health",
      `cannot be combined with --status ${status}: health checks only run while a container runs`,
    );
  }
  return { status, health };
}

/** The container kind. */
export const container: ConditionKind = {
  name: "container",
  aliases: ["docker"],
  summary: "a Docker container (or Compose service) is running, healthy, exited, ...",
  description:
    "Asks the Docker Engine at DOCKER_HOST (unix://, tcp://; https with DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH), else the default socket. The target is a container name or id, or a Compose service name (containers labelled com.docker.compose.service; --project narrows to one project, and then only services are looked up); every container of a service must match. Satisfied when the status is --status (default running) and, when --health is given, the healthcheck status is --health (none: the container has no healthcheck). A missing container and an unreachable engine are retried. The engine's events stream triggers an attempt as soon as a matching container changes.",
  target: {
    shape: "required",
    placeholder: "NAME",
    description: "container name or id, or Compose service name",
  },
  flags: [
    {
      name: "status",
      type: "enum",
      values: STATUSES,
      placeholder: "STATUS",
      description:
        "expected status: created, running, paused, restarting, exited or dead (default running)",
    },
    {
      name: "health",
      type: "enum",
      values: HEALTHS,
      placeholder: "HEALTH",
      description: "expected health: healthy, unhealthy, starting or none (default: not checked)",
    },
    {
      name: "project",
      type: "string",
      placeholder: "NAME",
      description: "Compose project the service belongs to",
    },
  ],
  examples: [
    { args: "docker web --health healthy", description: "wait until the container web is healthy" },
    {
      args: "container db --project shop -- guard container db --project shop --health unhealthy",
      description:
        "wait for the Compose service db of project shop; stop at once if it turns unhealthy",
    },
    {
      args: "container migrate --status exited",
      description: "wait until the one-shot container migrate has finished",
    },
  ],
  parse(input) {
    const target = input.target ?? "";
    if (!NAME.test(target)) {
      input.fail(
        undefined,
        `expected a container name, id or compose service name, got ${JSON.stringify(target)}`,
      );
    }
    const project = input.string("project");
    if (project !== undefined && !PROJECT.test(project)) {
      input.fail(
        "project",
        `expected a compose project name like myapp, got ${JSON.stringify(project)}`,
      );
    }
    const want = wantOf(input);
    const engine = engineFromEnv(input.env);
    if ("error" in engine) input.fail(undefined, engine.error);
    const client = new ContainerClient(target, project, engine as Engine);
    return {
      target: target.replace(/^\//, ""),
      async check({ signal }): Promise<ProbeResult> {
        const r = await client.find(signal);
        if ("error" in r) return { status: r.fatal ? "fatal" : "pending", error: r.error };
        return judgeContainers(r.found, want, r.sel);
      },
      watch: (ctx) => client.watch(ctx),
    };
  },
};
