/**
 * cosign's probe: verifies the blob's signature (docs/contract.md §5
 * cosign) with `node:crypto` for a detached signature, or @sigstore/verify
 * for a bundle; verified again only when the blob or the signature changed
 * (another size, mtime or inode, or a watch event on either).
 *
 * @module
 */

import { createVerify, verify } from "node:crypto";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { formatSize } from "../_common/bytes.ts";
import { eachChunk } from "../_common/chunks.ts";
import {
  assertUnchanged,
  ContentCache,
  type FileStamp,
  invalidating,
  mergeIterables,
  stampOf,
} from "../_common/filestamp.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { memoize } from "../_common/memo.ts";
import { watchPath } from "../_common/watch.ts";
import { decodeSignature, loadPublicKey, type PublicKey } from "./keys.ts";
import type { CosignOptions } from "./mod.ts";
import { loadTrustMaterial, verifyBundle } from "./sigstore.ts";

/**
 * The largest blob read whole into memory: Ed25519 signs the blob itself and
 * a bundle's verifier takes the whole artifact. ECDSA and RSA signatures
 * over SHA-256 are checked streaming, whatever the size.
 */
export const WHOLE_BLOB_MAX = 512 << 20;

/** The stamp of `path`, or a pending reason naming `what` when it is not there (yet). */
async function stampFile(path: string, what: string): Promise<FileStamp | string> {
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) return `${what} ${path} is a directory`;
    return stampOf(info);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return `${what} ${path} does not exist`;
    throw e;
  }
}

/** Whether `sig` is a signature by `pub` over the blob at `path`, streaming when it can. */
export async function verifyBlob(
  path: string,
  pub: PublicKey,
  sig: Uint8Array,
  signal?: AbortSignal,
): Promise<boolean> {
  if (pub.ed25519) return verify(null, await readWhole(path, signal), pub.key, sig);
  const v = createVerify("sha256");
  await eachChunk(path, signal, (chunk) => v.update(chunk));
  return v.verify(pub.key, sig);
}

/** The whole blob, up to `WHOLE_BLOB_MAX`. */
async function readWhole(path: string, signal?: AbortSignal): Promise<Uint8Array> {
  using file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  if (size > WHOLE_BLOB_MAX) {
    throw new Error(
      `the blob is ${formatSize(size)}: larger than the ${
        formatSize(WHOLE_BLOB_MAX)
      } read whole for this signature`,
    );
  }
  const out = new Uint8Array(size);
  let got = 0;
  while (got < size) {
    signal?.throwIfAborted();
    const n = await file.read(out.subarray(got));
    if (n === null) break;
    got += n;
  }
  return out.subarray(0, got);
}

/** Makes the probe of one cosign condition. */
export function create(options: CosignOptions, env: ProbeEnv): Probe {
  const { blob } = options;
  const sigPath = options.mode === "key" ? options.signature : options.bundle;
  const sigWhat = options.mode === "key" ? "signature" : "bundle";
  const cache = new ContentCache<ProbeResult>();
  // Checked before the run (validate); loaded once here.
  const key = memoize(() =>
    options.key === undefined ? Promise.resolve(undefined) : loadPublicKey(options.key)
  );
  const trust = memoize(async () =>
    options.mode === "bundle"
      ? await loadTrustMaterial(options.trustedRoot, (await key.get())?.key)
      : undefined
  );

  async function judge(signal: AbortSignal): Promise<ProbeResult> {
    if (options.mode === "key") {
      const pub = (await key.get(signal))!;
      const sig = decodeSignature(await readFlagFile("signature", options.signature));
      return (await verifyBlob(blob, pub, sig, signal))
        ? { status: "satisfied", detail: `signature verified (${pub.label} key)` }
        : {
          status: "pending",
          error: `the signature does not verify with the ${pub.label} key`,
        };
    }
    const bundleText = await readFlagFile("bundle", options.bundle);
    const signer = verifyBundle(
      bundleText,
      await readWhole(blob, signal),
      (await trust.get(signal))!,
    );
    return { status: "satisfied", detail: `bundle verified (signed by ${signer})` };
  }

  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const blobStamp = await stampFile(blob, "blob");
      if (typeof blobStamp === "string") return { status: "pending", error: blobStamp };
      const sigStamp = await stampFile(sigPath, sigWhat);
      if (typeof sigStamp === "string") return { status: "pending", error: sigStamp };
      const stamps = [blobStamp, sigStamp];
      const known = cache.get(stamps);
      if (known !== undefined) return known;
      const generation = cache.begin();
      let result: ProbeResult;
      try {
        result = await judge(signal);
      } catch (e) {
        if (signal.aborted) throw e;
        result = { status: "pending", error: e instanceof Error ? e.message : String(e) };
      }
      await assertUnchanged(blob, blobStamp, "the blob");
      await assertUnchanged(sigPath, sigStamp, `the ${sigWhat}`);
      cache.set(stamps, result, generation);
      return result;
    },
    watch: (ctx) =>
      invalidating(
        mergeIterables([
          watchPath(blob, ctx, { clock: env.clock }),
          watchPath(sigPath, ctx, { clock: env.clock }),
        ]),
        cache,
      ),
  };
}
