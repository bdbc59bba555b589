/**
 * objstore's probe: one client per condition (made on first use, made again
 * after a failed making), a HEAD per attempt, a ranged GET with `--contains`.
 * Every refusal is retried; the SDK's errors become short reasons that say
 * what was refused (docs/contract.md §5 objstore).
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { formatSize, indexOfBytes } from "../_common/bytes.ts";
import { memoize } from "../_common/memo.ts";
import { connect, type S3Client, s3Library, type Session } from "./client.ts";
import {
  describeObject,
  metadataMismatch,
  type ObjectFacts,
  totalFromContentRange,
} from "./judge.ts";
import { describeS3Error, type SdkError } from "./errors.ts";
import type { ObjstoreOptions } from "./mod.ts";

/** Most body bytes `--contains` reads. */
export const CONTAINS_LIMIT = 10 << 20;

/** What `--contains` found in the first `CONTAINS_LIMIT` bytes. */
interface Found {
  readonly found: boolean;
  readonly read: number;
  readonly truncated: boolean;
}

/** Makes the probe of one objstore condition. */
export async function create(o: ObjstoreOptions, env: ProbeEnv): Promise<Probe> {
  await s3Library.get();
  let clients: S3Client[] = [];
  const session = memoize(() => connect(o, (c) => clients.push(c)));
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      let s: Session | undefined;
      try {
        s = await session.get(signal);
        return o.uri.key === "" ? await checkBucket(o, s, signal) : await checkObject(o, s, signal);
      } catch (e) {
        if (signal.aborted) throw e;
        const error = describeS3Error(e, {
          bucket: o.uri.bucket,
          key: o.uri.key,
          endpoint: o.endpoint?.url ?? "AWS S3",
          who: s?.who ?? "",
          secrets: env.secrets,
        });
        return { status: "pending", error };
      }
    },
    close() {
      for (const c of clients) c.destroy();
      clients = [];
      session.reset();
    },
  };
}

async function checkBucket(
  o: ObjstoreOptions,
  { sdk, client }: Session,
  signal: AbortSignal,
): Promise<ProbeResult> {
  const Bucket = o.uri.bucket;
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

async function checkObject(
  o: ObjstoreOptions,
  { sdk, client }: Session,
  signal: AbortSignal,
): Promise<ProbeResult> {
  const { bucket: Bucket, key: Key } = o.uri;
  const contains = o.contains;
  let facts: ObjectFacts;
  let found: Found | undefined;
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
  const mismatch = metadataMismatch(o.metadata, facts.metadata);
  if (mismatch) return { status: "pending", error: `${what}; ${mismatch}` };
  if (o.metadata.length) parts.push("metadata matched");
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

/** Streams `body`, stopping at `limit` bytes; whether `needle` occurs in what was read. */
async function bodyContains(
  body: ReadableStream<Uint8Array>,
  needle: Uint8Array,
  limit: number,
  signal: AbortSignal,
): Promise<Found> {
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
