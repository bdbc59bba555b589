/**
 * grpc's probe: `grpc.health.v1.Health/Check` through @grpc/grpc-js, on a
 * channel of its own per attempt and address (closed when the attempt ends,
 * so no reconnect backoff carries over and nothing outlives the verdict),
 * and `Health/Watch` as the change notifier (docs/contract.md §5 grpc, §10);
 * with `--method`, that unary method, its types found by server reflection
 * on the same channel (reflect.ts, loaded only then).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import * as grpcJs from "@grpc/grpc-js";
import { describeError } from "../../engine/errors.ts";
import { clip, type SecretRegistry } from "../../engine/secrets.ts";
import type { Probe, ProbeEnv, ProbeResult, WatchContext } from "../../engine/types.ts";
import { captureText } from "../_common/captures.ts";
import { DriverSessions } from "../_common/driver.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { canonicalIp, formatHostPort, onEveryAddress } from "../_common/net.ts";
import { SOCKET_ERROR_TEXTS, tlsReason } from "../_common/nodeerr.ts";
import { decodeResponse, encodeRequest } from "./health.ts";
import type { GrpcCall, GrpcOptions } from "./mod.ts";

const CHECK = "/grpc.health.v1.Health/Check";
const WATCH = "/grpc.health.v1.Health/Watch";

/** The largest response read (docs/contract.md §9); a larger one fails the call. */
export const MAX_RESPONSE_BYTES = 4 << 20;

/** Longest response a detail or error shows (docs/contract.md §9). */
const PREVIEW_CHARS = 80;

/** Pauses before the watcher reconnects to Health/Watch. */
const PAUSE_MIN_MS = 250;
const PAUSE_MAX_MS = 5000;

// grpc-js logs errors on stderr by default; waitcmd reports them itself (and
// JSON mode keeps stderr empty).
grpcJs.setLogVerbosity(grpcJs.logVerbosity.NONE);

/** A status as the health service names it, or a number it does not. */
type Seen = ReturnType<typeof decodeResponse>;

/** A failure to reach the server (the next address is tried). */
class Unreachable extends Error {
  override name = "Unreachable";
}

const serialize = (service: string): Buffer => Buffer.from(encodeRequest(service));
const deserialize = (b: Buffer): Seen =>
  decodeResponse(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));

/** A grpc-js client has no goodbye to say: closing its channel is both ends. */
const GRPC_CLIENT = {
  end: (client: grpcJs.Client) => Promise.resolve(client.close()),
  destroy: (client: grpcJs.Client) => client.close(),
};

/** Makes the probe of one grpc condition. */
export function create(o: GrpcOptions, env: ProbeEnv): Probe {
  const sessions = new DriverSessions(GRPC_CLIENT, env.clock);
  /** The status the latest attempt saw (NOT_FOUND as SERVICE_UNKNOWN), for the watcher. */
  let lastSeen: Seen | undefined;
  let firstDone!: () => void;
  const firstCheck = new Promise<void>((r) => (firstDone = r));

  const connect = async (address: string): Promise<grpcJs.Client> =>
    new grpcJs.Client(address, await credentials(o), channelOptions(o));

  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      try {
        return await onEveryAddress(
          o.hp,
          signal,
          (address) =>
            sessions.run(connect(formatHostPort(address)), signal, (client) => ask(client, signal)),
          (e) => e instanceof Unreachable,
        );
      } finally {
        firstDone();
      }
    },
    // A method has no change stream to follow: it is polled.
    watch: o.call || o.checkPath ? undefined : (ctx) => watchHealth(ctx),
    close: () => sessions.close(),
  };

  /** One attempt's calls on one address: the method, or reflection and Health/Check. */
  async function ask(client: grpcJs.Client, signal: AbortSignal): Promise<ProbeResult> {
    if (o.call) return await callOnce(client, o, o.call, signal, env.secrets);
    let described: string | undefined;
    if (o.reflectService) {
      const d = await describeOnce(client, o, signal);
      if (typeof d !== "string") return d;
      described = d;
    }
    const r = await checkOnce(client, o, signal);
    lastSeen = r.seen;
    return described !== undefined && r.result.status === "satisfied"
      ? { ...r.result, detail: `${described}; ${r.result.detail}` }
      : r.result;
  }

  /**
   * Yields when Health/Watch reports a status other than the one the latest
   * attempt saw. Starts after the first attempt (a run decided at once never
   * opens it); reconnects with a growing pause; a server without Watch
   * leaves the condition polled.
   */
  async function* watchHealth({ signal, notice }: WatchContext): AsyncGenerator<void> {
    await Promise.race([firstCheck, new Promise((r) => signal.addEventListener("abort", r))]);
    let pauseMs = PAUSE_MIN_MS;
    while (!signal.aborted) {
      try {
        const client = await connect(formatHostPort(o.hp));
        const end = yield* sessions.follow(client, signal, (c) => followWatch(c, signal));
        if (end === "unimplemented") {
          notice("the server does not offer Health/Watch; polling every interval");
          return;
        }
        if (end === "seen") pauseMs = PAUSE_MIN_MS;
      } catch {
        // Could not open the stream (unreadable CA file): reconnect below.
      }
      if (signal.aborted) return;
      await env.clock.sleep(pauseMs, signal);
      pauseMs = Math.min(pauseMs * 2, PAUSE_MAX_MS);
    }
  }

  /**
   * Follows one Health/Watch stream on `client`, yielding at each status other than the latest
   * attempt's, until it ends: whether the server lacks Watch, or else whether a status came.
   */
  async function* followWatch(
    client: grpcJs.Client,
    signal: AbortSignal,
  ): AsyncGenerator<void, "unimplemented" | "seen" | "none"> {
    let stream: grpcJs.ClientReadableStream<Seen> | undefined;
    const events: ({ seen: Seen } | { end: grpcJs.ServiceError | undefined })[] = [];
    let wake: (() => void) | undefined;
    const push = (e: typeof events[number]) => {
      events.push(e);
      wake?.();
    };
    const stop = () => push({ end: undefined });
    signal.addEventListener("abort", stop, { once: true });
    let seen = false;
    try {
      stream = client.makeServerStreamRequest(
        WATCH,
        serialize,
        deserialize,
        o.service,
        metadata(o),
        {},
      );
      stream.on("data", (seen: Seen) => push({ seen }));
      stream.on("error", (e: grpcJs.ServiceError) => push({ end: e }));
      stream.on("end", () => push({ end: undefined }));
      for (;;) {
        while (events.length === 0) await new Promise<void>((r) => (wake = r));
        const ev = events.shift()!;
        if ("end" in ev) {
          if (ev.end?.code === grpcJs.status.UNIMPLEMENTED) return "unimplemented";
          return seen ? "seen" : "none";
        }
        seen = true;
        if (ev.seen !== lastSeen) yield;
      }
    } finally {
      signal.removeEventListener("abort", stop);
      stream?.cancel();
    }
  }
}

/** One Check call: the result, and the status seen (for the watcher). */
function checkOnce(
  client: grpcJs.Client,
  o: GrpcOptions,
  signal: AbortSignal,
): Promise<{ result: ProbeResult; seen: Seen | undefined }> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const call = client.makeUnaryRequest(
      o.checkPath ?? CHECK,
      serialize,
      deserialize,
      o.service,
      metadata(o),
      {},
      (err, seen) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) return reject(signal.reason);
        if (err) {
          try {
            resolve(judgeError(err, o));
          } catch (e) {
            reject(e);
          }
          return;
        }
        resolve({ result: judgeStatus(seen!, o), seen });
      },
    );
    const onAbort = () => call.cancel();
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * One `--method` call: the method's descriptor through reflection, the
 * request encoded from its ProtoJSON, the response decoded to ProtoJSON and
 * judged by `--jsonpath`.
 */
async function callOnce(
  client: grpcJs.Client,
  o: GrpcOptions,
  call: GrpcCall,
  signal: AbortSignal,
  secrets: SecretRegistry | undefined,
): Promise<ProbeResult> {
  const reflect = await import("./reflect.ts");
  const name = `${call.service}/${call.method}`;
  let stage = "reflection";
  try {
    const m = await reflect.resolveMethod(
      client,
      call.service,
      call.method,
      () => metadata(o),
      signal,
    );
    const body = reflect.encodeRequest(m.requestType, call.request);
    stage = "call";
    const bytes = await unary(client, m.path, body, metadata(o), signal);
    let doc: unknown;
    try {
      doc = reflect.decodeResponse(m.responseType, bytes);
    } catch (e) {
      return {
        status: "pending",
        error: `${name} answered bytes that do not decode as ${
          m.responseType.fullName.replace(/^\./, "")
        }: ${describeError(e)}`,
      };
    }
    // JSON text needs no quoting (its control characters are escaped); masked, then cut.
    const shown = `${name} answered ${clip(JSON.stringify(doc), PREVIEW_CHARS, secrets)}`;
    if (call.jsonpaths.length === 0) return { status: "satisfied", detail: shown };
    const { judgeJsonPaths } = await import("../_common/jsonpath_lib.ts");
    const v = await judgeJsonPaths(call.jsonpaths, doc, signal, secrets);
    if (!v.ok) return { status: "pending", error: `${v.error} (${shown})` };
    return {
      status: "satisfied",
      detail: [`${name} answered`, ...v.details].join("; "),
      captures: { value: captureText(v.value) },
    };
  } catch (e) {
    if (e instanceof reflect.NotResolved) return { status: "pending", error: e.message };
    if (signal.aborted || !isServiceError(e)) throw e;
    return judgeCallError(e, o, stage === "reflection" ? undefined : name);
  }
}

/**
 * `--reflect` without `--method`: the server's reflection describes
 * `--service` (what it says, for the detail), or why not (pending).
 */
async function describeOnce(
  client: grpcJs.Client,
  o: GrpcOptions,
  signal: AbortSignal,
): Promise<string | ProbeResult> {
  const reflect = await import("./reflect.ts");
  try {
    const names = await reflect.describeService(client, o.service, () => metadata(o), signal);
    const shown = names.length === 0
      ? "no method"
      : names.slice(0, 5).join(", ") + (names.length > 5 ? `, … (${names.length})` : "");
    return `reflection describes ${o.service} (${shown})`;
  } catch (e) {
    if (e instanceof reflect.NotResolved) return { status: "pending", error: e.message };
    if (signal.aborted || !isServiceError(e)) throw e;
    return judgeCallError(e, o, undefined);
  }
}

/** Whether `e` is a grpc-js call's failure (it carries a numeric status code). */
function isServiceError(e: unknown): e is grpcJs.ServiceError {
  return e instanceof Error && typeof (e as Partial<grpcJs.ServiceError>).code === "number";
}

/**
 * A failed reflection stream (`method` undefined) or call judged: a failure to
 * reach the server is thrown as `Unreachable`; the rest is pending with its
 * status and details.
 */
export function judgeCallError(
  err: grpcJs.ServiceError,
  o: GrpcOptions,
  method: string | undefined,
): ProbeResult {
  const details = (err.details ?? "").trim();
  if (err.code === grpcJs.status.UNAVAILABLE) {
    throw new Unreachable(connectionReason(details, o.servername ?? o.hp.hostname));
  }
  const name = grpcJs.status[err.code] ?? String(err.code);
  const status = details === "" ? name : `${name}: ${details}`;
  if (method !== undefined) return { status: "pending", error: `${method}: ${status}` };
  if (err.code === grpcJs.status.UNIMPLEMENTED) {
    return {
      status: "pending",
      error:
        `the server has no reflection service (UNIMPLEMENTED: grpc.reflection.v1.ServerReflection)`,
    };
  }
  return { status: "pending", error: `server reflection: ${status}` };
}

/** One unary call with bytes in and out; rejects with the call's `ServiceError`. */
function unary(
  client: grpcJs.Client,
  path: string,
  body: Buffer,
  md: grpcJs.Metadata,
  signal: AbortSignal,
): Promise<Uint8Array> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const call = client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
      body,
      md,
      {},
      (err, bytes) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) return reject(signal.reason);
        if (err) return reject(err);
        resolve(bytes!);
      },
    );
    const onAbort = () => call.cancel();
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The service as named in texts. */
function serviceText(o: GrpcOptions): string {
  return o.service === "" ? "server" : `service ${JSON.stringify(o.service)}`;
}

/** A Check answer judged against --status. */
export function judgeStatus(seen: Seen, o: GrpcOptions): ProbeResult {
  if (seen === o.status) return { status: "satisfied", detail: `${serviceText(o)} ${seen}` };
  return { status: "pending", error: `${serviceText(o)} ${seen}, expected ${o.status}` };
}

/**
 * A failed Check judged: NOT_FOUND is the unknown service (what --status
 * SERVICE_UNKNOWN waits for), UNIMPLEMENTED a server without the health
 * service; a failure to reach the server is thrown as `Unreachable`.
 */
export function judgeError(
  err: grpcJs.ServiceError,
  o: GrpcOptions,
): { result: ProbeResult; seen: Seen | undefined } {
  const details = (err.details ?? "").trim();
  switch (err.code) {
    case grpcJs.status.NOT_FOUND: {
      const why = details === "" ? "NOT_FOUND" : `NOT_FOUND: ${details}`;
      const result: ProbeResult = o.status === "SERVICE_UNKNOWN"
        ? { status: "satisfied", detail: `${serviceText(o)} SERVICE_UNKNOWN (${why})` }
        : {
          status: "pending",
          error: `${serviceText(o)} unknown to the server (${why}), expected ${o.status}`,
        };
      return { result, seen: "SERVICE_UNKNOWN" };
    }
    case grpcJs.status.UNIMPLEMENTED:
      return {
        result: {
          status: "pending",
          error: o.checkPath === undefined
            ? "the server has no health service (UNIMPLEMENTED: grpc.health.v1.Health)"
            : `the server does not implement ${o.checkPath.slice(1)} (UNIMPLEMENTED)`,
        },
        seen: undefined,
      };
    case grpcJs.status.UNAVAILABLE:
      throw new Unreachable(connectionReason(details, o.servername ?? o.hp.hostname));
  }
  const name = grpcJs.status[err.code] ?? String(err.code);
  return {
    result: { status: "pending", error: details === "" ? name : `${name}: ${details}` },
    seen: undefined,
  };
}

/**
 * grpc-js's UNAVAILABLE details (`No connection established. Last error:
 * Error: connect ECONNREFUSED 127.0.0.1:1 (time). Resolution note: ...`) as
 * the short reason: `connection refused`, `certificate not trusted (...)`.
 * `name` is the name the certificate was checked against.
 */
export function connectionReason(details: string, name = ""): string {
  let last = details.replace(/\.?\s*Resolution note:.*$/s, "");
  last = (/Last error: (.*)$/s.exec(last)?.[1] ?? last)
    .replace(/\s*\(\d{4}-\d\d-\d\dT[^)]*\)\s*$/, "").trim();
  const bracket = /^\w*Error \[(\w+)\]: /.exec(last)?.[1];
  last = last.replace(/^\w*Error(?: \[\w+\])?: /, "").replace(/\.$/, "");
  const tls = (bracket === undefined ? undefined : tlsReason(bracket, name)) ??
    tlsReason(last, name);
  if (tls !== undefined) return tls;
  const code = /\b(E[A-Z]{3,})\b/.exec(last)?.[1];
  if (code !== undefined && Object.hasOwn(SOCKET_ERROR_TEXTS, code)) {
    return SOCKET_ERROR_TEXTS[code]!;
  }
  if (last === "" || /^No connection established$/i.test(last)) return "no connection established";
  return describeError(last.replace(/^connect /, ""));
}

/** Call metadata from --header. */
function metadata(o: GrpcOptions): grpcJs.Metadata {
  const md = new grpcJs.Metadata();
  for (const h of o.headers) md.add(h.name, h.value);
  return md;
}

/** Channel options: no retries, no channelz, no shared subchannels, the target's authority. */
function channelOptions(o: GrpcOptions): grpcJs.ChannelOptions {
  const opts: grpcJs.ChannelOptions = {
    "grpc.default_authority": formatHostPort(o.hp),
    "grpc.enable_channelz": 0,
    "grpc.enable_retries": 0,
    "grpc.service_config_disable_resolution": 1,
    // A subchannel of an earlier attempt (in reconnect backoff) is never reused.
    "grpc.use_local_subchannel_pool": 1,
    "grpc.max_receive_message_length": MAX_RESPONSE_BYTES,
  };
  const name = o.servername ?? o.hp.hostname;
  // The certificate is checked against, and SNI names, the expected name, not the address.
  if (o.tls && canonicalIp(name) === undefined) opts["grpc.ssl_target_name_override"] = name;
  return opts;
}

/** Credentials of one attempt (the CA file is read each time: it may be renewed). */
async function credentials(o: GrpcOptions): Promise<grpcJs.ChannelCredentials> {
  if (!o.tls) return grpcJs.credentials.createInsecure();
  const ca = o.caFile === undefined ? null : Buffer.from(await readFlagFile("ca-file", o.caFile));
  const verify: grpcJs.VerifyOptions = o.insecure
    ? { rejectUnauthorized: false, checkServerIdentity: () => undefined }
    : {};
  const creds = grpcJs.credentials.createSsl(ca, null, null, verify);
  const name = o.servername ?? o.hp.hostname;
  if (canonicalIp(name) !== undefined) noIpServername(creds);
  return creds;
}

/**
 * grpc-js always sends the target host as TLS server name, and Deno's
 * node:tls refuses an IP address there. For an IP the name is left out (the
 * certificate is still checked against the IP's SAN).
 */
function noIpServername(creds: grpcJs.ChannelCredentials): void {
  const make = creds._createSecureConnector.bind(creds);
  creds._createSecureConnector = (target, options, callCreds) => {
    const connector = make(target, options, callCreds) as ReturnType<typeof make> & {
      connectionOptions?: { servername?: string };
    };
    const sn = connector.connectionOptions?.servername;
    if (sn !== undefined && canonicalIp(sn) !== undefined) {
      delete connector.connectionOptions!.servername;
    }
    return connector;
  };
}
