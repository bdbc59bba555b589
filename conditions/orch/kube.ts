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
import { hintOf, withHint } from "../../engine/errors.ts";
import {
  describeRequestError,
  fetchTransport,
  type HttpReply,
  type HttpTransport,
  nodeTransport,
  RequestError,
} from "../_common/httpx.ts";
import { statusLine } from "../_common/http_status.ts";
import { concatBytes } from "../_common/stream.ts";
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
import { requestSecrets } from "./credentials.ts";

/**
 * The largest API answer read: a get, one page of a list, an event list, one
 * event of a watch (docs/contract.md §9). A larger one is a failed attempt,
 * and memory stays bounded whatever the server sends.
 */
export const ANSWER_MAX_BYTES = 16 << 20;

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

  /** Registers a credential with the run's redactor (docs/contract.md §9). */
  readonly #secret: (value: string) => void;
  /** The credentials already registered. */
  readonly #registered = new Set<string>();

  /**
   * `secret` receives every credential the kubeconfig holds or a plugin hands out, before a
   * request carries it, so that no output can show it (a server may echo it back).
   */
  constructor(readonly source: ConfigSource, clock: Clock, secret?: (value: string) => void) {
    this.#clock = clock;
    this.#secret = secret ?? (() => {});
    this.#config = memoize(async () => {
      const loaded = await loadKubeconfig(source);
      this.#register(loaded.secrets);
      return loaded;
    });
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

  #register(values: readonly string[]): void {
    for (const v of values) {
      if (this.#registered.has(v) || v.length < 3) continue;
      this.#registered.add(v);
      this.#secret(v);
    }
  }

  /**
   * An error answer's text with the credentials masked: the server may echo the request's
   * Authorization header, and the text is cut for errors after this (a cut secret would slip
   * past the run's redactor; docs/contract.md §9).
   */
  #mask(text: string): string {
    let out = text;
    for (const s of [...this.#registered].sort((a, b) => b.length - a.length)) {
      if (out.includes(s)) out = out.split(s).join("***");
    }
    return out;
  }

  async #prepareNow(): Promise<Prepared> {
    const { kc, conn } = await this.#config.get();
    const c = await requestCredentials(kc);
    // Exec plugins and token files hand out new tokens: each is registered before it is sent.
    this.#register(requestSecrets(c));
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
      throw withHint(new KubeError("network", `${conn.server}: ${why}`), hintOf(e));
    }
    if (r.status === 401 || r.status === 403) {
      const body = this.#mask(await readAll(r, signal).catch(() => ""));
      const what = r.status === 401
        ? `credentials refused (${statusLine(401)})`
        : `access forbidden (${statusLine(403)}): ${statusMessage(body)}`;
      const error = new KubeError(
        "auth",
        `${what}; ${conn.credentials}; server ${conn.server}`,
        r.status,
      );
      throw withHint(
        error,
        r.status === 401
          ? "the token or certificate expired or is another cluster's: refresh the kubeconfig"
          : "grant the user get, list and watch on it (check with kubectl auth can-i)",
      );
    }
    return r;
  }

  /**
   * GET and read the whole answer (at most {@linkcode ANSWER_MAX_BYTES}); statuses other than
   * 401/403 are returned, not thrown.
   */
  async get(path: string, signal: AbortSignal, accept?: string): Promise<JsonResponse> {
    const r = await this.#send(path, signal, accept);
    let body: string;
    try {
      body = await readAll(r, signal);
    } catch (e) {
      if (signal.aborted) throw signal.reason ?? e;
      if (e instanceof KubeError) throw new KubeError(e.kind, `GET ${path}: ${e.message}`);
      throw new KubeError("network", `reading the answer: ${describeRequestError(e)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    // Only an error answer's text is ever shown (httpProblem).
    if (r.status < 200 || r.status > 299) body = this.#mask(body);
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
      const body = this.#mask(await readAll(r, signal).catch(() => ""));
      throw new KubeError(
        "http",
        `watch ${path}: ${httpProblem({ status: r.status, text: body })}`,
        r.status,
      );
    }
    try {
      for await (const line of readLines(r, signal)) {
        let ev: WatchEvent;
        try {
          ev = JSON.parse(line) as WatchEvent;
        } catch {
          continue;
        }
        if (ev.type === "ERROR") {
          const st = ev.object as { code?: number; message?: string };
          throw new KubeError("http", st.message ?? "error event", st.code);
        }
        yield ev;
      }
    } catch (e) {
      if (signal.aborted) throw e;
      if (e instanceof KubeError) {
        throw new KubeError(e.kind, `watch ${path}: ${e.message}`, e.status);
      }
      throw new KubeError("network", `watch ${path}: ${describeRequestError(e)}`);
    }
  }

  /** Closes the kept-alive connections. Idempotent. */
  close(): void {
    this.#transport?.transport.close();
    this.#transport = undefined;
  }
}

/**
 * The non-empty lines of `r`'s body (a watch stream: one event per line), each at most `max`
 * characters: a longer one is a `KubeError("http")`, and is not kept whole. Each chunk is
 * searched once, so a long line costs its length, not its length squared. The answer is
 * released after.
 */
export async function* readLines(
  r: HttpReply,
  signal: AbortSignal,
  max = ANSWER_MAX_BYTES,
): AsyncGenerator<string> {
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  let head: string[] = [];
  let headLength = 0;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) {
        const last = head.join("").trim();
        if (last) yield last;
        return;
      }
      let start = 0;
      let nl: number;
      while ((nl = value.indexOf("\n", start)) >= 0) {
        const line = (head.join("") + value.slice(start, nl)).trim();
        head = [];
        headLength = 0;
        start = nl + 1;
        if (line) yield line;
      }
      if (start < value.length) {
        head.push(value.slice(start));
        headLength += value.length - start;
        if (headLength > max) throw new KubeError("http", tooLarge("an event", max));
      }
    }
  } finally {
    signal.removeEventListener("abort", stop);
    reader.cancel().catch(() => {});
    r.close();
  }
}

function tooLarge(what: string, max: number): string {
  const size = max % (1 << 20) === 0 ? `${max >> 20} MiB` : `${max} bytes`;
  return `${what} larger than ${size} (the most waitcmd reads)`;
}

/**
 * The whole body of `r` as text, at most `max` bytes (else a `KubeError("http")`, read no
 * further); the answer is released after.
 */
export async function readAll(
  r: HttpReply,
  signal: AbortSignal,
  max = ANSWER_MAX_BYTES,
): Promise<string> {
  const reader = r.body.getReader();
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  if (signal.aborted) stop();
  // Bytes, decoded once at the end: decoding piece by piece made twice the garbage (a stream
  // over the cap measured 480 MB of RSS against 250 MB).
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) throw new KubeError("http", tooLarge("an answer", max));
      chunks.push(value);
    }
    const all = concatBytes(chunks, size);
    chunks.length = 0;
    return new TextDecoder().decode(all);
  } finally {
    signal.removeEventListener("abort", stop);
    reader.cancel().catch(() => {});
    r.close();
  }
}
