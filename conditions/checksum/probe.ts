/**
 * checksum's probe: a streamed digest (`node:crypto` createHash, one 1 MiB
 * buffer, whatever the file's size), computed again only when the file
 * changed: another size, mtime or inode, or a watch event (docs/contract.md
 * §5 checksum, §10).
 *
 * @module
 */

import { createHash } from "node:crypto";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { formatSize } from "../_common/bytes.ts";
import {
  assertUnchanged,
  ContentCache,
  invalidating,
  stampOf,
  statIfExists,
} from "../_common/filestamp.ts";
import { watchPath } from "../_common/watch.ts";
import type { Algorithm, ChecksumOptions } from "./mod.ts";

/** Bytes read at once. */
const CHUNK = 1 << 20;

/** The hex digest of the file at `path`, read in chunks; stops (throws) when `signal` aborts. */
export async function digestFile(
  path: string,
  algorithm: Algorithm,
  signal?: AbortSignal,
): Promise<string> {
  const hash = createHash(algorithm);
  const buf = new Uint8Array(CHUNK);
  using file = await Deno.open(path, { read: true });
  while (true) {
    signal?.throwIfAborted();
    const n = await file.read(buf);
    if (n === null) break;
    hash.update(buf.subarray(0, n));
  }
  return hash.digest("hex");
}

/** Makes the probe of one checksum condition. */
export function create(options: ChecksumOptions, env: ProbeEnv): Probe {
  const { path, algorithm, digest } = options;
  const cache = new ContentCache<ProbeResult>();
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const info = await statIfExists(path);
      if (info === undefined) return { status: "pending", error: "does not exist" };
      if (info.isDirectory) {
        return { status: "pending", error: "is a directory, not a file" };
      }
      const stamp = stampOf(info);
      const known = cache.get([stamp]);
      if (known !== undefined) return known;
      const generation = cache.begin();
      const got = await digestFile(path, algorithm, signal);
      await assertUnchanged(path, stamp, "the file");
      const size = formatSize(info.size);
      const result: ProbeResult = got === digest
        ? { status: "satisfied", detail: `${algorithm} matches (${size})` }
        : {
          status: "pending",
          error: `${algorithm} is ${got}, not the expected digest (${size})`,
        };
      cache.set([stamp], result, generation);
      return result;
    },
    watch: (ctx) => invalidating(watchPath(path, ctx, { clock: env.clock }), cache),
  };
}
