/**
 * Byte-level helpers: searching a file for a text without loading it whole,
 * and human-readable sizes.
 *
 * @module
 */

const CHUNK = 1 << 20;

/** Index of `needle` in `hay` from `from`, or -1 (a plain scan keyed on the first byte). */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  if (needle.length === 0) return from <= hay.length ? from : -1;
  const first = needle[0]!;
  const last = hay.length - needle.length;
  let i = hay.indexOf(first, from);
  while (i !== -1 && i <= last) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
    i = hay.indexOf(first, i + 1);
  }
  return -1;
}

/**
 * Whether the file contains `text`, reading it in 1 MiB chunks with an
 * overlap so a match across chunk borders is found; memory stays bounded.
 */
export async function fileContains(
  path: string,
  text: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const needle = new TextEncoder().encode(text);
  using file = await Deno.open(path, { read: true });
  const buf = new Uint8Array(CHUNK + needle.length);
  let carry = 0;
  while (true) {
    signal?.throwIfAborted();
    const n = await file.read(buf.subarray(carry, carry + CHUNK));
    if (n === null) return false;
    const filled = carry + n;
    if (indexOfBytes(buf.subarray(0, filled), needle) !== -1) return true;
    carry = Math.min(needle.length - 1, filled);
    buf.copyWithin(0, filled - carry, filled);
  }
}

/** `512 B`, `1.2 KiB`, `3.4 MiB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}
