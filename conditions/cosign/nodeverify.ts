/**
 * A fix for one difference between Deno's `node:crypto` and Node's, needed
 * by @sigstore/verify (docs/contract.md §5 cosign).
 *
 * `crypto.verify(undefined, data, key, sig)` with an EC key picks the
 * curve's digest in Node; Deno 2.9 throws "no default digest" instead.
 * @sigstore/core calls it that way for the transparency log's signed entry
 * timestamp and the certificate's signature, and swallows the error, so
 * without this every valid bundle fails as TLOG_INCLUSION_PROMISE_ERROR.
 * `installVerifyDigestDefault` wraps the shared `node:crypto` export's
 * `verify` once: an undefined algorithm with an EC key gets the digest
 * Node would use (SHA-256 for P-256, SHA-384 for P-384, SHA-512 for P-521);
 * every other call passes through unchanged.
 *
 * @module
 */

import nodeCrypto, { createPublicKey, KeyObject } from "node:crypto";

/** The digest Node uses for an ECDSA curve when none is named. */
const CURVE_DIGESTS: Readonly<Record<string, string>> = {
  prime256v1: "sha256",
  "P-256": "sha256",
  secp384r1: "sha384",
  "P-384": "sha384",
  secp521r1: "sha512",
  "P-521": "sha512",
};

/** The default digest for `key` if it is an EC key, else undefined. */
export function defaultDigestOf(key: unknown): string | undefined {
  let k: KeyObject;
  try {
    k = key instanceof KeyObject
      ? key
      : createPublicKey(key as Parameters<typeof createPublicKey>[0]);
  } catch {
    return undefined; // Not a key we can read: let verify itself say so.
  }
  if (k.asymmetricKeyType !== "ec") return undefined;
  return CURVE_DIGESTS[k.asymmetricKeyDetails?.namedCurve ?? ""];
}

type Verify = (...args: unknown[]) => unknown;
let installed = false;

/** Wraps `node:crypto`'s `verify` as described above; calling it again does nothing. */
export function installVerifyDigestDefault(): void {
  if (installed) return;
  installed = true;
  const target = nodeCrypto as unknown as { verify: Verify };
  const original = target.verify;
  target.verify = function verify(algorithm: unknown, data: unknown, key: unknown, ...rest) {
    const alg = algorithm ?? defaultDigestOf(key) ?? algorithm;
    return original.call(this, alg, data, key, ...rest);
  };
}
