/**
 * container's transport: dockerode's connection to the engine (socket,
 * TLS) finds and inspects the target's containers and follows the engine's
 * events stream. Imported with the probe module, before the run's clock
 * starts (docs/contract.md §2).
 *
 * Every answer is read by us with a cap, not by dockerode (which keeps a
 * whole body in memory, whatever its size): at most `ANSWER_MAX_BYTES` of
 * an answer, `EVENT_LINE_MAX_BYTES` of an event line (docs/contract.md §9,
 * Limits).
 *
 * @module
 */

import Docker from "dockerode";
import type { IncomingMessage } from "node:http";
import { onAbort } from "../../engine/abort.ts";
import type { Clock } from "../../engine/clock.ts";
import { describeError, FatalError, withHint } from "../../engine/errors.ts";
import type { WatchContext } from "../../engine/types.ts";
import { missingSocketHint } from "../_common/hints.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import { readCapped } from "../_common/stream.ts";
import type { Engine } from "./dockerhost.ts";
import type { ContainerState, Selection } from "./judge.ts";
import { BoundedLines } from "./lines.ts";

/**
 * Longest answer of the engine read (an inspect, a list: a few KiB each);
 * a longer one is a pending error.
 */
export const ANSWER_MAX_BYTES = 4 * 1024 * 1024;
/**
 * Longest line of the events stream read (an event is under 1 KiB); at a
 * longer one the watcher wakes an attempt, leaves the stream, and connects
 * again after the longest pause.
 */
export const EVENT_LINE_MAX_BYTES = 1024 * 1024;

/** Label Compose puts on a service's containers. */
export const COMPOSE_SERVICE = "com.docker.compose.service";
/** Label Compose puts on a project's containers. */
export const COMPOSE_PROJECT = "com.docker.compose.project";
const COMPOSE_ONEOFF = "com.docker.compose.oneoff";

/** The parts of `docker inspect` a check reads. */
interface InspectInfo {
  Id: string;
  Name: string;
  State?: { Status?: string; ExitCode?: number; Pid?: number; Health?: { Status?: string } };
}

interface ListedContainer {
  Id: string;
  Labels?: Record<string, string>;
}

/** What docker-modem's `dial` takes (the parts used here). */
interface DialOptions {
  /** Ends with `?` when `options` are its query. */
  path: string;
  method: "GET";
  options: Record<string, unknown>;
  /** `true` for the statuses whose answer is handed over as it is (a stream). */
  statusCodes: Record<number, true>;
  isStream: true;
  abortSignal: AbortSignal;
}

/** dockerode's connection to the engine: docker-modem. */
interface Modem {
  dial(options: DialOptions, callback: (err: unknown, res: unknown) => void): void;
}

/** A client and the engine's address as shown in errors (the default socket resolved). */
interface Connection {
  readonly modem: Modem;
  readonly display: string;
}

/** An answer of the engine other than 200; `message` is the engine's (described), or the status. */
class ApiError extends Error {
  override name = "ApiError";
  constructor(readonly statusCode: number, message: string) {
    super(message);
  }
}

/** An answer that cannot be used (too long, not JSON); the message says so in full. */
class BadAnswer extends Error {
  override name = "BadAnswer";
}

/**
 * Every HTTP status: docker-modem hands over each answer unread, so that
 * none, an error's included, is read whole into memory.
 */
const EVERY_STATUS: Record<number, true> = Object.fromEntries(
  Array.from({ length: 500 }, (_, i) => [i + 100, true] as const),
);

/** Sends `GET path` with `query`; resolves to the answer, its body unread. */
function get(
  modem: Modem,
  path: string,
  query: Record<string, unknown>,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    modem.dial({
      path: `${path}?`,
      method: "GET",
      options: query,
      statusCodes: EVERY_STATUS,
      isStream: true,
      abortSignal: signal,
    }, (err, res) => err ? reject(err) : resolve(res as IncomingMessage));
  });
}

/**
 * Reads an answer of at most `ANSWER_MAX_BYTES` as JSON. Throws an
 * `ApiError` for a status other than 200, a `BadAnswer` for a longer answer
 * or one that is not JSON.
 */
async function readJson(res: IncomingMessage, what: string, signal: AbortSignal): Promise<unknown> {
  const off = onAbort(signal, () => res.destroy(new Error("aborted")));
  let text: string;
  try {
    const { bytes, truncated } = await readCapped(
      res as unknown as AsyncIterable<Uint8Array>,
      ANSWER_MAX_BYTES,
      { signal },
    );
    if (truncated) {
      throw new BadAnswer(
        `docker engine: the answer to ${what} is larger than ${ANSWER_MAX_BYTES >> 20} MiB`,
      );
    }
    text = new TextDecoder().decode(bytes);
  } finally {
    off();
    res.destroy();
  }
  const status = res.statusCode ?? 0;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (status !== 200) throw new ApiError(status, `HTTP ${status}`);
    throw new BadAnswer(`docker engine: the answer to ${what} is not JSON`);
  }
  if (status !== 200) {
    const message = (json as { message?: unknown } | null)?.message;
    throw new ApiError(
      status,
      typeof message === "string" ? describeError(message) : `HTTP ${status}`,
    );
  }
  return json;
}

async function inspect(modem: Modem, id: string, signal: AbortSignal): Promise<InspectInfo> {
  const what = `inspect ${id}`;
  const path = `/containers/${encodeURIComponent(id)}/json`;
  const i = await readJson(await get(modem, path, {}, signal), what, signal) as InspectInfo;
  if (typeof i?.Id !== "string" || typeof i.Name !== "string") {
    throw new BadAnswer(`docker engine: the answer to ${what} is not a container`);
  }
  return i;
}

/** Whether `e` is the engine's 404 (no such container). */
function notFound(e: unknown): boolean {
  return e instanceof ApiError && e.statusCode === 404;
}

/** What to do about an engine that got no request (docs/contract.md §6, hints). */
function engineHint(e: unknown, display: string): string | undefined {
  switch ((e as { code?: unknown } | null)?.code) {
    case "ENOENT":
      return `${missingSocketHint(display.replace(/^unix:\/\//, ""), "the Docker Engine")} ` +
        "(set DOCKER_HOST)";
    case "EACCES":
      return "add this user to the docker group, or run as root";
  }
  return undefined;
}

/** A request that got no answer, as a short text: `no such socket`, `connection refused`. */
function requestError(e: unknown): string {
  switch ((e as { code?: unknown } | null)?.code) {
    case "ENOENT":
      return "no such socket";
    case "ECONNREFUSED":
      return "connection refused";
    case "EACCES":
      return "permission denied";
    case "ETIMEDOUT":
      return "connection timed out";
  }
  return describeError(e);
}

function fromInspect(i: InspectInfo): ContainerState {
  return {
    name: i.Name.replace(/^\//, ""),
    id: i.Id,
    status: i.State?.Status ?? "unknown",
    health: i.State?.Health?.Status ?? "none",
    exitCode: i.State?.ExitCode,
    pid: i.State?.Pid ?? 0,
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
  return { modem: (new Docker(opts) as unknown as { modem: Modem }).modem, display };
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
      return await this.#find(conn.modem, signal);
    } catch (e) {
      if (signal.aborted) throw new Error("aborted");
      if (e instanceof NotFound || e instanceof BadAnswer) throw e;
      if (e instanceof ApiError) throw new Error(`docker engine: ${e.message}`);
      const error = new Error(
        `cannot reach the Docker engine at ${conn.display}: ${requestError(e)}`,
      );
      throw withHint(error, engineHint(e, conn.display));
    }
  }

  async #find(
    modem: Modem,
    signal: AbortSignal,
  ): Promise<{ found: ContainerState[]; sel: Selection }> {
    const t = this.#target;
    let prefixMatch: ContainerState | undefined;
    if (this.project === undefined) {
      try {
        const c = fromInspect(await inspect(modem, t, signal));
        // Docker also matches id prefixes: a service "db" must not become the container "db3f...".
        if (c.name === t || c.id === t) return { found: [c], sel: { by: "container" } };
        prefixMatch = c;
      } catch (e) {
        if (!notFound(e)) throw e;
      }
    }
    const labels = [`${COMPOSE_SERVICE}=${t}`];
    if (this.project !== undefined) labels.push(`${COMPOSE_PROJECT}=${this.project}`);
    const list = await get(
      modem,
      "/containers/json",
      { all: true, filters: { label: labels } },
      signal,
    );
    const listed = await readJson(list, "list containers", signal);
    if (!Array.isArray(listed)) {
      throw new BadAnswer("docker engine: the answer to list containers is not a list");
    }
    const found: ContainerState[] = [];
    for (const c of listed as ListedContainer[]) {
      if (typeof c?.Id !== "string" || c.Labels?.[COMPOSE_ONEOFF] === "True") continue;
      try {
        found.push(fromInspect(await inspect(modem, c.Id, signal)));
      } catch (e) {
        if (!notFound(e)) throw e; // Removed meanwhile: gone.
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
      let stream: IncomingMessage | undefined;
      try {
        const { modem } = await this.#conn.get(signal);
        stream = await get(modem, "/events", {
          filters: { type: ["container"] },
          ...(since !== undefined ? { since } : {}),
        }, signal);
        // An error's answer is not read: the watcher only retries.
        if (stream.statusCode !== 200) throw new Error(`HTTP ${stream.statusCode}`);
      } catch {
        stream?.destroy();
        if (signal.aborted) return;
        await this.clock.sleep(pauseMs, signal);
        pauseMs = Math.min(pauseMs * 2, PAUSE_MAX_MS);
        continue;
      }
      const s = stream;
      const off = onAbort(signal, () => s.destroy());
      const lines = new BoundedLines(EVENT_LINE_MAX_BYTES);
      try {
        // Something may have happened while the stream was down.
        if (connections++ > 0) yield;
        pauseMs = PAUSE_MIN_MS;
        for await (const chunk of s as AsyncIterable<Uint8Array | string>) {
          const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
          let hit = false;
          for (const line of lines.push(bytes)) {
            if (this.#relevant(line.trim(), (t) => (since = t))) hit = true;
          }
          // An event too long to read may be the target's: look, and leave the stream.
          if (hit || lines.dropped > 0) yield;
          if (signal.aborted || lines.dropped > 0) break;
        }
      } catch {
        // The stream broke (engine restarted): reconnect below.
      } finally {
        off();
        s.destroy();
      }
      if (signal.aborted) return;
      await this.clock.sleep(lines.dropped > 0 ? PAUSE_MAX_MS : pauseMs, signal);
    }
  }

  #relevant(line: string, seen: (time: number) => void): boolean {
    let ev: {
      Type?: string;
      Action?: string;
      time?: number;
      Actor?: { ID?: string; Attributes?: Record<string, string> };
    };
    if (!line) return false;
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
