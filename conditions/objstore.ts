/**
 * objstore (alias s3): an object, or a bucket, exists in S3-compatible object
 * storage, optionally with custom metadata and a text in its body.
 *
 * Talks to the service with `@aws-sdk/client-s3`, imported lazily inside the
 * first attempt. An endpoint override (MinIO, R2, Ceph, versitygw, ...) uses
 * path-style addressing and the SDK's request checksums only where the API
 * requires them, so that S3-compatible servers accept the requests.
 *
 * @module
 */

import type { ConditionKind, KindInput, Probe, ProbeResult } from "../engine/types.ts";
import { formatSize, indexOfBytes } from "./_bytes.ts";
import { describeError } from "./_net.ts";

/** Most body bytes `--contains` reads. */
export const CONTAINS_LIMIT = 10 << 20;

/** Endpoint variables, in order of precedence (after `--endpoint-url`). */
export const ENDPOINT_VARS: readonly string[] = [
  "CLOUD_ENDPOINT_URL_S3",
  "CLOUD_ENDPOINT_URL",
  "S3_ENDPOINT_URL",
  "AWS_ENDPOINT_URL_S3",
  "AWS_ENDPOINT_URL",
];

/** `objstore://bucket/key` or `s3://bucket/key` split up; `key` is "" for a bucket target. */
export interface ObjectUri {
  readonly bucket: string;
  readonly key: string;
}

const BUCKET = /^[A-Za-z0-9][A-Za-z0-9._-]{2,254}$/;
const METADATA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Parses `objstore://BUCKET[/KEY]` (or `s3://`), or returns an error text. The key is taken literally. */
export function parseObjectUri(text: string): ObjectUri | string {
  const m = /^(objstore|s3):\/\/([^/]*)(?:\/(.*))?$/is.exec(text);
  const expected = "expected objstore://BUCKET/KEY or s3://BUCKET/KEY";
  if (!m) return `${expected}, got ${JSON.stringify(text)}`;
  const bucket = m[2]!;
  if (!BUCKET.test(bucket)) {
    return bucket === ""
      ? `${expected}: the bucket name is missing in ${JSON.stringify(text)}`
      : `bucket names have 3 to 255 letters, digits, dots, hyphens or underscores, got ${
        JSON.stringify(bucket)
      }`;
  }
  return { bucket, key: m[3] ?? "" };
}

/** Where the credentials come from (shown in errors; never the secret itself). */
export type CredentialSource =
  | {
    readonly type: "static";
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
    /** `flags`, `CLOUD_* variables`, `flags and CLOUD_* variables`. */
    readonly from: string;
  }
  | { readonly type: "chain"; readonly profile?: string };

/** Everything parse() settles. */
export interface ObjstoreSpec {
  readonly uri: ObjectUri;
  /** Lower-cased names. */
  readonly metadata: ReadonlyMap<string, string>;
  readonly contains: string | undefined;
  /** Undefined: AWS itself. */
  readonly endpoint: { readonly url: string; readonly from: string } | undefined;
  readonly pathStyle: boolean;
  /** Undefined: the SDK's region (AWS_REGION, profile), else us-east-1. */
  readonly region: string | undefined;
  readonly credentials: CredentialSource;
}

/** The endpoint from `--endpoint-url`, else the first set variable; or an error text. */
export function endpointOf(
  flag: string | undefined,
  env: Readonly<Record<string, string>>,
): { url: string; from: string } | undefined | { error: string; from: string } {
  let from: string | undefined;
  let url: string | undefined;
  if (flag !== undefined) {
    from = "--endpoint-url";
    url = flag;
  } else {
    for (const v of ENDPOINT_VARS) {
      if (env[v]) {
        from = v;
        url = env[v];
        break;
      }
    }
  }
  if (from === undefined || url === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return {
      error: `expected an http(s) URL like http://localhost:9000, got ${JSON.stringify(url)}`,
      from,
    };
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return {
      error: `expected an http(s) URL like http://localhost:9000, got ${JSON.stringify(url)}`,
      from,
    };
  }
  if (u.username || u.password) {
    return { error: "the endpoint URL must not carry credentials; use --access-key-id", from };
  }
  return { url: u.href.replace(/\/$/, ""), from };
}

function parseSpec(input: KindInput): ObjstoreSpec {
  const uri = parseObjectUri(input.target ?? "");
  if (typeof uri === "string") input.fail(undefined, uri);
  const { key } = uri as ObjectUri;
  for (const f of ["metadata", "contains"]) {
    if (key === "" && input.has(f)) {
      input.fail(f, "needs an object key in the target (objstore://BUCKET/KEY)");
    }
  }
  const metadata = new Map<string, string>();
  for (const item of input.strings("metadata")) {
    const eq = item.indexOf("=");
    const name = eq < 0 ? "" : item.slice(0, eq).trim().toLowerCase().replace(/^x-amz-meta-/, "");
    if (eq < 0 || !METADATA_NAME.test(name)) {
      input.fail("metadata", `expected NAME=VALUE like build=42, got ${JSON.stringify(item)}`);
    }
    const value = item.slice(eq + 1);
    const prev = metadata.get(name);
    if (prev !== undefined && prev !== value) {
      input.fail("metadata", `${JSON.stringify(name)} is given twice with different values`);
    }
    metadata.set(name, value);
  }
  const contains = input.string("contains");
  if (contains === "") input.fail("contains", "expected a text, got an empty string");

  const ep = endpointOf(input.string("endpoint-url"), input.env);
  if (ep && "error" in ep) {
    if (ep.from === "--endpoint-url") input.fail("endpoint-url", ep.error);
    input.fail(undefined, `${ep.from}: ${ep.error}`);
  }
  const endpoint = ep as { url: string; from: string } | undefined;
  const virtual = input.bool("virtual-hosted-style");
  if (virtual && !endpoint) {
    input.fail(
      "virtual-hosted-style",
      `only applies with --endpoint-url or ${ENDPOINT_VARS.slice(0, 3).join(", ")}`,
    );
  }

  const region = input.string("region") ?? (input.env.CLOUD_REGION || undefined);
  if (region !== undefined && !/^[A-Za-z0-9-]+$/.test(region)) {
    const where = input.has("region") ? "region" : undefined;
    input.fail(
      where,
      `${where ? "" : "CLOUD_REGION: "}expected a region like us-east-1, got ${
        JSON.stringify(region)
      }`,
    );
  }
  return {
    uri: uri as ObjectUri,
    metadata,
    contains,
    endpoint,
    pathStyle: endpoint !== undefined && !virtual,
    region,
    credentials: credentialsOf(input),
  };
}

/** Flags, then CLOUD_* variables, then (nothing explicit) the SDK's default chain. */
function credentialsOf(input: KindInput): CredentialSource {
  const env = input.env;
  const profile = input.string("profile");
  if (profile !== undefined) {
    if (profile === "") input.fail("profile", "expected a profile name, got an empty string");
    for (const f of ["access-key-id", "secret-access-key", "session-token"]) {
      if (input.has(f)) input.fail("profile", `cannot be combined with --${f}`);
    }
    return { type: "chain", profile };
  }
  const pick = (flag: string, v: string) => {
    const value = input.string(flag);
    if (value !== undefined) {
      if (value === "") input.fail(flag, "expected a value, got an empty string");
      return { value, from: "flags" };
    }
    return env[v] ? { value: env[v]!, from: "CLOUD_* variables" } : undefined;
  };
  const id = pick("access-key-id", "CLOUD_ACCESS_KEY_ID");
  const secret = pick("secret-access-key", "CLOUD_SECRET_ACCESS_KEY");
  const token = pick("session-token", "CLOUD_SESSION_TOKEN");
  if (secret?.from === "CLOUD_* variables") input.secret(secret.value);
  if (token?.from === "CLOUD_* variables") input.secret(token.value);
  // Values the SDK may pick up itself: never shown either.
  for (const v of ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]) if (env[v]) input.secret(env[v]!);
  if (id && !secret) {
    input.fail(
      input.has("access-key-id") ? "access-key-id" : undefined,
      `${input.has("access-key-id") ? "" : "CLOUD_ACCESS_KEY_ID: "}` +
        "needs a secret access key too (--secret-access-key or CLOUD_SECRET_ACCESS_KEY)",
    );
  }
  if (secret && !id) {
    input.fail(
      input.has("secret-access-key") ? "secret-access-key" : undefined,
      `${input.has("secret-access-key") ? "" : "CLOUD_SECRET_ACCESS_KEY: "}` +
        "needs an access key id too (--access-key-id or CLOUD_ACCESS_KEY_ID)",
    );
  }
  if (token && !id) {
    input.fail(
      input.has("session-token") ? "session-token" : undefined,
      `${input.has("session-token") ? "" : "CLOUD_SESSION_TOKEN: "}` +
        "needs an access key id and a secret access key too",
    );
  }
  if (!id || !secret) return { type: "chain" };
  const froms = new Set([id.from, secret.from, ...(token ? [token.from] : [])]);
  return {
    type: "static",
    accessKeyId: id.value,
    secretAccessKey: secret.value,
    sessionToken: token?.value,
    from: froms.size > 1 ? "flags and CLOUD_* variables" : id.from,
  };
}

// --- judging (pure, unit-tested) --------------------------------------------

/** What a successful HEAD/GET told us about an object. */
export interface ObjectFacts {
  readonly size: number | undefined;
  readonly etag: string | undefined;
  /** As the SDK returns them: lower-cased names without `x-amz-meta-`. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** The metadata mismatches, as a text; undefined when every wanted entry matches. */
export function metadataMismatch(
  want: ReadonlyMap<string, string>,
  have: Readonly<Record<string, string>>,
): string | undefined {
  const lower = new Map(Object.entries(have).map(([k, v]) => [k.toLowerCase(), v]));
  const bad: string[] = [];
  for (const [name, value] of want) {
    const got = lower.get(name);
    if (got === undefined) bad.push(`metadata ${name} is not set, want ${JSON.stringify(value)}`);
    else if (got !== value) {
      bad.push(`metadata ${name} is ${JSON.stringify(got)}, want ${JSON.stringify(value)}`);
    }
  }
  return bad.length ? bad.join("; ") : undefined;
}

/** `object 1.2 KiB, etag "…"`. */
export function describeObject(f: ObjectFacts): string {
  const parts = [`object ${f.size === undefined ? "of unknown size" : formatSize(f.size)}`];
  if (f.etag) parts.push(`etag ${f.etag}`);
  return parts.join(", ");
}

/** The total size from `Content-Range: bytes 0-4/11`. */
export function totalFromContentRange(range: string | undefined): number | undefined {
  const m = /\/(\d+)\s*$/.exec(range ?? "");
  return m ? Number(m[1]) : undefined;
}

/** An SDK error as far as it is read here. */
export interface SdkError {
  readonly name?: string;
  readonly Code?: string;
  readonly code?: string;
  readonly message?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly cause?: unknown;
}

/** Context for error messages. */
export interface ErrorContext {
  readonly bucket: string;
  readonly key: string;
  readonly endpoint: string;
  /** `access key id AK... (from flags)`; `no credentials (anonymous request)`. */
  readonly who: string;
}

/**
 * An S3 error as a short reason. Everything is retried (the object may
 * appear, a policy may change); the reason says what was refused without
 * ever showing a secret.
 */
export function describeS3Error(e: unknown, ctx: ErrorContext): string {
  const err = (typeof e === "object" && e !== null ? e : { message: String(e) }) as SdkError;
  const status = err.$metadata?.httpStatusCode;
  const code = err.Code ??
    (err.name && err.name !== "Error" && err.name !== "Unknown" ? err.name : "");
  const tag = `${status ?? ""}${status && code ? " " : ""}${code}`;
  const net = networkReason(err);
  if (status === undefined && net) return `${net} (${ctx.endpoint})`;
  switch (code) {
    case "NoSuchKey":
      return `object ${JSON.stringify(ctx.key)} does not exist`;
    case "NoSuchBucket":
      return `bucket ${JSON.stringify(ctx.bucket)} does not exist`;
    case "NotFound":
      return ctx.key
        ? `object ${JSON.stringify(ctx.key)} (or bucket ${JSON.stringify(ctx.bucket)}) not found`
        : `bucket ${JSON.stringify(ctx.bucket)} does not exist`;
    case "SignatureDoesNotMatch":
      return `credentials refused (${tag}): the secret access key does not match ${ctx.who}`;
    case "InvalidAccessKeyId":
    case "XAdminUserNotFound":
      return `credentials refused (${tag}): unknown ${ctx.who}`;
    case "ExpiredToken":
    case "TokenRefreshRequired":
      return `credentials refused (${tag}): the session token has expired (${ctx.who})`;
    case "InvalidToken":
      return `credentials refused (${tag}): the session token is invalid (${ctx.who})`;
    case "AccessDenied":
    case "AllAccessDisabled":
      return `access denied (${tag}) to ${ctx.key ? "the object" : "the bucket"}; ${ctx.who}`;
    case "PermanentRedirect":
    case "AuthorizationHeaderMalformed":
      return `wrong region (${tag}); set --region or CLOUD_REGION`;
    case "CredentialsProviderError":
      return `no credentials: ${firstLine(err.message)}`;
  }
  if (status === 403) {
    return `access denied (403) to ${ctx.key ? "the object" : "the bucket"}; ${ctx.who}`;
  }
  if (status === 404) {
    return ctx.key
      ? `object ${JSON.stringify(ctx.key)} not found`
      : `bucket ${JSON.stringify(ctx.bucket)} does not exist`;
  }
  const msg = err.message && err.message !== "UnknownError" ? `: ${firstLine(err.message)}` : "";
  if (tag) return `${tag}${msg}`;
  return describeError(err.message ?? String(e));
}

function firstLine(s: string | undefined): string {
  const t = (s ?? "").trim().split("\n")[0] ?? "";
  return t.length > 200 ? t.slice(0, 200) + "..." : t;
}

function networkReason(err: SdkError): string | undefined {
  const codeOf = (x: unknown) => (x as { code?: string } | undefined)?.code;
  const code = codeOf(err) ?? codeOf(err.cause);
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset by peer";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "cannot resolve host";
    case "ETIMEDOUT":
    case "TimeoutError":
      return "connection timed out";
    case "EHOSTUNREACH":
      return "host unreachable";
    case "ENETUNREACH":
      return "network unreachable";
  }
  if (code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
    return `tls: ${describeError(err.message ?? code)}`;
  }
  if (err.name === "TimeoutError") return "connection timed out";
  return undefined;
}

// --- the SDK (imported lazily) ----------------------------------------------

type S3Module = typeof import("@aws-sdk/client-s3");
type S3Client = InstanceType<S3Module["S3Client"]>;

const SILENT = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** A client plus who it authenticates as (for messages). */
interface Session {
  readonly client: S3Client;
  readonly who: string;
}

/** Streams `body`, stopping at `limit` bytes; whether `needle` occurs in what was read. */
async function bodyContains(
  body: ReadableStream<Uint8Array>,
  needle: Uint8Array,
  limit: number,
  signal: AbortSignal,
): Promise<{ found: boolean; read: number; truncated: boolean }> {
  const reader = body.getReader();
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  let buf = new Uint8Array(0);
  let read = 0;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return { found: false, read, truncated: false };
      const chunk = value.subarray(0, Math.max(0, limit - read));
      read += chunk.length;
      const joined = new Uint8Array(buf.length + chunk.length);
      joined.set(buf);
      joined.set(chunk, buf.length);
      if (indexOfBytes(joined, needle) !== -1) return { found: true, read, truncated: false };
      if (read >= limit) return { found: false, read, truncated: true };
      buf = joined.slice(Math.max(0, joined.length - needle.length + 1));
    }
  } finally {
    signal.removeEventListener("abort", stop);
    reader.cancel().catch(() => {});
  }
}

class ObjstoreProbe {
  #session: Promise<Session> | undefined;
  #clients: S3Client[] = [];

  constructor(readonly spec: ObjstoreSpec) {}

  /** The endpoint as shown in errors. */
  get endpointText(): string {
    return this.spec.endpoint?.url ?? "AWS S3";
  }

  #session_(signal: AbortSignal): Promise<Session> {
    if (!this.#session) {
      const p = this.#connect();
      this.#session = p;
      p.catch(() => {
        if (this.#session === p) this.#session = undefined;
      });
    }
    const s = this.#session;
    return new Promise<Session>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      s.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  /** Imports the SDK and builds the client: explicit credentials, the SDK chain, else anonymous. */
  async #connect(): Promise<Session> {
    const sdk: S3Module = await import("@aws-sdk/client-s3");
    const spec = this.spec;
    const base: Record<string, unknown> = {
      logger: SILENT,
      maxAttempts: 1,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    };
    if (spec.endpoint) {
      base.endpoint = spec.endpoint.url;
      base.forcePathStyle = spec.pathStyle;
    } else {
      base.followRegionRedirects = true;
    }
    const make = (extra: Record<string, unknown>) => {
      const c = new sdk.S3Client({ ...base, ...extra });
      this.#clients.push(c);
      return c;
    };
    const creds = spec.credentials;
    const profile = creds.type === "chain" && creds.profile ? { profile: creds.profile } : {};
    // A client without region and credentials, to ask the SDK for its defaults.
    const probe = make(profile);
    let region = spec.region;
    if (region === undefined) {
      try {
        region = await (probe.config.region as () => Promise<string>)();
      } catch {
        region = "us-east-1";
      }
    }
    if (creds.type === "static") {
      const client = make({
        region,
        credentials: {
          accessKeyId: creds.accessKeyId,
          secretAccessKey: creds.secretAccessKey,
          ...(creds.sessionToken ? { sessionToken: creds.sessionToken } : {}),
        },
      });
      return { client, who: `access key id ${creds.accessKeyId} (from ${creds.from})` };
    }
    const from = creds.profile ? `profile ${creds.profile}` : "the AWS SDK's default chain";
    try {
      const id = await (probe.config.credentials as () => Promise<{ accessKeyId: string }>)();
      const client = make({ ...profile, region });
      return { client, who: `access key id ${id.accessKeyId} (from ${from})` };
    } catch (e) {
      if (creds.profile) {
        throw Object.assign(
          new Error(`profile ${creds.profile}: ${firstLine(String((e as Error).message ?? e))}`),
          { name: "CredentialsProviderError" },
        );
      }
    }
    // No credentials anywhere: unsigned requests, as for a public bucket.
    const client = make({
      region,
      httpAuthSchemes: [{
        schemeId: "smithy.api#noAuth",
        identityProvider: () => () => Promise.resolve({}),
        signer: { sign: (request: unknown) => Promise.resolve(request) },
      }],
      httpAuthSchemeProvider: () => [{ schemeId: "smithy.api#noAuth" }],
    });
    return { client, who: "no credentials found (anonymous request)" };
  }

  async check(signal: AbortSignal): Promise<ProbeResult> {
    let session: Session | undefined;
    try {
      session = await this.#session_(signal);
      return this.spec.uri.key === ""
        ? await this.#bucket(session, signal)
        : await this.#object(session, signal);
    } catch (e) {
      if (signal.aborted) return { status: "pending", error: "aborted" };
      return {
        status: "pending",
        error: describeS3Error(e, {
          bucket: this.spec.uri.bucket,
          key: this.spec.uri.key,
          endpoint: this.endpointText,
          who: session?.who ?? "",
        }),
      };
    }
  }

  async #bucket({ client }: Session, signal: AbortSignal): Promise<ProbeResult> {
    const sdk: S3Module = await import("@aws-sdk/client-s3");
    const Bucket = this.spec.uri.bucket;
    try {
      await client.send(new sdk.HeadBucketCommand({ Bucket }), { abortSignal: signal });
    } catch (e) {
      if (signal.aborted) throw e;
      // A HEAD answer has no body, so no error code: ask again with a GET to learn it.
      await client.send(new sdk.ListObjectsV2Command({ Bucket, MaxKeys: 1 }), {
        abortSignal: signal,
      });
      throw e;
    }
    return { status: "satisfied", detail: `bucket ${Bucket} exists` };
  }

  async #object({ client }: Session, signal: AbortSignal): Promise<ProbeResult> {
    const sdk: S3Module = await import("@aws-sdk/client-s3");
    const { bucket: Bucket, key: Key } = this.spec.uri;
    const contains = this.spec.contains;
    let facts: ObjectFacts;
    let found: Awaited<ReturnType<typeof bodyContains>> | undefined;
    const get = (Range: string) =>
      client.send(new sdk.GetObjectCommand({ Bucket, Key, Range }), { abortSignal: signal });
    if (contains === undefined) {
      try {
        const h = await client.send(new sdk.HeadObjectCommand({ Bucket, Key }), {
          abortSignal: signal,
        });
        facts = { size: h.ContentLength, etag: h.ETag, metadata: h.Metadata ?? {} };
      } catch (e) {
        if (signal.aborted) throw e;
        // A HEAD answer has no body, so no error code: ask again with a GET to learn it.
        const g = await get("bytes=0-0");
        await g.Body?.transformToWebStream().cancel().catch(() => {});
        throw e;
      }
    } else {
      try {
        const g = await get(`bytes=0-${CONTAINS_LIMIT - 1}`);
        facts = {
          size: totalFromContentRange(g.ContentRange) ?? g.ContentLength,
          etag: g.ETag,
          metadata: g.Metadata ?? {},
        };
        found = g.Body
          ? await bodyContains(
            g.Body.transformToWebStream() as ReadableStream<Uint8Array>,
            new TextEncoder().encode(contains),
            CONTAINS_LIMIT,
            signal,
          )
          : { found: false, read: 0, truncated: false };
      } catch (e) {
        if ((e as SdkError).$metadata?.httpStatusCode !== 416) throw e;
        // An empty object: a range cannot be satisfied.
        const h = await client.send(new sdk.HeadObjectCommand({ Bucket, Key }), {
          abortSignal: signal,
        });
        facts = { size: h.ContentLength ?? 0, etag: h.ETag, metadata: h.Metadata ?? {} };
        found = { found: false, read: 0, truncated: false };
      }
    }
    const what = describeObject(facts);
    const parts = [what];
    const mismatch = metadataMismatch(this.spec.metadata, facts.metadata);
    if (mismatch) return { status: "pending", error: `${what}; ${mismatch}` };
    if (this.spec.metadata.size) parts.push("metadata matched");
    if (contains !== undefined && found) {
      if (!found.found) {
        const where = found.truncated ? ` in its first ${formatSize(CONTAINS_LIMIT)}` : "";
        return {
          status: "pending",
          error: `${what}; does not contain ${JSON.stringify(contains)}${where}`,
        };
      }
      parts.push(`contains ${JSON.stringify(contains)}`);
    }
    return { status: "satisfied", detail: parts.join(", ") };
  }

  close(): void {
    for (const c of this.#clients) c.destroy();
    this.#clients = [];
  }
}

/** The objstore kind. */
export const objstore: ConditionKind = {
  name: "objstore",
  aliases: ["s3"],
  summary: "an object (or bucket) exists in S3-compatible storage, with metadata or content",
  description:
    "Satisfied when the object exists (HEAD), every --metadata NAME=VALUE matches its custom metadata (x-amz-meta-*, names case-insensitive) and, with --contains, its first 10 MiB include the text. A target without a key (objstore://BUCKET) waits for the bucket. The endpoint is --endpoint-url, else CLOUD_ENDPOINT_URL_S3, CLOUD_ENDPOINT_URL, S3_ENDPOINT_URL, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else AWS; an endpoint override uses path-style requests (--virtual-hosted-style opts out). Credentials: the flags, else CLOUD_ACCESS_KEY_ID/CLOUD_SECRET_ACCESS_KEY/CLOUD_SESSION_TOKEN, else the AWS SDK's default chain (AWS_* variables, --profile or AWS_PROFILE, web identity, container and instance metadata); with none at all, requests are anonymous (public buckets). Region: --region, else CLOUD_REGION, else the SDK's (AWS_REGION, the profile), else us-east-1. A missing object or bucket, a refused request (403, a wrong secret) and an unreachable endpoint are retried; last_error says which.",
  target: {
    shape: "required",
    placeholder: "objstore://BUCKET[/KEY]",
    description: "object URI (s3://BUCKET/KEY also works); without KEY, the bucket",
  },
  flags: [
    { name: "exists", type: "boolean", description: "the object (or bucket) exists (default)" },
    {
      name: "metadata",
      type: "string",
      repeatable: true,
      placeholder: "NAME=VALUE",
      description: "custom metadata NAME has VALUE; all given must match",
    },
    {
      name: "contains",
      type: "string",
      placeholder: "TEXT",
      description: "the object's first 10 MiB include TEXT",
    },
    {
      name: "endpoint-url",
      type: "string",
      placeholder: "URL",
      description: "S3-compatible endpoint (MinIO, R2, Ceph, ...); path-style requests",
    },
    {
      name: "virtual-hosted-style",
      type: "boolean",
      description:
        "with an endpoint override, address buckets as BUCKET.host instead of host/BUCKET",
    },
    {
      name: "region",
      type: "string",
      placeholder: "NAME",
      description: "region (default: CLOUD_REGION, AWS_REGION, the profile's, else us-east-1)",
    },
    {
      name: "access-key-id",
      type: "string",
      placeholder: "ID",
      description: "access key id (default: CLOUD_ACCESS_KEY_ID, else the SDK chain)",
    },
    {
      name: "secret-access-key",
      type: "string",
      placeholder: "SECRET",
      secret: true,
      description: "secret access key (default: CLOUD_SECRET_ACCESS_KEY)",
    },
    {
      name: "session-token",
      type: "string",
      placeholder: "TOKEN",
      secret: true,
      description: "session token of temporary credentials (default: CLOUD_SESSION_TOKEN)",
    },
    {
      name: "profile",
      type: "string",
      placeholder: "NAME",
      description: "profile of ~/.aws/config and ~/.aws/credentials to use",
    },
  ],
  examples: [
    {
      args: "s3 s3://releases/app/v1.2.3.tar.gz",
      description: "wait until an object exists in AWS S3 (credentials from the usual AWS chain)",
    },
    {
      args: "objstore objstore://builds/done.json --metadata build=42 --contains '\"ok\": true' " +
        "--endpoint-url http://localhost:9000",
      description: "wait for an object with metadata and content on MinIO",
    },
    {
      args: "s3 s3://uploads --endpoint-url https://ACCOUNT.r2.cloudflarestorage.com --region auto",
      description: "wait until a bucket exists on Cloudflare R2",
    },
  ],
  parse(input) {
    const spec = parseSpec(input);
    const probe = new ObjstoreProbe(spec);
    const p: Probe & { readonly spec: ObjstoreSpec } = {
      target: input.target ?? "",
      spec,
      check: ({ signal }) => probe.check(signal),
      close: () => probe.close(),
    };
    return p;
  },
};
