/**
 * Reading streams with a cap: a body, a command's output. Memory stays
 * bounded whatever the other side sends.
 *
 * @module
 */

/** What `readCapped` kept. */
export interface Capped {
  readonly bytes: Uint8Array;
  /** More data followed the first `limit` bytes. */
  readonly truncated: boolean;
}

/**
 * Reads `source` keeping at most `limit` bytes. With `drain`, the rest is
 * read and dropped (a child process must never block on a full pipe);
 * otherwise reading stops at the cap and the stream is cancelled.
 */
export async function readCapped(
  source: AsyncIterable<Uint8Array>,
  limit: number,
  opts: { drain?: boolean; signal?: AbortSignal } = {},
): Promise<Capped> {
  const parts: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of source) {
    opts.signal?.throwIfAborted();
    const room = limit - size;
    if (chunk.length > room) {
      truncated = true;
      if (room > 0) {
        parts.push(chunk.slice(0, room));
        size += room;
      }
      if (opts.drain) continue;
      break;
    }
    // Copy: a reader may reuse its buffer for the next chunk.
    parts.push(chunk.slice());
    size += chunk.length;
  }
  return { bytes: concatBytes(parts, size), truncated };
}

/** Joins byte chunks into one array. */
export function concatBytes(parts: readonly Uint8Array[], size?: number): Uint8Array {
  const out = new Uint8Array(size ?? parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
