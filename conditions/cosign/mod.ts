/**
 * cosign: a blob's signature verifies, against a public key (a cosign-style
 * detached signature) or as a Sigstore bundle checked offline against a
 * trusted root (docs/contract.md §5 cosign).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a cosign condition needs. */
export type CosignOptions =
  & { readonly blob: string }
  & (
    | {
      /** A detached signature (base64) checked with `key`. */
      readonly mode: "key";
      readonly signature: string;
      readonly key: string;
    }
    | {
      /** A Sigstore bundle checked against `trustedRoot`, and `key` for a key-signed bundle. */
      readonly mode: "bundle";
      readonly bundle: string;
      readonly trustedRoot: string;
      readonly key?: string;
    }
  );

/** The cosign kind. */
export const cosign = defineKind<CosignOptions>({
  name: "cosign",
  aliases: [],
  summary: "a blob's signature (cosign style, or a Sigstore bundle) verifies",
  description:
    "With --signature and --key: the signature file holds base64 (white space ignored) of an ECDSA P-256 (ASN.1 DER) or RSA PKCS#1 v1.5 signature over the blob's SHA-256, or an Ed25519 signature over the blob, as cosign sign-blob writes it; the key is a PEM public key. With --bundle and --trusted-root: a Sigstore bundle (cosign sign-blob --bundle) is verified offline, certificate chain, transparency-log promise and signature, against the trusted root (and --key for a key-signed bundle). A blob, signature or bundle that is not there yet is pending, and so is a signature that does not verify; a key or trusted root that cannot be read is a usage error.",
  target: { shape: "none", placeholder: "", description: "" },
  flags: [
    {
      name: "blob",
      type: "string",
      placeholder: "FILE",
      description: "the signed file",
      complete: "file",
    },
    {
      name: "signature",
      type: "string",
      placeholder: "SIG",
      description: "the detached signature (base64), checked with --key",
      complete: "file",
    },
    {
      name: "key",
      type: "string",
      placeholder: "PUBKEY",
      description: "PEM public key: ECDSA P-256, Ed25519 or RSA",
      complete: "file",
    },
    {
      name: "bundle",
      type: "string",
      placeholder: "FILE",
      description: "a Sigstore bundle (JSON), checked against --trusted-root",
      complete: "file",
    },
    {
      name: "trusted-root",
      type: "string",
      placeholder: "FILE",
      description: "the Sigstore trusted root (JSON) that --bundle is verified against",
      complete: "file",
    },
  ],
  examples: [
    {
      args: "cosign --blob dist/app.tar.gz --signature dist/app.tar.gz.sig --key cosign.pub",
      description: "wait until a release and its signature are there and verify",
    },
    {
      args:
        "cosign --blob dist/app.tar.gz --bundle dist/app.sigstore.json --trusted-root trusted_root.json",
      description: "verify a Sigstore bundle offline",
    },
  ],
  parse(input) {
    const path = (flag: string) => {
      const v = input.string(flag);
      if (v === "") input.fail(flag, "expected a path, got an empty string");
      return v;
    };
    const blob = path("blob");
    const signature = path("signature");
    const key = path("key");
    const bundle = path("bundle");
    const trustedRoot = path("trusted-root");
    if (blob === undefined) return input.fail("blob", "cosign needs --blob FILE");
    if (signature !== undefined && bundle !== undefined) {
      input.fail("bundle", "cannot be combined with --signature");
    }
    if (bundle !== undefined) {
      if (trustedRoot === undefined) {
        return input.fail("trusted-root", "--bundle needs --trusted-root FILE");
      }
      return { target: blob, options: { blob, mode: "bundle", bundle, trustedRoot, key } };
    }
    if (signature === undefined) {
      return input.fail(
        "signature",
        "cosign needs --signature SIG with --key PUBKEY, or --bundle FILE with --trusted-root FILE",
      );
    }
    if (key === undefined) return input.fail("key", "--signature needs --key PUBKEY");
    if (trustedRoot !== undefined) input.fail("trusted-root", "goes with --bundle only");
    return { target: blob, options: { blob, mode: "key", signature, key } };
  },
  async validate(options, fail) {
    const { loadPublicKey } = await import("./keys.ts");
    if (options.key !== undefined) {
      try {
        await loadPublicKey(options.key);
      } catch (e) {
        fail("key", e instanceof Error ? e.message : String(e));
      }
    }
    if (options.mode === "bundle") {
      const { loadTrustMaterial } = await import("./sigstore.ts");
      try {
        await loadTrustMaterial(options.trustedRoot);
      } catch (e) {
        fail("trusted-root", e instanceof Error ? e.message : String(e));
      }
    }
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
