/**
 * grpc's probe: `grpc.health.v1.Health/Check` through @grpc/grpc-js, on a
 * channel of its own per attempt and address (closed when the attempt ends,
 * so no reconnect backoff carries over and nothing outlives the verdict),
 * and `Health/Watch` as the change notifier (docs/contract.md §5 grpc, §10);
 * with `--method`, that unary method, its types found by server reflection
 * on the same channel (reflect.ts, loaded only then). What the answers
 * mean is judge.ts's.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import * as grpcJs from "@grpc/grpc-js";
import { describeError } from "../../engine/errors.ts";
import { clip, type SecretRegistry } from "../../engine/masking.ts";
import type { Probe, ProbeEnv, ProbeResult, WatchContext } from "../../engine/types.ts";
import { captureText } from "../_common/captures.ts";
import { DriverSessions } from "../_common/driver.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { canonicalIp, formatHostPort, onEveryAddress } from "../_common/net.ts";
import { decodeResponse, encodeRequest } from "./health.ts";
import {
  isServiceError,
  judgeCallError,
  judgeError,
  judgeStatus,
  type Seen,
  Unreachable,
} from "./judge.ts";
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
