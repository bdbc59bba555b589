/**
 * Public keys and detached signatures as cosign writes them
 * (docs/contract.md §5 cosign): PEM keys of ECDSA P-256, Ed25519 or RSA,
 * and base64 signature files.
 *
 * @module
 */

import { createPublicKey, type KeyObject } from "node:crypto";
import { Buffer } from "node:buffer";
import { readFlagFile } from "../_common/flagfile.ts";

/** A public key that can check cosign signatures. */
export interface PublicKey {
  readonly key: KeyObject;
  /** `ECDSA P-256`, `Ed25519`, `RSA 2048`. */
  readonly label: string;
  /** Ed25519 signs the blob itself; the others its SHA-256. */
  readonly ed25519: boolean;
}

/** The key in PEM text `pem`; throws a one-line reason when it is none of the three kinds. */
export function parsePublicKey(pem: string, path: string): PublicKey {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new Error(`cannot read --key ${path}: not a PEM public key`);
  }
  const type = key.asymmetricKeyType;
  if (type === "ed25519") return { key, label: "Ed25519", ed25519: true };
  if (type === "rsa") {
    const bits = key.asymmetricKeyDetails?.modulusLength;
    return { key, label: bits ? `RSA ${bits}` : "RSA", ed25519: false };
  }
  if (type === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === "prime256v1" || curve === "P-256") {
      return { key, label: "ECDSA P-256", ed25519: false };
    }
    throw new Error(
      `cannot use --key ${path}: an ECDSA key on ${curve ?? "an unknown curve"} (expected P-256)`,
    );
  }
  throw new Error(
    `cannot use --key ${path}: a ${type ?? "unknown"} key (expected ECDSA P-256, Ed25519 or RSA)`,
  );
}

/** Reads and parses the key file `path` (4 MiB at most, as every flag file). */
export async function loadPublicKey(path: string): Promise<PublicKey> {
  return parsePublicKey(await readFlagFile("key", path), path);
}

/** The signature bytes of a signature file's text (base64, white space ignored). */
export function decodeSignature(text: string): Uint8Array {
  const b64 = text.replace(/\s+/g, "");
  if (b64 === "") throw new Error("the signature file is empty");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 === 1) {
    throw new Error("the signature file does not hold base64");
  }
  return new Uint8Array(Buffer.from(b64, "base64"));
}
