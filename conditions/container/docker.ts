/**
 * container's client: finds and inspects the target's containers (by name,
 * id or Compose service) and follows the engine's events stream, through the
 * requests of engine_api.ts. Imported with the probe module, before the run's
 * clock starts (docs/contract.md §2).
 *
 * An event line is read with a cap of its own, `EVENT_LINE_MAX_BYTES`
 * (docs/contract.md §9, Limits).
 *
 * @module
 */

import type { IncomingMessage } from "node:http";
import { onAbort } from "../../engine/abort.ts";
import type { Clock } from "../../engine/clock.ts";
import { describeError, FatalError, withHint } from "../../engine/errors.ts";
import type { WatchContext } from "../../engine/types.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import type { Engine } from "./dockerhost.ts";
import type { ContainerState, Selection } from "./judge.ts";
import { BoundedLines } from "./lines.ts";
import {
  ApiError,
  BadAnswer,
  connect,
  type Connection,
  engineHint,
  get,
  type Modem,
  notFound,
  readJson,
  requestError,
} from "./engine_api.ts";

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

async function inspect(modem: Modem, id: string, signal: AbortSignal): Promise<InspectInfo> {
  const what = `inspect ${id}`;
  const path = `/containers/${encodeURIComponent(id)}/json`;
  const i = await readJson(await get(modem, path, {}, signal), what, signal) as InspectInfo;
  if (typeof i?.Id !== "string" || typeof i.Name !== "string") {
    throw new BadAnswer(`docker engine: the answer to ${what} is not a container`);
  }
  return i;
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
