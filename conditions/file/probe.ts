/**
 * file's probe: one `stat` per attempt (and a read for `--contains`),
 * woken by changes to the path.
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { createSearcher, formatSize } from "../_common/bytes.ts";
import { statIfExists } from "../_common/filestamp.ts";
import { watchPath } from "../_common/watch.ts";
import type { FileOptions } from "./mod.ts";

/** Bytes read at once by `fileContains`. */
const CHUNK = 1 << 20;

/**
 * Whether the file contains `text`, reading it in 1 MiB chunks straight
 * into the byte searcher's memory, with an overlap so a match across chunk
 * borders is found; memory stays bounded. Throws what opening or reading
 * throws.
 */
export async function fileContains(
  path: string,
  text: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const needle = new TextEncoder().encode(text);
  const searcher = createSearcher(needle, CHUNK + needle.length);
  const buf = searcher.buffer;
  using file = await Deno.open(path, { read: true });
  let carry = 0;
  while (true) {
    signal?.throwIfAborted();
    const n = await file.read(buf.subarray(carry, carry + CHUNK));
    if (n === null) return false;
    const filled = carry + n;
    if (searcher.find(0, filled) !== -1) return true;
    carry = Math.min(needle.length - 1, filled);
    buf.copyWithin(0, filled - carry, filled);
  }
}

/**
 * Makes the probe of one file condition. A failing `stat` or read other than
 * a missing path escapes `check`: the engine reports it as a pending attempt
 * (docs/contract.md §8).
 */
export function create(options: FileOptions, env: ProbeEnv): Probe {
  const { path, deleted, nonempty, contains } = options;
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const info = await statIfExists(path);
      if (info === undefined) {
        return deleted
          ? { status: "satisfied", detail: "does not exist" }
          : { status: "pending", error: "does not exist" };
      }
      if (deleted) return { status: "pending", error: "still exists" };
      const what = info.isDirectory ? "directory" : formatSize(info.size);
      if (nonempty && info.size === 0) return { status: "pending", error: "exists but is empty" };
      if (contains === undefined) return { status: "satisfied", detail: `exists (${what})` };
      if (info.isDirectory) return { status: "pending", error: "is a directory, not a file" };
      const quoted = JSON.stringify(contains);
      if (!(await fileContains(path, contains, signal))) {
        return { status: "pending", error: `does not contain ${quoted} (${what})` };
      }
      return { status: "satisfied", detail: `contains ${quoted} (${what})` };
    },
    watch: (ctx) => watchPath(path, ctx, { clock: env.clock }),
  };
}
