/**
 * A whole file streamed in chunks through one 1 MiB buffer, whatever its size: the kinds that
 * digest or verify a file's content, in a bounded memory (docs/contract.md §9).
 *
 * @module
 */

/** Bytes read at once. */
const CHUNK = 1 << 20;

/**
 * Hands the file at `path` to `take`, chunk by chunk, in order. The buffer is reused: `take` must
 * use a chunk before it returns. Stops (throws) when `signal` aborts.
 */
export async function eachChunk(
  path: string,
  signal: AbortSignal | undefined,
  take: (chunk: Uint8Array) => void,
): Promise<void> {
  const buf = new Uint8Array(CHUNK);
  using file = await Deno.open(path, { read: true });
  while (true) {
    signal?.throwIfAborted();
    const n = await file.read(buf);
    if (n === null) break;
    take(buf.subarray(0, n));
  }
}
