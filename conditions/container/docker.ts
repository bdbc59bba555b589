/**
 * container's transport: dockerode finds and inspects the target's
 * containers and follows the engine's events stream. Imported with the probe
 * module, before the run's clock starts (docs/contract.md §2).
 *
 * @module
 */

import Docker from "dockerode";
import type { Clock } from "../../engine/clock.ts";
import { describeError, FatalError } from "../../engine/errors.ts";
import type { WatchContext } from "../../engine/types.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import type { Engine } from "./dockerhost.ts";
import type { ContainerState, Selection } from "./judge.ts";

/** Label Compose puts on a service's containers. */
export const COMPOSE_SERVICE = "com.docker.compose.service";
/** Label Compose puts on a project's containers. */
export const COMPOSE_PROJECT = "com.docker.compose.project";
const COMPOSE_ONEOFF = "com.docker.compose.oneoff";

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

/** A client and the engine's address as shown in errors (the default socket resolved). */
interface Connection {
  readonly docker: DockerClient;
  readonly display: string;
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

/** A request error as a short text: `no such socket`, `connection refused`. */
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

/** Makes the dockerode client for `e`. */
async function connect(e: Engine): Promise<Connection> {
  let display = e.display;
  let opts: Record<string, unknown>;
  if (e.socketPath !== undefined) {
    let socketPath = e.socketPath;
    if (socketPath === "") {
      // Like the docker CLI: a rootless/Desktop socket in ~/.docker/run first.
      const user = e.home ? `${e.home}/.docker/run/docker.sock` : "";
      socketPath = user && (await Deno.stat(user).then(() => true, () => false))
        ? user
        : "/var/run/docker.sock";
      display = `unix://${socketPath}`;
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
  return { docker: new Docker(opts) as unknown as DockerClient, display };
}

/** The target names no container (yet): an ordinary pending attempt. */
class NotFound extends Error {
  override name = "NotFound";
}

/** Initial and longest pause before the watcher reconnects to the events stream. */
const PAUSE_MIN_MS = 250;
const PAUSE_MAX_MS = 5000;

/** Finds and inspects one target's containers; watches the engine's events. */
export class ContainerClient {
  readonly #conn: Memo<Connection>;
  /** The target without a leading slash. */
  readonly #target: string;

  constructor(
    target: string,
    readonly project: string | undefined,
    engine: Engine,
    readonly clock: Clock,
  ) {
    this.#target = target.replace(/^\//, "");
    this.#conn = memoize(() => connect(engine));
  }

  /** Whether an event's actor is (one of) the target's containers. */
  concerns(actorId: string, attrs: Record<string, string>): boolean {
    const t = this.#target;
    const service = attrs[COMPOSE_SERVICE] === t &&
      (this.project === undefined || attrs[COMPOSE_PROJECT] === this.project);
    if (this.project !== undefined) return service;
    return service || attrs.name === t || actorId === t ||
      (/^[0-9a-f]+$/.test(t) && actorId.startsWith(t));
  }

  /**
   * The containers the target names. Throws a `FatalError` when the client
   * cannot be set up, an Error saying what is missing or unreachable otherwise.
   */
  async find(signal: AbortSignal): Promise<{ found: ContainerState[]; sel: Selection }> {
    let conn: Connection;
    try {
      conn = await this.#conn.get(signal);
    } catch (e) {
      if (signal.aborted) throw new Error("aborted");
      throw new FatalError(`cannot set up the Docker client: ${describeError(e)}`);
    }
    try {
      return await this.#find(conn.docker, signal);
    } catch (e) {
      if (signal.aborted) throw new Error("aborted");
      if (e instanceof NotFound) throw e;
      if (unreachable(e)) {
        throw new Error(`cannot reach the Docker engine at ${conn.display}: ${requestError(e)}`);
      }
      throw new Error(`docker engine: ${requestError(e)}`);
    }
  }

  async #find(
    docker: DockerClient,
    signal: AbortSignal,
  ): Promise<{ found: ContainerState[]; sel: Selection }> {
    const t = this.#target;
    let prefixMatch: ContainerState | undefined;
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
    throw new NotFound(
      this.project === undefined
        ? `no container or compose service named ${JSON.stringify(t)}`
        : `no container of compose service ${JSON.stringify(t)} in project ${
          JSON.stringify(this.project)
        }`,
    );
  }

  /**
   * Yields on every event of a matching container (create, start, die,
   * health_status, ...; not the exec_* noise of healthchecks). Reconnects
   * with a growing pause when the stream fails; catches up with `since`.
   */
  async *watch({ signal }: WatchContext): AsyncGenerator<void> {
    let since: number | undefined;
    let pauseMs = PAUSE_MIN_MS;
    let connections = 0;
    while (!signal.aborted) {
      let stream: EventStream | undefined;
      try {
        const { docker } = await this.#conn.get(signal);
        stream = await docker.getEvents({
          filters: { type: ["container"] },
          ...(since !== undefined ? { since } : {}),
          abortSignal: signal,
        });
      } catch {
        if (signal.aborted) return;
        await this.clock.sleep(pauseMs, signal);
        pauseMs = Math.min(pauseMs * 2, PAUSE_MAX_MS);
        continue;
      }
      const s = stream;
      const stop = () => s.destroy();
      signal.addEventListener("abort", stop, { once: true });
      try {
        // Something may have happened while the stream was down.
        if (connections++ > 0) yield;
        pauseMs = PAUSE_MIN_MS;
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
      await this.clock.sleep(pauseMs, signal);
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
