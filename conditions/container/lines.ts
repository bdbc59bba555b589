/**
 * Lines of a byte stream with a bound on what is kept: the Docker Engine's
 * events stream is one JSON object a line, and an engine (or whatever
 * answers on its socket) that sends a line without end must not grow memory
 * (docs/contract.md §9, Limits).
 *
 * @module
 */

import { concatBytes } from "../_common/stream.ts";

/**
 * Splits bytes into lines, keeping at most `max` bytes of the unfinished
 * one. A longer line is dropped whole, its end included; `dropped` counts
 * it as soon as it passes `max` bytes, so a reader can stop a stream whose
 * line has no end.
 */
export class BoundedLines {
  #parts: Uint8Array[] = [];
  #size = 0;
  #dropping = false;
  readonly #dec = new TextDecoder();
  /** Lines dropped for being longer than `max` bytes (the unfinished one included). */
  dropped = 0;

  constructor(readonly max: number) {}

  /** Bytes of the unfinished line held now (never more than `max`). */
  get buffered(): number {
    return this.#size;
  }

  /** The lines `chunk` completes, without their `\n`, in order. */
  push(chunk: Uint8Array): string[] {
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      this.#add(chunk.subarray(start, nl < 0 ? chunk.length : nl));
      if (nl < 0) return out;
      if (this.#dropping) this.#dropping = false;
      else out.push(this.#dec.decode(concatBytes(this.#parts, this.#size)));
      this.#parts = [];
      this.#size = 0;
      start = nl + 1;
    }
  }

  #add(piece: Uint8Array): void {
    if (this.#dropping || piece.length === 0) return;
    if (this.#size + piece.length > this.max) {
      this.#dropping = true;
      this.dropped++;
      this.#parts = [];
      this.#size = 0;
      return;
    }
    // Copied: the stream may reuse its buffer for the next chunk.
    this.#parts.push(piece.slice());
    this.#size += piece.length;
  }
}
