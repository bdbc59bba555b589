/**
 * A small Kubernetes API client for the orch kind: the kubeconfig and its
 * credentials (`kubeconfig.ts`), requests through the shared transports of
 * `_common/httpx.ts` (Deno's fetch, kept-alive; node:https where a cluster
 * skips verification or names another TLS server), discovery (cached,
 * `discovery.ts`) and watch streams.
 *
 * Nothing here decides whether a condition holds; failures are thrown as
 * {@linkcode KubeError}s that say whether a retry can help.
 *
 * @module
 */

import type { Clock } from "../../engine/clock.ts";
import {
  describeRequestError,
  fetchTransport,
  type HttpReply,
  type HttpTransport,
  nodeTransport,
  RequestError,
  statusLine,
} from "../_common/httpx.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import { type Discovery, fetchDiscovery } from "./discovery.ts";
import { httpProblem, KubeError, statusMessage } from "./errors.ts";
import {
  type ConfigSource,
  type Connection,
  type Kubeconfig,
  loadKubeconfig,
  requestCredentials,
} from "./kubeconfig.ts";

/**
 * The longest answer read (docs/contract.md §9): a list of thousands of objects fits; a server
 * that sends without end is not kept.
 */
const ANSWER_MAX_CHARS = 32 << 20;

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

/** What the next request needs: where, with which headers, through which transport. */
interface Prepared {
  readonly conn: Connection;
  readonly transport: HttpTransport;
  readonly headers: Record<string, string>;
}

/**
 * One client per condition: loads the kubeconfig on first use (and again
 * after a failed load), keeps its HTTP connections across attempts, caches
 * discovery. `close()` releases the connections.
 */
export class KubeClient {
  readonly #clock: Clock;
  readonly #config: Memo<Kubeconfig>;
  readonly #discovery: Memo<Discovery>;
  /** The signal of the call that starts a discovery: it runs as part of that attempt. */
  #discoverySignal: AbortSignal = new AbortController().signal;
  #transport: { readonly key: string; readonly transport: HttpTransport } | undefined;
  /** Serialises credential lookups, so an exec plugin runs once when attempts and the watch start together. */
  #prepLock: Promise<unknown> = Promise.resolve();

  constructor(readonly source: ConfigSource, clock: Clock) {
    this.#clock = clock;
    this.#config = memoize(() => loadKubeconfig(source));
    this.#discovery = memoize(() =>
      fetchDiscovery(
        (path, signal, accept) => this.getJson(path, signal, accept),
        this.#discoverySignal,
        () => this.#clock.now(),
      )
    );
  }

  /**
   * Loads the kubeconfig (once it loads, it is kept) and returns the
   * connection facts; a caller whose `signal` aborts stops waiting.
   */
  async connection(signal?: AbortSignal): Promise<Connection> {
    return (await this.#config.get(signal)).conn;
  }

  /** Headers and a transport for the next request (credentials may rotate). */
  #prepare(): Promise<Prepared> {
    const p = this.#prepLock.then(() => this.#prepareNow());
    this.#prepLock = p.catch(() => {});
    return p;
  }

  async #prepareNow(): Promise<Prepared> {
    const { kc, conn } = await this.#config.get();
    const c = await requestCredentials(kc);
    // fetch cannot skip verification or check another name: node:https does those.
    const node = c.insecure || c.servername !== undefined;
    const key = JSON.stringify([node, c.ca, c.cert, c.key, c.insecure, c.servername, c.proxy]);
    if (this.#transport?.key !== key) {
      this.#transport?.transport.close();
      const transport = node
        ? nodeTransport({
          ca: c.ca,
          cert: c.cert,
          key: c.key,
          insecure: c.insecure,
          servername: c.servername,
          keepAlive: true,
        })
        : fetchTransport({ ca: c.ca, cert: c.cert, key: c.key, proxy: c.proxy });
      this.#transport = { key, transport };
    }
    return { conn, transport: this.#transport.transport, headers: c.headers };
  }

  /** Starts a GET; network failures become `KubeError("network")`, 401/403 `KubeError("auth")`. */
  async #send(path: string, signal: AbortSignal, accept?: string): Promise<HttpReply> {
    const { conn, transport, headers } = await this.#prepare();
    if (accept) headers.accept = accept;
    let r: HttpReply;
    try {
      r = await transport.request({ url: conn.server + path, headers, signal, redirect: "follow" });
    } catch (e) {
      if (signal.aborted) throw signal.reason ?? e;
      const why = e instanceof RequestError ? e.message : describeRequestError(e);
      throw new KubeError("network", `${conn.server}: ${why}`);
    }
    if (r.status === 401 || r.status === 403) {
      const body = await readAll(r, signal).catch(() => "");
      const what = r.status === 401
        ? `credentials refused (${statusLine(401)})`
        : `access forbidden (${statusLine(403)}): ${statusMessage(body)}`;
      throw new KubeError("auth", `${what}; ${conn.credentials}; server ${conn.server}`, r.status);
    }
    return r;
  }

  /** GET and read the whole answer; statuses other than 401/403 are returned, not thrown. */
  async get(path: string, signal: AbortSignal, accept?: string): Promise<JsonResponse> {
    const r = await this.#send(path, signal, accept);
    let body: string;
    try {
      body = await readAll(r, signal);
    } catch (e) {
      if (signal.aborted) throw signal.reason ?? e;
      if (e instanceof KubeError) throw e;
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
    if (refresh) this.#discovery.reset();
    // Read by the making only when this call starts one (`get` makes synchronously).
    this.#discoverySignal = signal;
    return this.#discovery.get(signal);
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
      const body = await readAll(r, signal).catch(() => "");
      throw new KubeError(
        "http",
        `watch ${path}: ${httpProblem({ status: r.status, text: body })}`,
        r.status,
      );
    }
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
            throw new KubeError("http", `watch ${path}: ${st.message ?? "error event"}`, st.code);
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
      r.close();
    }
  }

  /** Closes the kept-alive connections. Idempotent. */
  close(): void {
    this.#transport?.transport.close();
    this.#transport = undefined;
  }
}

/** The whole body of `r` as text; the answer is released after. */
async function readAll(r: HttpReply, signal: AbortSignal): Promise<string> {
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  let out = "";
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return out;
      out += value;
      if (out.length > ANSWER_MAX_CHARS) {
        stop();
        throw new KubeError(
          "http",
          `the answer is longer than ${ANSWER_MAX_CHARS >> 20} Mi characters (not read further)`,
        );
      }
    }
  } finally {
    signal.removeEventListener("abort", stop);
    r.close();
  }
}
