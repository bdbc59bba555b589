/**
 * Sigstore bundles verified offline with @sigstore/verify against a trusted
 * root given as a file (docs/contract.md §5 cosign): the certificate chain
 * to the root's certificate authorities, the certificate transparency log's
 * SCT, the transparency log's signed entry timestamp, and the signature over
 * the blob. Nothing is fetched.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { bundleFromJSON } from "@sigstore/bundle";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import {
  type Signer,
  toSignedEntity,
  toTrustMaterial,
  type TrustMaterial,
  Verifier,
} from "@sigstore/verify";
import type { KeyObject } from "node:crypto";
import { readFlagFile } from "../_common/flagfile.ts";
import { installVerifyDigestDefault } from "./nodeverify.ts";

installVerifyDigestDefault();

/**
 * The trust material of the trusted root file `path`; `key` answers a
 * key-signed bundle's key hint. Throws a one-line reason for a file that
 * cannot be read or is no trusted root.
 */
export async function loadTrustMaterial(path: string, key?: KeyObject): Promise<TrustMaterial> {
  const text = await readFlagFile("trusted-root", path);
  let root: TrustedRoot;
  try {
    root = TrustedRoot.fromJSON(JSON.parse(text));
  } catch (e) {
    throw new Error(
      `cannot read --trusted-root ${path}: not a Sigstore trusted root (${
        e instanceof Error ? e.message : String(e)
      })`,
    );
  }
  if (root.certificateAuthorities.length === 0 && root.tlogs.length === 0) {
    throw new Error(
      `cannot read --trusted-root ${path}: it holds no certificate authority and no transparency log`,
    );
  }
  return toTrustMaterial(
    root,
    key === undefined ? undefined : () => ({ publicKey: key, validFor: () => true }),
  );
}

/** An error of @sigstore/verify as a short text: `signature verification failed (SIGNATURE_ERROR)`. */
export function describeVerifyError(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  const msg = e instanceof Error ? e.message : String(e);
  return typeof code === "string" ? `${msg} (${code})` : msg;
}

/**
 * Verifies the bundle in `bundleText` over `blob`; returns who signed it
 * (the certificate's identity, or "a key"). Throws a one-line reason when
 * the bundle is not one yet or does not verify.
 */
export function verifyBundle(bundleText: string, blob: Uint8Array, trust: TrustMaterial): string {
  let json: unknown;
  try {
    json = JSON.parse(bundleText);
  } catch {
    throw new Error("the bundle is not JSON (yet)");
  }
  let entity;
  try {
    const bundle = bundleFromJSON(json);
    if (bundle.content.$case !== "messageSignature") {
      throw new Error("it holds a DSSE envelope, not a signature over the blob");
    }
    entity = toSignedEntity(bundle, Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength));
  } catch (e) {
    throw new Error(`not a Sigstore bundle of a blob signature: ${describeVerifyError(e)}`);
  }
  let signer: Signer;
  try {
    signer = new Verifier(trust).verify(entity);
  } catch (e) {
    throw new Error(`the bundle does not verify: ${describeVerifyError(e)}`);
  }
  return signer.identity?.subjectAlternativeName ?? "a key";
}
