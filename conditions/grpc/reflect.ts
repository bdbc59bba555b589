/**
 * grpc's `--reflect`: the descriptor of one method, asked of the server's
 * reflection service (`grpc.reflection.v1.ServerReflection`, then
 * `v1alpha` for older servers) on the attempt's own channel, and turned into
 * protobuf.js types (its descriptor extension) that encode the request from
 * and decode the response to ProtoJSON (its protojson extension)
 * (docs/contract.md §5 grpc).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import type * as grpcJs from "@grpc/grpc-js";
import protobuf from "protobufjs/light.js";
import descriptor from "protobufjs/ext/descriptor.js";
import protojson from "protobufjs/ext/protojson.js";

/** The reflection service's paths, newest first. */
const REFLECTION_PATHS = [
  "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
] as const;

/** Files asked for at most in one resolution: a server that keeps naming new ones is cut off. */
const MAX_FILES = 256;

/** The reflection messages used (grpc/reflection/v1/reflection.proto; v1alpha is the same wire). */
const REFLECTION = protobuf.Root.fromJSON({
  nested: {
    ServerReflectionRequest: {
      fields: {
        host: { type: "string", id: 1 },
        fileByFilename: { type: "string", id: 3 },
        fileContainingSymbol: { type: "string", id: 4 },
      },
    },
    ServerReflectionResponse: {
      fields: {
        fileDescriptorResponse: { type: "FileDescriptorResponse", id: 4 },
        errorResponse: { type: "ErrorResponse", id: 7 },
      },
    },
    FileDescriptorResponse: {
      fields: { fileDescriptorProto: { rule: "repeated", type: "bytes", id: 1 } },
    },
    ErrorResponse: {
      fields: { errorCode: { type: "int32", id: 1 }, errorMessage: { type: "string", id: 2 } },
    },
  },
});
const RequestType = REFLECTION.lookupType("ServerReflectionRequest");
const ResponseType = REFLECTION.lookupType("ServerReflectionResponse");

/** A reflection answer, as decoded. */
interface ReflectionAnswer {
  fileDescriptorResponse?: { fileDescriptorProto?: Uint8Array[] };
  errorResponse?: { errorCode?: number; errorMessage?: string };
}

/** A file descriptor as protobuf.js decodes it (the fields read here). */
interface FileProto {
  name?: string;
  dependency?: string[];
}

/** The method resolved: its path and its message types. */
export interface ResolvedMethod {
  /** `/pkg.Service/Method`. */
  readonly path: string;
  readonly requestType: protobuf.Type;
  readonly responseType: protobuf.Type;
}

/**
 * Why a resolution did not give a unary method the request fits: the
 * server's answer or the request's mismatch, shown as the attempt's error
 * (pending: a deployment in progress may add it, docs/contract.md §5 grpc).
 */
export class NotResolved extends Error {
  override name = "NotResolved";
}

/**
 * The descriptor of `service`/`method` from the server's reflection service,
 * on `client`'s channel; rejects with a grpc-js `ServiceError` for a failed
 * stream (UNAVAILABLE, UNIMPLEMENTED on both versions, ...) and with
 * `NotResolved` for an answer that does not give the method.
 */
export async function resolveMethod(
  client: grpcJs.Client,
  service: string,
  method: string,
  metadata: () => grpcJs.Metadata,
  signal: AbortSignal,
): Promise<ResolvedMethod> {
  return methodOf(await filesOf(client, service, metadata, signal), service, method);
}

/**
 * The names of `service`'s methods, from the server's reflection service
 * (`--reflect` without `--method`: the server describes the service); rejects
 * as `resolveMethod` does.
 */
export async function describeService(
  client: grpcJs.Client,
  service: string,
  metadata: () => grpcJs.Metadata,
  signal: AbortSignal,
): Promise<string[]> {
  return Object.keys(serviceOf(await filesOf(client, service, metadata, signal), service).methods);
}

/** The files defining `symbol`, through reflection v1, else v1alpha. */
async function filesOf(
  client: grpcJs.Client,
  symbol: string,
  metadata: () => grpcJs.Metadata,
  signal: AbortSignal,
): Promise<Map<string, Uint8Array>> {
  let files: Map<string, Uint8Array> | undefined;
  for (const [i, path] of REFLECTION_PATHS.entries()) {
    try {
      files = await fetchFiles(client, path, symbol, metadata(), signal);
      break;
    } catch (e) {
      const code = (e as Partial<grpcJs.ServiceError>).code;
      // 12 is UNIMPLEMENTED: an older server may offer only v1alpha.
      if (code !== 12 || i === REFLECTION_PATHS.length - 1) throw e;
    }
  }
  return files!;
}

/** The method's types from the files the server sent. */
export function methodOf(
  files: ReadonlyMap<string, Uint8Array>,
  service: string,
  method: string,
): ResolvedMethod {
  return methodOfService(serviceOf(files, service), service, method);
}

/** The service as the files the server sent describe it. */
function serviceOf(files: ReadonlyMap<string, Uint8Array>, service: string): protobuf.Service {
  let root: protobuf.Root;
  try {
    const file = [...files.values()].map((b) =>
      descriptor.FileDescriptorProto.decode(b) as descriptor.IFileDescriptorProto
    );
    root = protobuf.Root.fromDescriptor({ file });
    root.resolveAll();
  } catch (e) {
    throw new NotResolved(`the server's descriptors do not load: ${(e as Error).message}`);
  }
  const svc = root.lookup(service);
  if (!(svc instanceof protobuf.Service)) {
    throw new NotResolved(`the server's reflection does not describe service ${service}`);
  }
  return svc;
}

/** Continues {@link methodOf} once the service is found. */
function methodOfService(svc: protobuf.Service, service: string, method: string): ResolvedMethod {
  const m = svc.methods[method];
  if (m === undefined) {
    const names = Object.keys(svc.methods);
    const has = names.length === 0 ? "it has none" : `it has ${names.join(", ")}`;
    throw new NotResolved(`service ${service} has no method ${method} (${has})`);
  }
  if (m.requestStream || m.responseStream) {
    const kind = m.requestStream && m.responseStream
      ? "bidirectional streaming"
      : m.requestStream
      ? "client streaming"
      : "server streaming";
    throw new NotResolved(`${service}/${method} is a ${kind} method; --method calls unary methods`);
  }
  m.resolve();
  return {
    path: `/${service}/${method}`,
    requestType: m.resolvedRequestType!,
    responseType: m.resolvedResponseType!,
  };
}

/**
 * The file defining `symbol` and every file it depends on, by name, over one
 * reflection stream: a dependency the server did not send along is asked for
 * by name.
 */
function fetchFiles(
  client: grpcJs.Client,
  path: string,
  symbol: string,
  metadata: grpcJs.Metadata,
  signal: AbortSignal,
): Promise<Map<string, Uint8Array>> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const files = new Map<string, Uint8Array>();
    const asked = new Set<string>();
    /** Dependencies named in this answer, asked for once the whole answer is read. */
    const pending = new Set<string>();
    let waiting = 0;
    let settled = false;
    const call = client.makeBidiStreamRequest(
      path,
      (req: Record<string, string>) => Buffer.from(RequestType.encode(req).finish()),
      (b: Buffer) => ResponseType.decode(b) as unknown as ReflectionAnswer,
      metadata,
      {},
    );
    const done = (e?: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      if (e === undefined) {
        call.end();
        resolve(files);
      } else {
        call.cancel();
        reject(e);
      }
    };
    const onAbort = () => done(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const ask = (req: Record<string, string>) => {
      waiting++;
      call.write(req);
    };
    call.on("error", (e: grpcJs.ServiceError) => done(e));
    call.on("end", () => done(new NotResolved("the reflection stream ended before it answered")));
    call.on("data", (answer: ReflectionAnswer) => {
      waiting--;
      const err = answer.errorResponse;
      if (err) {
        // 5 is NOT_FOUND: the server does not know the symbol (or a file).
        const what = err.errorCode === 5 ? "NOT_FOUND" : `code ${err.errorCode ?? 0}`;
        const text = (err.errorMessage ?? "").trim();
        return done(
          new NotResolved(
            `the server's reflection does not know ${
              asked.size === 0 ? `service ${symbol}` : "a file it named"
            } (${text === "" ? what : `${what}: ${text}`})`,
          ),
        );
      }
      for (const bytes of answer.fileDescriptorResponse?.fileDescriptorProto ?? []) {
        const file = descriptor.FileDescriptorProto.decode(bytes) as FileProto;
        const name = file.name ?? "";
        if (files.has(name)) continue;
        files.set(name, bytes);
        // A dependency the server did not send along (yet) is asked for by name.
        for (const dep of file.dependency ?? []) {
          if (files.has(dep) || asked.has(dep)) continue;
          if (asked.size >= MAX_FILES) {
            return done(
              new NotResolved(`the server's descriptors name more than ${MAX_FILES} files`),
            );
          }
          asked.add(dep);
          pending.add(dep);
        }
      }
      // Sent along in a later file of the same answer: not asked for after all.
      for (const dep of pending) {
        pending.delete(dep);
        if (!files.has(dep)) ask({ fileByFilename: dep });
      }
      if (waiting === 0) done();
    });
    ask({ fileContainingSymbol: symbol });
  });
}

/** The request's bytes from its ProtoJSON; `NotResolved` when it does not fit the type. */
export function encodeRequest(type: protobuf.Type, json: unknown): Buffer {
  try {
    return Buffer.from(type.encode(protojson.fromJson(type, json)).finish());
  } catch (e) {
    const name = type.fullName.replace(/^\./, "");
    // protobuf.js names the type first (`.pkg.Request: unknown field: "x"`): said once here.
    const why = (e as Error).message.replace(`${type.fullName}: `, "");
    throw new NotResolved(`--request does not fit ${name}: ${why}`);
  }
}

/** The response's ProtoJSON (fields at their default value are left out, as ProtoJSON does). */
export function decodeResponse(type: protobuf.Type, bytes: Uint8Array): unknown {
  return protojson.toJson(type, type.decode(bytes));
}
