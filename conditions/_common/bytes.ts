/**
 * Byte-level helpers: the one byte searcher (a WebAssembly SIMD search) and
 * human-readable sizes.
 *
 * The searcher compares two bytes of the needle with 16 positions at once
 * and verifies the candidates. Its fastest use is `createSearcher`: reads go
 * straight into the searcher's own memory, so nothing is copied before the
 * search. `indexOfBytes` searches any array (copied through a bounded
 * scratch window). Measured over 256 MiB of log lines, needle absent:
 * WebAssembly SIMD about 330 ms/GiB in place, Boyer-Moore-Horspool in
 * JavaScript about 720, a first-byte `indexOf` scan with a byte-by-byte
 * check about 1,800-2,400, node:buffer's `indexOf` about 10,000.
 *
 * @module
 */

import { FatalError } from "../../engine/errors.ts";

/** A read buffer with a fast search for one needle in it. */
export interface Searcher {
  /** Reads go straight into this buffer, so searching needs no copy. */
  readonly buffer: Uint8Array;
  /** Where the needle starts in `buffer[from, to)` (wholly inside it), or -1. */
  find(from: number, to: number): number;
}

/*
 * find(hay, len, ndl, m) -> index of the m-byte needle at `ndl` in the `len`
 * bytes at `hay`, or -1. Compares the needle's first and last bytes with 16
 * positions at once (i8x16.eq on two loads m-1 apart), verifies candidates
 * byte by byte, then finishes the last positions one at a time. Built with
 * `wat2wasm` (Debian package wabt 1.0.32) from:
 *
 * (module
 *   (import "env" "memory" (memory 1))
 *   (func (export "find") (param $hay i32) (param $len i32) (param $ndl i32) (param $m i32)
 *     (result i32)
 *     (local $i i32) (local $limit i32) (local $first v128) (local $last v128)
 *     (local $mask i32) (local $at i32) (local $k i32) (local $p i32)
 *     (if (i32.gt_u (local.get $m) (local.get $len)) (then (return (i32.const -1))))
 *     (local.set $limit (i32.sub (local.get $len) (local.get $m)))
 *     (local.set $first (i8x16.splat (i32.load8_u (local.get $ndl))))
 *     (local.set $last (i8x16.splat
 *       (i32.load8_u (i32.add (local.get $ndl) (i32.sub (local.get $m) (i32.const 1))))))
 *     (block $simd_done
 *       (loop $blocks
 *         (br_if $simd_done (i32.gt_s (i32.add (local.get $i) (i32.const 15)) (local.get $limit)))
 *         (local.set $p (i32.add (local.get $hay) (local.get $i)))
 *         (local.set $mask (i8x16.bitmask (v128.and
 *           (i8x16.eq (v128.load (local.get $p)) (local.get $first))
 *           (i8x16.eq (v128.load (i32.add (local.get $p) (i32.sub (local.get $m) (i32.const 1))))
 *                     (local.get $last)))))
 *         (block $cands_done
 *           (loop $cands
 *             (br_if $cands_done (i32.eqz (local.get $mask)))
 *             (local.set $at (i32.add (local.get $p) (i32.ctz (local.get $mask))))
 *             (local.set $k (i32.const 1))
 *             (block $mismatch
 *               (loop $verify
 *                 (if (i32.ge_s (local.get $k) (i32.sub (local.get $m) (i32.const 1)))
 *                   (then (return (i32.sub (local.get $at) (local.get $hay)))))
 *                 (br_if $mismatch (i32.ne
 *                   (i32.load8_u (i32.add (local.get $at) (local.get $k)))
 *                   (i32.load8_u (i32.add (local.get $ndl) (local.get $k)))))
 *                 (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *                 (br $verify)))
 *             (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
 *             (br $cands)))
 *         (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *         (br $blocks)))
 *     (block $tail_done
 *       (loop $tail
 *         (br_if $tail_done (i32.gt_s (local.get $i) (local.get $limit)))
 *         (local.set $p (i32.add (local.get $hay) (local.get $i)))
 *         (local.set $k (i32.const 0))
 *         (block $mm
 *           (loop $v
 *             (if (i32.ge_s (local.get $k) (local.get $m)) (then (return (local.get $i))))
 *             (br_if $mm (i32.ne
 *               (i32.load8_u (i32.add (local.get $p) (local.get $k)))
 *               (i32.load8_u (i32.add (local.get $ndl) (local.get $k)))))
 *             (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *             (br $v)))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $tail)))
 *     (i32.const -1)))
 */
const FIND_WASM =
  "AGFzbQEAAAABCQFgBH9/f38BfwIPAQNlbnYGbWVtb3J5AgABAwIBAAcIAQRmaW5kAAAKmwIBmAIDAn8CewR/IAMgAUsEQEF/DwsgASADayEFIAItAAD9DyEGIAIgA0EBa2otAAD9DyEHAkADQCAEQQ9qIAVKDQEgACAEaiELIAv9AAQAIAb9IyALIANBAWtq/QAEACAH/SP9Tv1kIQgCQANAIAhFDQEgCyAIaGohCUEBIQoCQANAIAogA0EBa04EQCAJIABrDwsgCSAKai0AACACIApqLQAARw0BIApBAWohCgwACwsgCCAIQQFrcSEIDAALCyAEQRBqIQQMAAsLAkADQCAEIAVKDQEgACAEaiELQQAhCgJAA0AgCiADTgRAIAQPCyALIApqLQAAIAIgCmotAABHDQEgCkEBaiEKDAALCyAEQQFqIQQMAAsLQX8L";

/** The search function of one instance: see FIND_WASM. */
type WasmFind = (hay: number, len: number, ndl: number, m: number) => number;

const PAGE = 65536;
let findModule: WebAssembly.Module | undefined;

/** An instance of the search module on `memory`. */
function instantiate(memory: WebAssembly.Memory): WasmFind {
  if (findModule === undefined) {
    try {
      findModule = new WebAssembly.Module(Uint8Array.from(atob(FIND_WASM), (c) => c.charCodeAt(0)));
    } catch (e) {
      // Every Deno has WebAssembly SIMD; a runtime without it cannot search.
      throw new FatalError(`cannot search bytes: WebAssembly SIMD is unavailable (${e})`);
    }
  }
  const instance = new WebAssembly.Instance(findModule, { env: { memory } });
  return instance.exports.find as WasmFind;
}

/**
 * `count` read buffers of `size` bytes, each searchable for `needle` (no
 * search without one: `find` returns -1). They share one WebAssembly
 * memory, so a read lands where the search runs.
 */
export function createSearchers(
  needle: Uint8Array | undefined,
  size: number,
  count: number,
): Searcher[] {
  const indices = Array.from({ length: count }, (_, i) => i);
  if (!needle || needle.length === 0) {
    return indices.map(() => ({ buffer: new Uint8Array(size), find: () => -1 }));
  }
  const at = size * count; // the needle follows the buffers
  const pages = Math.ceil((at + needle.length) / PAGE);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const find = instantiate(memory);
  new Uint8Array(memory.buffer).set(needle, at);
  const m = needle.length;
  return indices.map((i) => {
    const base = i * size;
    return {
      buffer: new Uint8Array(memory.buffer, base, size),
      find(from: number, to: number) {
        const r = find(base + from, to - from, at, m);
        return r < 0 ? -1 : from + r;
      },
    };
  });
}

/** One searchable read buffer (see `createSearchers`). */
export function createSearcher(needle: Uint8Array | undefined, size: number): Searcher {
  return createSearchers(needle, size, 1)[0]!;
}

/** Start positions searched per copy into the scratch memory of `indexOfBytes`. */
const WINDOW = 1 << 20;

/** The scratch memory of `indexOfBytes`: the needle at 0, the copied window after it. */
let scratch: { memory: WebAssembly.Memory; find: WasmFind } | undefined;

/**
 * Index of `needle` in `hay` from `from`, or -1. `hay` is copied into the
 * searcher's memory a window at a time (at most 1 MiB plus the needle);
 * read into a `createSearcher` buffer instead to avoid the copy.
 */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  const m = needle.length;
  const start0 = Math.max(0, from);
  if (m === 0) return start0 <= hay.length ? start0 : -1;
  if (hay.length - start0 < m) return -1;
  const needed = Math.ceil((m + WINDOW + m) / PAGE);
  if (scratch === undefined) {
    const memory = new WebAssembly.Memory({ initial: needed });
    scratch = { memory, find: instantiate(memory) };
  }
  const have = scratch.memory.buffer.byteLength / PAGE;
  if (have < needed) scratch.memory.grow(needed - have);
  const mem = new Uint8Array(scratch.memory.buffer);
  mem.set(needle, 0);
  for (let start = start0; start + m <= hay.length; start += WINDOW) {
    const end = Math.min(hay.length, start + WINDOW + m - 1);
    mem.set(hay.subarray(start, end), m);
    const r = scratch.find(m, end - start, 0, m);
    if (r >= 0) return start + r;
  }
  return -1;
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
