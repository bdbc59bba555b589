/**
 * A real S3 endpoint for waitcmd's objstore-kind tests: versitygw (built from
 * the Go module proxy by scripts/services/build-versitygw.sh, cached under
 * {@linkcode cacheDir}) with its POSIX backend, serving path-style requests on
 * a free loopback port. It verifies SigV4 signatures (a wrong secret gets
 * 403) and keeps `x-amz-meta-*` metadata in sidecar files.
 *
 * Setup calls go through the real signing client `@aws-sdk/client-s3`.
 *
 * @module
 */

import {
  CreateBucketCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  ListBucketsCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import {
  freePort,
  once,
  randomHex,
  runBuildScript,
  ServiceUnavailableError,
  sharedService,
  startLogged,
} from "../../tests/services/_util.ts";

/** versitygw release built and started (keep in step with build-versitygw.sh). */
export const VERSITYGW_VERSION = "v1.8.0";

/** Credentials and endpoint of an S3 service, enough to build any S3 client. */
export interface S3Credentials {
  /** `http://127.0.0.1:<port>`; use path-style addressing. */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: "us-east-1";
}

/** A running versitygw and helpers to set up buckets and objects. */
export interface S3Env extends S3Credentials {
  /** Temporary directory holding the data, the metadata sidecars and the log. */
  readonly dir: string;
  /** versitygw's log file. */
  readonly logFile: string;
  /** A signing client with the root credentials (path-style, checksums only when required). */
  readonly client: S3Client;
  /**
   * A new client for this endpoint with other credentials, e.g. a wrong secret;
   * the caller should `destroy()` it.
   */
  clientWith(accessKeyId: string, secretAccessKey: string): S3Client;
  /** Creates a bucket. */
  createBucket(name: string): Promise<void>;
  /** Puts an object; `metadata` becomes `x-amz-meta-*` headers. Returns the ETag. */
  putObject(
    bucket: string,
    key: string,
    body: string | Uint8Array,
    metadata?: Record<string, string>,
    contentType?: string,
  ): Promise<string | undefined>;
  /** HEADs an object (throws the SDK's error, e.g. `NotFound`, when missing). */
  headObject(bucket: string, key: string): Promise<HeadObjectCommandOutput>;
  /** Deletes an object (S3 answers success for a missing key too). */
  deleteObject(bucket: string, key: string): Promise<void>;
  /** Stops versitygw and removes {@linkcode dir} (set WAITCMD_KEEP_SERVICE_DIRS=1 to keep it). */
  stop(): Promise<void>;
}

/** Thrown when the binaries cannot be built (no Go toolchain, no module proxy, ...). */
export const S3UnavailableError = ServiceUnavailableError;

/**
 * Runs build-versitygw.sh (a no-op once cached; a cold build takes a few
 * minutes and reports progress on stderr) and returns the binary's path.
 */
export function buildVersitygw(): Promise<string> {
  return runBuildScript("build-versitygw.sh", `versitygw ${VERSITYGW_VERSION}`);
}

/** An S3 client configured the way S3-compatible endpoints need. */
export function makeS3Client(creds: S3Credentials): S3Client {
  return new S3Client({
    endpoint: creds.endpoint,
    region: creds.region,
    credentials: { accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: 1,
  });
}

/**
 * Builds (cached) and starts versitygw on a free loopback port with fresh
 * random root credentials, waits until it answers a signed ListBuckets, and
 * returns the environment. Throws {@linkcode S3UnavailableError} when the
 * binary cannot be built. Call `stop()` when done.
 *
 * The AWS SDK keeps sockets and timers around, so tests using it need
 * `sanitizeOps: false, sanitizeResources: false`.
 */
export async function startS3(): Promise<S3Env> {
  const bin = await buildVersitygw();
  const port = freePort();
  const creds: S3Credentials = {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId: "AKWAITCMD" + randomHex(6).toUpperCase(),
    secretAccessKey: randomHex(20),
    region: "us-east-1",
  };
  const c = makeS3Client(creds);
  const clients = new Set<S3Client>([c]);
  try {
    const svc = await startLogged({
      prefix: "waitcmd-s3-",
      log: "versitygw.log",
      what: "versitygw to answer a signed ListBuckets",
      cmd: bin,
      async args(dir) {
        await Deno.mkdir(`${dir}/data`);
        await Deno.mkdir(`${dir}/meta`);
        return [
          "--port",
          `127.0.0.1:${port}`,
          "--region",
          creds.region,
          "posix",
          "--sidecar",
          `${dir}/meta`,
          `${dir}/data`,
        ];
      },
      env: { ROOT_ACCESS_KEY: creds.accessKeyId, ROOT_SECRET_KEY: creds.secretAccessKey },
      async ready() {
        await c.send(new ListBucketsCommand({}));
        return true;
      },
      timeoutMs: 30_000,
    });
    const env: S3Env = {
      ...creds,
      dir: svc.dir,
      logFile: svc.logFile,
      client: c,
      clientWith(accessKeyId, secretAccessKey) {
        const other = makeS3Client({ ...creds, accessKeyId, secretAccessKey });
        clients.add(other);
        return other;
      },
      async createBucket(name) {
        await c.send(new CreateBucketCommand({ Bucket: name }));
      },
      async putObject(bucket, key, body, metadata, contentType) {
        const r = await c.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: body,
            Metadata: metadata,
            ContentType: contentType,
          }),
        );
        return r.ETag;
      },
      headObject: (bucket, key) => c.send(new HeadObjectCommand({ Bucket: bucket, Key: key })),
      async deleteObject(bucket, key) {
        await c.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      },
      stop: once(async () => {
        for (const client of clients) client.destroy();
        await svc.stop();
      }),
    };
    return env;
  } catch (err) {
    for (const client of clients) client.destroy();
    throw err;
  }
}

const shared = sharedService(startS3);

/**
 * One {@linkcode S3Env} per test process, started on first use; tests should
 * use their own buckets. Stopped by {@linkcode stopSharedS3}, or at the latest
 * when the process unloads. A failed start is remembered.
 */
export function sharedS3(): Promise<S3Env> {
  return shared.get();
}

/** Stops the environment started by {@linkcode sharedS3}, if any. */
export function stopSharedS3(): Promise<void> {
  return shared.stop();
}
