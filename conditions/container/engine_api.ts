/**
 * container's requests to the Docker Engine API: dockerode's connection (socket, TCP, TLS) and
 * `GET`s whose answers we read ourselves with a cap (docker-modem would read a whole body into
 * memory, whatever its size; docs/contract.md §9, Limits), the engine's errors and what they
 * mean to a user (docs/contract.md §6, hints).
 *
 * @module
 */

import Docker from "dockerode";
import type { IncomingMessage } from "node:http";
import { onAbort } from "../../engine/abort.ts";
import { describeError } from "../../engine/errors.ts";
import { missingSocketHint } from "../_common/hints.ts";
import { readCapped } from "../_common/stream.ts";
import type { Engine } from "./dockerhost.ts";

/**
 * Longest answer of the engine read (an inspect, a list: a few KiB each);
 * a longer one is a pending error.
 */
export const ANSWER_MAX_BYTES = 4 * 1024 * 1024;
/** What docker-modem's `dial` takes (the parts used here). */
export interface DialOptions {
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
export interface Modem {
  dial(options: DialOptions, callback: (err: unknown, res: unknown) => void): void;
}

/** A client and the engine's address as shown in errors (the default socket resolved). */
export interface Connection {
  readonly modem: Modem;
  readonly display: string;
}

/** An answer of the engine other than 200; `message` is the engine's (described), or the status. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(readonly statusCode: number, message: string) {
    super(message);
  }
}

/** An answer that cannot be used (too long, not JSON); the message says so in full. */
export class BadAnswer extends Error {
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
export function get(
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
export async function readJson(
  res: IncomingMessage,
  what: string,
  signal: AbortSignal,
): Promise<unknown> {
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

/** Whether `e` is the engine's 404 (no such container). */
export function notFound(e: unknown): boolean {
  return e instanceof ApiError && e.statusCode === 404;
}

/** What to do about an engine that got no request (docs/contract.md §6, hints). */
export function engineHint(e: unknown, display: string): string | undefined {
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
export function requestError(e: unknown): string {
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

/** Makes the dockerode client for `e`. */
export async function connect(e: Engine): Promise<Connection> {
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
