import { assertEquals } from "../../tests/_assert.ts";
import { createSearcher, createSearchers, formatSize, indexOfBytes } from "./bytes.ts";

const enc = new TextEncoder();

/** A deterministic pseudo-random generator (tests must not be flaky). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

Deno.test("createSearcher() and indexOfBytes() find the same offsets as a naive search", () => {
  const r = rng(42);
  const alphabet = enc.encode("ab\nc");
  for (let round = 0; round < 300; round++) {
    const len = 1 + Math.floor(r() * 200);
    const needle = new Uint8Array(1 + Math.floor(r() * 20));
    for (let i = 0; i < needle.length; i++) needle[i] = alphabet[Math.floor(r() * 3)]!;
    const wasm = createSearcher(needle, 256);
    const hay = new Uint8Array(len);
    for (let i = 0; i < len; i++) {
      const b = alphabet[Math.floor(r() * 4)]!;
      wasm.buffer[i] = b;
      hay[i] = b;
    }
    const from = Math.floor(r() * len);
    const naive = (() => {
      outer: for (let i = from; i + needle.length <= len; i++) {
        for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
        return i;
      }
      return -1;
    })();
    assertEquals(wasm.find(from, len), naive, `round ${round}`);
    assertEquals(indexOfBytes(hay, needle, from), naive, `round ${round} (copied)`);
  }
});

Deno.test("indexOfBytes() finds a needle across its copy windows and at the very end", () => {
  const size = 3 * (1 << 20) + 5;
  const hay = new Uint8Array(size).fill(0x61);
  const needle = enc.encode("NEEDLE");
  for (const at of [0, (1 << 20) - 3, (1 << 20) - 1, 1 << 20, 2 * (1 << 20) - 2, size - 6]) {
    hay.set(needle, at);
    assertEquals(indexOfBytes(hay, needle), at, `at ${at}`);
    assertEquals(indexOfBytes(hay, needle, at + 1), -1, `after ${at}`);
    hay.fill(0x61, at, at + needle.length);
  }
  assertEquals(indexOfBytes(hay, needle), -1);
  // A needle longer than the copy window still fits (the scratch memory grows).
  const long = new Uint8Array((1 << 20) + 10).fill(0x62);
  const big = new Uint8Array(long.length + 7).fill(0x61);
  big.set(long, 7);
  assertEquals(indexOfBytes(big, long), 7);
});

Deno.test("indexOfBytes() edge cases: empty needle, short hay, negative from", () => {
  const hay = enc.encode("abcabc");
  assertEquals(indexOfBytes(hay, new Uint8Array(0)), 0);
  assertEquals(indexOfBytes(hay, new Uint8Array(0), 6), 6);
  assertEquals(indexOfBytes(hay, new Uint8Array(0), 7), -1);
  assertEquals(indexOfBytes(hay, enc.encode("abcabcd")), -1);
  assertEquals(indexOfBytes(hay, enc.encode("ca"), -5), 2);
  assertEquals(indexOfBytes(hay, enc.encode("abc"), 1), 3);
});

Deno.test("createSearchers() share one memory; without a needle nothing is found", () => {
  const needle = enc.encode("xy");
  const [a, b] = createSearchers(needle, 64, 2);
  a!.buffer.set(enc.encode("..xy"));
  b!.buffer.set(enc.encode("xy.."));
  assertEquals([a!.find(0, 4), b!.find(0, 4), b!.find(1, 4)], [2, 0, -1]);
  assertEquals(a!.buffer.buffer, b!.buffer.buffer);
  const none = createSearcher(undefined, 16);
  none.buffer.set(enc.encode("xy"));
  assertEquals([none.buffer.length, none.find(0, 16)], [16, -1]);
});

Deno.test("formatSize() uses binary units with one decimal", () => {
  assertEquals(
    [0, 1023, 1024, 1536, 5 * (1 << 20), 3 * 2 ** 40, 2 ** 52].map(formatSize),
    ["0 B", "1023 B", "1.0 KiB", "1.5 KiB", "5.0 MiB", "3.0 TiB", "4096.0 TiB"],
  );
});
