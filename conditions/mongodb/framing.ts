/**
 * A guard on the driver's message framing (docs/contract.md §9, limits).
 * The driver splits what the server sends into messages by the int32 length
 * each one starts with, and trusts it:
 *
 * - a length below the 16-byte message header (16 zero bytes from a server
 *   that is not MongoDB) is read as a message that consumes nothing, and the
 *   split loops on it without end, allocating as it goes: the thread never
 *   returns and its memory grows by hundreds of MB a second;
 * - a length of up to 2 GiB (random bytes) is waited for, its bytes kept.
 *
 * The driver offers no option for either (mongodb 7.9; its bugs are tracked
 * in MongoDB's Jira, where no report of this was found), so this module
 * wraps the splitter's methods, `SizedMessageTransform` of
 * mongodb/lib/cmap/connection.js: a message shorter than its header, or
 * announced longer than the server's maximum message size (48,000,000
 * bytes, the driver's own default of `maxMessageSizeBytes`), ends the
 * connection with an error that says so. Loaded by the probe module only.
 *
 * @module
 */

import { commonJsExports } from "../../engine/commonjs.ts";
import { type Memo, memoize } from "../_common/memo.ts";

/** Every MongoDB message starts with a 16-byte header (length, ids, opcode). */
export const HEADER_BYTES = 16;
/** The largest message a server sends (`maxMessageSizeBytes`, the driver's default). */
export const MAX_MESSAGE_BYTES = 48_000_000;

/** The splitter, as far as the guard uses it. */
interface Splitter {
  push(chunk: unknown): boolean;
  destroy(error: Error): void;
  _transform(chunk: unknown, encoding: string, callback: (error?: Error | null) => void): void;
  bufferPool: { length: number; getInt32(): number | null };
}

/** The error of a message the guard refuses. */
export function framingError(bytes: number): Error {
  return new Error(
    bytes < HEADER_BYTES
      ? `the server sent a message of ${bytes} bytes, shorter than a MongoDB message header ` +
        `(not a MongoDB server?)`
      : `the server announced a message of ${bytes} bytes, more than MongoDB's largest ` +
        `(${MAX_MESSAGE_BYTES}; not a MongoDB server?)`,
  );
}

/** The guard, installed once per thread; an import that failed is tried again. */
const guard: Memo<void> = memoize(async () => {
  const { SizedMessageTransform } = commonJsExports(
    await import("mongodb/lib/cmap/connection.js") as {
      SizedMessageTransform: { prototype: Splitter };
    },
  );
  const proto = SizedMessageTransform.prototype;
  const push = proto.push;
  proto.push = function (this: Splitter, chunk: unknown) {
    const n = (chunk as { length?: number } | null)?.length;
    if (n !== undefined && n < HEADER_BYTES) {
      this.destroy(framingError(n));
      // Refused: the driver's split loop stops here (it treats it as backpressure).
      return false;
    }
    return push.call(this, chunk);
  };
  const transform = proto._transform;
  proto._transform = function (this: Splitter, chunk, encoding, callback) {
    transform.call(this, chunk, encoding, (error) => {
      // What is left is the start of a message the driver waits for: its announced length.
      const waiting = !error && this.bufferPool.length >= 4 ? this.bufferPool.getInt32() : null;
      callback(waiting !== null && waiting > MAX_MESSAGE_BYTES ? framingError(waiting) : error);
    });
  };
});

/** Installs the guard on the driver's splitter (once per thread). */
export function guardFraming(): Promise<void> {
  return guard.get();
}
