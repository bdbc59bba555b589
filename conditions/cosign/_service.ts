/**
 * A real Sigstore bundle and trusted root for the cosign tests, made by
 * Sigstore's own JavaScript packages (@sigstore/mock's Fulcio and Rekor,
 * @sigstore/sign's keyless flow) in tests/services/sigstore/signer.ts, a
 * process of its own: those packages are the tests' alone, kept out of the
 * CLI's deno.json and deno.lock so that the main job never installs them
 * (`scripts/packages --tests` installs them, and `scripts/test` runs it).
 *
 * @module
 */

import { inTempDir, repoRoot } from "../../tests/services/_util.ts";

/** The identity the test certificates are issued to. */
export const SIGNER_IDENTITY = "ci@waitcmd.test";

/** What `makeSigstore` produced. */
export interface Sigstore {
  /** Signs `blob` keylessly; returns the bundle as JSON text. */
  sign(blob: Uint8Array): Promise<string>;
  /** The trusted root (JSON text) that verifies this instance's bundles. */
  readonly trustedRoot: string;
  /** Stops the service. */
  close(): Promise<void>;
}

/** The signer's folder: its own deno.json and deno.lock. */
export const SIGSTORE_DIR = `${repoRoot}/tests/services/sigstore`;

/** Starts the signer (a mock Fulcio and Rekor on a loopback port) and reads its trusted root. */
export async function makeSigstore(): Promise<Sigstore> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "--quiet",
      "--cached-only",
      "--frozen",
      "--config",
      `${SIGSTORE_DIR}/deno.json`,
      `${SIGSTORE_DIR}/signer.ts`,
      SIGNER_IDENTITY,
    ],
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  let buffered = "";
  const nextLine = async (): Promise<Record<string, string>> => {
    while (!buffered.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) {
        const why = (await stderr).trim();
        throw new Error(
          /not found in cache|--cached-only/.test(why)
            ? "the Sigstore test service's packages are not installed: run scripts/packages --tests"
            : `the Sigstore test service ended: ${why}`,
        );
      }
      buffered += value;
    }
    const nl = buffered.indexOf("\n");
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    return JSON.parse(line);
  };
  let first: Record<string, string>;
  try {
    first = await nextLine();
  } catch (e) {
    await writer.close().catch(() => {});
    await child.status;
    throw e;
  }
  // One request at a time: the service answers in order.
  let queue = Promise.resolve();
  return {
    trustedRoot: first.trustedRoot!,
    sign(blob) {
      const answer = queue.then(async () => {
        let bin = "";
        for (const b of blob) bin += String.fromCharCode(b);
        await writer.write(new TextEncoder().encode(btoa(bin) + "\n"));
        const r = await nextLine();
        if (r.error !== undefined) throw new Error(`signing failed: ${r.error}`);
        return r.bundle!;
      });
      queue = answer.then(() => {}, () => {});
      return answer;
    },
    async close() {
      await writer.close().catch(() => {});
      await lines.cancel().catch(() => {});
      await child.status;
      await stderr;
    },
  };
}

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
