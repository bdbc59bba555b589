/**
 * Files that feed a flag (a password, a CA bundle, a key): read whole, with
 * a size cap, so `--password-file /dev/zero` is an error and not gigabytes
 * of memory (docs/contract.md §9). A pipe (`<(echo pw)`) is read like a file.
 *
 * @module
 */

import { FileReadError, readBounded } from "../../engine/files.ts";

/** The largest file a flag may name: far above any key, CA bundle or password. */
export const FLAG_FILE_MAX_BYTES = 4 << 20;

/**
 * The text of the file `path` given to `--flag`. Throws an error naming the
 * flag when it cannot be read or is larger than the cap.
 */
export async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return await readBounded(path, FLAG_FILE_MAX_BYTES);
  } catch (e) {
    if (!(e instanceof FileReadError)) throw e;
    throw new Error(`cannot read --${flag} ${path}: ${e.message}`);
  }
}
