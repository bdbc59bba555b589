/**
 * objstore (alias s3): an object, or a bucket, exists in S3-compatible object
 * storage, optionally with custom metadata and a text in its body
 * (docs/contract.md §5 objstore).
 *
 * Talks to the service with `@aws-sdk/client-s3`, imported by the probe
 * (`client.ts`). An endpoint override (MinIO, R2, Ceph, versitygw, ...) uses
 * path-style addressing and the SDK's request checksums only where the API
 * requires them, so that S3-compatible servers accept the requests. This
 * file declares the kind and parses its flags; `judge.ts` reads the answers and
 * `errors.ts` the SDK's errors.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";

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

/**
 * Parses `objstore://BUCKET[/KEY]` (or `s3://`); the key is taken literally.
 * Throws an `Error` whose message is the usage problem.
 */
export function parseObjectUri(text: string): ObjectUri {
  const m = /^(objstore|s3):\/\/([^/]*)(?:\/(.*))?$/is.exec(text);
  const expected = "expected objstore://BUCKET/KEY or s3://BUCKET/KEY";
  if (!m) throw new Error(`${expected}, got ${JSON.stringify(text)}`);
  const bucket = m[2]!;
  if (!BUCKET.test(bucket)) {
    throw new Error(
      bucket === ""
        ? `${expected}: the bucket name is missing in ${JSON.stringify(text)}`
        : `bucket names have 3 to 255 letters, digits, dots, hyphens or underscores, got ${
          JSON.stringify(bucket)
        }`,
    );
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

/** What an objstore condition needs: plain data settled by `parse`. */
export interface ObjstoreOptions {
  readonly uri: ObjectUri;
  /** Wanted custom metadata as NAME, VALUE pairs; lower-cased names. */
  readonly metadata: readonly (readonly [string, string])[];
  readonly contains: string | undefined;
  /** Undefined: AWS itself. */
  readonly endpoint: Endpoint | undefined;
  readonly pathStyle: boolean;
  /** Undefined: the SDK's region (AWS_REGION, profile), else us-east-1. */
  readonly region: string | undefined;
  readonly credentials: CredentialSource;
}

/** A bad endpoint URL; `from` is where it came from (`--endpoint-url` or a variable). */
export class EndpointError extends Error {
  override name = "EndpointError";
  constructor(message: string, readonly from: string) {
    super(message);
  }
}

/** An endpoint and where it came from. */
export interface Endpoint {
  readonly url: string;
  readonly from: string;
}

/**
 * The endpoint from `--endpoint-url`, else the first set variable, else
 * undefined (AWS itself). Throws an `EndpointError` for a URL that is not
 * http(s) or carries credentials.
 */
export function endpointOf(
  flag: string | undefined,
  env: Readonly<Record<string, string>>,
): Endpoint | undefined {
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
  const notHttp = `expected an http(s) URL like http://localhost:9000, got ${JSON.stringify(url)}`;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new EndpointError(notHttp, from);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new EndpointError(notHttp, from);
  if (u.username || u.password) {
    throw new EndpointError(
      "the endpoint URL must not carry credentials; use --access-key-id",
      from,
    );
  }
  return { url: u.href.replace(/\/$/, ""), from };
}

function parseOptions(input: KindInput): ObjstoreOptions {
  let uri: ObjectUri;
  try {
    uri = parseObjectUri(input.target ?? "");
  } catch (e) {
    return input.fail(undefined, (e as Error).message);
  }
  const { key } = uri;
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

  let endpoint: Endpoint | undefined;
  try {
    endpoint = endpointOf(input.string("endpoint-url"), input.env);
  } catch (e) {
    const { from, message } = e as EndpointError;
    if (from === "--endpoint-url") input.fail("endpoint-url", message);
    input.fail(undefined, `${from}: ${message}`);
  }
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
    uri,
    metadata: [...metadata],
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

/** The objstore kind. */
export const objstore = defineKind<ObjstoreOptions>({
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
    return { target: input.target ?? "", options: parseOptions(input) };
  },
  claims(word) {
    return /^s3:\/\/./i.test(word) ? `s3 ${word}` : undefined;
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});
