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
  const notOne = (why: string) =>
    new Error(`cannot read --trusted-root ${path}: not a Sigstore trusted root (${why})`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw notOne("not JSON");
  }
  // The generated fromJSON reads `certificateAuthorities: 5` as no list at all, and the
  // verifier then fails deep inside: the shape is checked first (docs/contract.md §5 cosign).
  const why = trustedRootProblem(json);
  if (why !== undefined) throw notOne(why);
  const root = TrustedRoot.fromJSON(json);
  if (root.certificateAuthorities.length === 0 && root.tlogs.length === 0) {
    throw new Error(
      `cannot read --trusted-root ${path}: it holds no certificate authority and no transparency log`,
    );
  }
  try {
    return toTrustMaterial(
      root,
      key === undefined ? undefined : () => ({ publicKey: key, validFor: () => true }),
    );
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw notOne(msg.charAt(0).toLowerCase() + msg.slice(1));
  }
}

/** What a value is, for a message: `a number`, `a list`, `null`. */
function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Why `json` is not shaped like a Sigstore trusted root (an object whose `tlogs`, `ctlogs`,
 * `certificateAuthorities` and `timestampAuthorities` are lists of logs with a public key and a
 * log id, and of authorities with a certificate chain), or undefined when it is.
 */
export function trustedRootProblem(json: unknown): string | undefined {
  if (!isObject(json)) return `it is ${kindOf(json)}, not an object`;
  if (json.mediaType !== undefined && typeof json.mediaType !== "string") {
    return `mediaType is ${kindOf(json.mediaType)}, not a text`;
  }
  const text = (v: unknown) => typeof v === "string" && v !== "";
  const logProblem = (log: Record<string, unknown>): string | undefined => {
    const key = log.publicKey;
    if (!isObject(key)) return "publicKey is missing";
    if (!text(key.rawBytes)) return "publicKey.rawBytes is missing";
    if (!text(key.keyDetails)) return "publicKey.keyDetails is missing";
    if (!isObject(log.logId) || !text(log.logId.keyId)) return "logId.keyId is missing";
    return undefined;
  };
  const authorityProblem = (ca: Record<string, unknown>): string | undefined => {
    const chain = ca.certChain;
    if (!isObject(chain)) return "certChain is missing";
    const certs = chain.certificates;
    if (!Array.isArray(certs) || certs.length === 0) return "certChain.certificates is empty";
    const i = certs.findIndex((c) => !isObject(c) || !text(c.rawBytes));
    return i < 0 ? undefined : `certChain.certificates[${i}].rawBytes is missing`;
  };
  const lists = [
    ["tlogs", logProblem],
    ["ctlogs", logProblem],
    ["certificateAuthorities", authorityProblem],
    ["timestampAuthorities", authorityProblem],
  ] as const;
  for (const [name, problem] of lists) {
    const list = json[name];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return `${name} is ${kindOf(list)}, not a list`;
    for (const [i, item] of list.entries()) {
      if (!isObject(item)) return `${name}[${i}] is ${kindOf(item)}, not an object`;
      if (item.validFor !== undefined && !isObject(item.validFor)) {
        return `${name}[${i}].validFor is ${kindOf(item.validFor)}, not an object`;
      }
      const why = problem(item);
      if (why !== undefined) return `${name}[${i}].${why}`;
    }
  }
  return undefined;
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
