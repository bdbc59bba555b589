/**
 * What a test of a Sigstore bundle needs, at either level: a temporary directory and a Sigstore
 * of the suite's own (tests/services/sigstore.ts).
 *
 * @module
 */

import { inTempDir } from "./services/_util.ts";
import { makeSigstore, type Sigstore } from "./services/sigstore.ts";

/** Runs `fn` in a fresh temporary directory with a fresh Sigstore; both are gone afterwards. */
export function withSigstore(
  fn: (dir: string, sigstore: Sigstore) => Promise<void>,
): Promise<void> {
  return inTempDir("waitcmd-sigstore-")(async (dir) => {
    const sigstore = await makeSigstore();
    try {
      await fn(dir, sigstore);
    } finally {
      await sigstore.close();
    }
  });
}
