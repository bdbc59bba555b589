/**
 * Files that feed a flag (a password, a CA bundle, a key): read whole, with
 * a size cap, so `--password-file /dev/zero` is an error and not gigabytes
 * of memory (docs/contract.md §9).
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";

/** The largest file a flag may name: far above any key, CA bundle or password. */
export const FLAG_FILE_MAX_BYTES = 4 << 20;

/**
 * The text of the file `path` given to `--flag`. Throws an error naming the
 * flag when it cannot be read or is larger than the cap.
 */
export async function readFlagFile(flag: string, path: string): Promise<string> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? "no such file or directory"
      : describeError(e).replace(/: \w+ '.*'$/, "");
    throw new Error(`cannot read --${flag} ${path}: ${why}`);
  }
  try {
    const buf = new Uint8Array(FLAG_FILE_MAX_BYTES + 1);
    let size = 0;
    while (size < buf.length) {
      const n = await file.read(buf.subarray(size));
      if (n === null) break;
      size += n;
    }
    if (size > FLAG_FILE_MAX_BYTES) {
      throw new Error(
        `cannot read --${flag} ${path}: larger than ${FLAG_FILE_MAX_BYTES >> 20} MiB`,
      );
    }
    return new TextDecoder().decode(buf.subarray(0, size));
  } finally {
    file.close();
  }
}
