/**
 * Writing to the process's streams (docs/contract.md §3): a text is written
 * whole or not at all, and a stream whose write failed (a closed pipe, a
 * full disk) gets nothing more. A failed write never changes the verdict's
 * exit code; it is said once, on stderr when stdout failed.
 *
 * @module
 */

import { describeError } from "../engine/errors.ts";

/** Something written to synchronously. */
export interface SyncWriter {
  writeSync(p: Uint8Array): number;
}

/** The process's output streams, each written whole or not at all. */
export class SafeStreams {
  readonly #failed = new Set<SyncWriter>();

  constructor(readonly stdout: SyncWriter, readonly stderr: SyncWriter) {}

  /** Writes `text` whole to `file`, or nothing once it has failed. */
  write(file: SyncWriter, text: string): void {
    if (this.#failed.has(file)) return;
    try {
      let data = new TextEncoder().encode(text);
      while (data.length > 0) data = data.subarray(file.writeSync(data));
    } catch (e) {
      this.#failed.add(file);
      if (file !== this.stderr) {
        const which = file === this.stdout ? "stdout" : "output";
        this.write(this.stderr, `waitcmd: writing to ${which} failed: ${describeError(e)}\n`);
      }
    }
  }
}
