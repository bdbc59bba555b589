/**
 * exec's output: stdout and stderr read together, in arrival order, with
 * one cap for both (docs/contract.md §9); the child never blocks on a full
 * pipe.
 *
 * @module
 */

import { clip, type SecretRegistry } from "../../engine/secrets.ts";
import { readCapped } from "../_common/stream.ts";

/** Most captured output (stdout and stderr together) kept per attempt. */
export const OUTPUT_CAP = 1 << 20;

/** Yields the chunks of every stream as they arrive, until all have ended. */
export async function* interleave(
  ...streams: ReadableStream<Uint8Array>[]
): AsyncGenerator<Uint8Array> {
  const readers = streams.map((s) => s.getReader());
  type Read = { i: number; r: ReadableStreamReadResult<Uint8Array> };
  const reads = new Map<number, Promise<Read>>();
  const pull = (i: number) => reads.set(i, readers[i]!.read().then((r) => ({ i, r })));
  readers.forEach((_, i) => pull(i));
  try {
    while (reads.size) {
      const { i, r } = await Promise.race(reads.values());
      if (r.done) {
        reads.delete(i);
        continue;
      }
      pull(i);
      yield r.value;
    }
  } finally {
    // Left early: stop the streams still open.
    for (const i of reads.keys()) readers[i]!.cancel().catch(() => {});
  }
}

/**
 * The command's output as text: stdout and stderr interleaved, at most
 * `OUTPUT_CAP` bytes kept, the rest read and dropped.
 */
export async function readOutput(child: Deno.ChildProcess): Promise<string> {
  const { bytes } = await readCapped(interleave(child.stdout, child.stderr), OUTPUT_CAP, {
    drain: true,
  });
  return new TextDecoder().decode(bytes);
}

/**
 * The last non-empty line of `text`, redacted and cut to 200 characters (in that order:
 * docs/contract.md §9).
 */
export function lastLine(text: string, secrets?: SecretRegistry): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  return clip(lines.at(-1) ?? "", 200, secrets);
}
