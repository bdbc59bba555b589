import nodeCrypto, { generateKeyPairSync, sign } from "node:crypto";
import { checkOnce } from "../../engine/attempt.ts";
import { assert, assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, probeOf, usageError } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { makeSigstore, SIGNER_IDENTITY, withSigstore } from "./_service.ts";
import { decodeSignature, parsePublicKey } from "./keys.ts";
import type { CosignOptions } from "./mod.ts";
import { defaultDigestOf, installVerifyDigestDefault } from "./nodeverify.ts";

const once = (signal = AbortSignal.timeout(10_000)) => ({ signal, attempt: 1 });

Deno.test("cosign parse() takes a key-signed blob or a bundle, named after the blob", () => {
  assertEquals(
    optionsOf<CosignOptions>(["cosign", "--blob", "a", "--signature", "a.sig", "--key", "k.pub"]),
    { blob: "a", mode: "key", signature: "a.sig", key: "k.pub" },
  );
  assertEquals(
    optionsOf<CosignOptions>([
      ...["cosign", "--blob", "a", "--bundle", "b.json", "--trusted-root", "r"],
    ]),
    { blob: "a", mode: "bundle", bundle: "b.json", trustedRoot: "r", key: undefined },
  );
  assertEquals(
    conditionOf(["cosign", "--blob", "dist/a.tgz", "--signature", "s", "--key", "k"]).name,
    "cosign dist/a.tgz",
  );
});

Deno.test("cosign parse() rejects incomplete and mixed flag sets", async (t) => {
  const rows: [string[], string][] = [
    [["--signature", "s", "--key", "k"], "--blob: cosign needs --blob FILE"],
    [["--blob", "b"], "--signature: cosign needs --signature SIG with --key PUBKEY"],
    [["--blob", "b", "--signature", "s"], "--key: --signature needs --key PUBKEY"],
    [["--blob", "b", "--bundle", "x"], "--trusted-root: --bundle needs --trusted-root FILE"],
    [
      ["--blob", "b", "--bundle", "x", "--signature", "s", "--trusted-root", "r"],
      "--bundle: cannot be combined with --signature",
    ],
    [
      ["--blob", "b", "--signature", "s", "--key", "k", "--trusted-root", "r"],
      "--trusted-root: goes with --bundle only",
    ],
    [
      ["--blob", "", "--signature", "s", "--key", "k"],
      "--blob: expected a path, got an empty string",
    ],
  ];
  for (const [args, want] of rows) {
    await t.step(args.join(" "), () => {
      assertStringIncludes(parseError(["cosign", ...args]), `condition 1 (cosign): ${want}`);
    });
  }
});

Deno.test("cosign validate() reads the key: unreadable, not PEM or another curve is exit 2", () =>
  inTempDir("waitcmd-cosign-")(async (dir) => {
    const args = (key: string) => ["cosign", "--blob", "b", "--signature", "s", "--key", key];
    assertEquals(
      await usageError(args(`${dir}/none.pub`)),
      `waitcmd: condition 1 (cosign): --key: cannot read --key ${dir}/none.pub: no such file or directory (see: waitcmd help cosign)`,
    );
    await Deno.writeTextFile(`${dir}/junk.pub`, "not a key\n");
    assertStringIncludes(await usageError(args(`${dir}/junk.pub`)), "not a PEM public key");
    const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey;
    await Deno.writeTextFile(
      `${dir}/p384.pub`,
      p384.export({ type: "spki", format: "pem" }) as string,
    );
    assertStringIncludes(
      await usageError(args(`${dir}/p384.pub`)),
      "an ECDSA key on secp384r1 (expected P-256)",
    );
    const ok = generateKeyPairSync("ed25519").publicKey;
    await Deno.writeTextFile(`${dir}/ok.pub`, ok.export({ type: "spki", format: "pem" }) as string);
    assertEquals(await usageError(args(`${dir}/ok.pub`)), "");
    assertStringIncludes(
      await usageError([
        ...["cosign", "--blob", "b", "--bundle", "x", "--trusted-root", `${dir}/ok.pub`],
      ]),
      "--trusted-root: cannot read --trusted-root",
    );
  }));

Deno.test("cosign keys: labels and base64 signature files", () => {
  const label = (type: "ec" | "rsa" | "ed25519") => {
    const kp = type === "ec"
      ? generateKeyPairSync("ec", { namedCurve: "P-256" })
      : type === "rsa"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : generateKeyPairSync("ed25519");
    return parsePublicKey(kp.publicKey.export({ type: "spki", format: "pem" }) as string, "k")
      .label;
  };
  assertEquals([label("ec"), label("rsa"), label("ed25519")], [
    "ECDSA P-256",
    "RSA 2048",
    "Ed25519",
  ]);
  assertEquals([...decodeSignature(" AQID\nBA==\n")], [1, 2, 3, 4]);
  for (const bad of ["", "  \n", "not base64!", "A"]) {
    let msg = "";
    try {
      decodeSignature(bad);
    } catch (e) {
      msg = (e as Error).message;
    }
    assert(/empty|base64/.test(msg), `${JSON.stringify(bad)}: ${msg}`);
  }
});

Deno.test({
  name: "cosign verifies a real Sigstore bundle offline (fails without the node:crypto wrapper)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withSigstore(async (dir, sigstore) => {
      const blob = new TextEncoder().encode("release 1.2.3\n");
      await Deno.writeTextFile(`${dir}/blob`, "release 1.2.3\n");
      await Deno.writeTextFile(`${dir}/blob.sigstore.json`, await sigstore.sign(blob));
      await Deno.writeTextFile(`${dir}/trusted_root.json`, sigstore.trustedRoot);
      const args = [
        ...["cosign", "--blob", `${dir}/blob`, "--bundle", `${dir}/blob.sigstore.json`],
        ...["--trusted-root", `${dir}/trusted_root.json`],
      ];
      // The probe module installs the wrapper itself: this is the test that fails without it
      // (every valid bundle would be TLOG_INCLUSION_PROMISE_ERROR under Deno 2.9).
      const probe = await probeOf(args);
      assertEquals(await checkOnce(probe, once().signal), {
        status: "satisfied",
        detail: `bundle verified (signed by ${SIGNER_IDENTITY})`,
      });

      // A tampered blob: the signature no longer verifies.
      await Deno.writeTextFile(`${dir}/blob`, "release 1.2.4\n");
      const tampered = await checkOnce(probe, once().signal);
      assertEquals(tampered.status, "pending");
      assertStringIncludes(
        (tampered as { error: string }).error,
        "the bundle does not verify: ",
      );

      // Another Sigstore instance's trusted root does not vouch for this bundle.
      await Deno.writeTextFile(`${dir}/blob`, "release 1.2.3\n");
      const other = await makeSigstore();
      await Deno.writeTextFile(`${dir}/other_root.json`, other.trustedRoot);
      await other.close();
      const foreign = await (await probeOf([...args.slice(0, -1), `${dir}/other_root.json`]))
        .check(once());
      assertEquals(foreign.status, "pending");
      assertStringIncludes((foreign as { error: string }).error, "the bundle does not verify: ");

      // A half-written bundle is pending.
      const text = await Deno.readTextFile(`${dir}/blob.sigstore.json`);
      await Deno.writeTextFile(`${dir}/blob.sigstore.json`, text.slice(0, 100));
      assertEquals(await checkOnce(probe, once().signal), {
        status: "pending",
        error: "the bundle is not JSON (yet)",
      });
      await probe.close?.();
    }),
});

// Runs after the bundle test on purpose: installing the wrapper here first would hide its
// absence from the probe module there (the e2e bundle tests run in fresh processes anyway).
Deno.test("cosign's node:crypto wrapper gives EC keys their curve's digest, as Node does", () => {
  installVerifyDigestDefault();
  installVerifyDigestDefault(); // idempotent
  for (const [curve, digest] of [["P-256", "sha256"], ["P-384", "sha384"], ["P-521", "sha512"]]) {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: curve! });
    assertEquals(defaultDigestOf(publicKey), digest);
    const data = new TextEncoder().encode("signed entry timestamp");
    const sig = sign(digest!, data, privateKey);
    // What @sigstore/core does (through the module object): no algorithm. Deno 2.9 alone
    // throws "no default digest".
    assertEquals(nodeCrypto.verify(undefined as unknown as string, data, publicKey, sig), true);
  }
  const ed = generateKeyPairSync("ed25519");
  assertEquals(defaultDigestOf(ed.publicKey), undefined);
  const data = new TextEncoder().encode("x");
  assertEquals(nodeCrypto.verify(null, data, ed.publicKey, sign(null, data, ed.privateKey)), true);
});
