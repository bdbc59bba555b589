import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { inTempDir, sh } from "../../tests/services/_util.ts";
import { SIGNER_IDENTITY, withSigstore } from "./_service.ts";
import { expectJson, runCli, runJson, runLate, usageErrorLine } from "../../tests/e2e/_cli.ts";

const FAST = ["--interval", "100ms"];

/** openssl commands that make a key pair of `algo` in `dir` and sign `blob` into `sig`, as cosign does. */
const KEYS: Record<string, { make: string; sign: string; label: string }> = {
  ecdsa: {
    make: "openssl ecparam -name prime256v1 -genkey -noout -out key.pem",
    sign: "openssl dgst -sha256 -sign key.pem blob | base64 > blob.sig",
    label: "ECDSA P-256",
  },
  ed25519: {
    make: "openssl genpkey -algorithm ed25519 -out key.pem",
    sign: "openssl pkeyutl -sign -inkey key.pem -rawin -in blob | base64 > blob.sig",
    label: "Ed25519",
  },
  rsa: {
    make: "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out key.pem 2>/dev/null",
    sign: "openssl dgst -sha256 -sign key.pem blob | base64 > blob.sig",
    label: "RSA 2048",
  },
};

async function bash(dir: string, script: string): Promise<string> {
  return await sh("bash", ["-c", `set -e; cd ${dir}; ${script}`]);
}

async function keyPair(dir: string, algo: string): Promise<void> {
  await bash(dir, `${KEYS[algo]!.make}; openssl pkey -in key.pem -pubout -out key.pub`);
}

const keyArgs = (dir: string) => [
  ...["cosign", "--blob", `${dir}/blob`, "--signature", `${dir}/blob.sig`],
  ...["--key", `${dir}/key.pub`],
];

for (const algo of Object.keys(KEYS)) {
  Deno.test(`cosign verifies an openssl ${algo} signature, written late`, () =>
    inTempDir("waitcmd-cosign-")(async (dir) => {
      await keyPair(dir, algo);
      await bash(dir, "head -c 3000000 /dev/urandom > blob");
      const r = await runLate(
        ["--timeout", "20s", ...FAST, ...keyArgs(dir)],
        () => bash(dir, KEYS[algo]!.sign),
      );
      assertEquals(r.code, 0);
      const c = r.report.conditions[0]!;
      assertEquals(c.name, `cosign ${dir}/blob`);
      assertEquals(r.attempts[0]!.error, `signature ${dir}/blob.sig does not exist`);
      assertEquals(c.detail, `signature verified (${KEYS[algo]!.label} key)`);

      // The blob changes: the signature no longer verifies.
      await bash(dir, "echo more >> blob");
      const bad = await runCli(["--timeout", "400ms", ...FAST, ...keyArgs(dir)]);
      assertEquals([bad.code, bad.stdout], [1, ""]);
      assertStringIncludes(bad.stderr, `[..] cosign ${dir}/blob attempt 1 (`);
      assertStringIncludes(
        bad.stderr,
        `not satisfied: cosign ${dir}/blob: the signature does not verify with the ${
          KEYS[algo]!.label
        } key`,
      );
    }));
}

Deno.test("cosign waits for the blob, and for a signature that is not base64 yet", () =>
  inTempDir("waitcmd-cosign-")(async (dir) => {
    await keyPair(dir, "ecdsa");
    const noBlob = await runJson(["--timeout", "300ms", ...FAST, ...keyArgs(dir)]);
    assertEquals(noBlob.json.conditions[0]!.last_error, `blob ${dir}/blob does not exist`);
    await bash(dir, "echo release > blob; printf '%s' 'MEUCIQ%%' > blob.sig");
    const r = await runLate(
      ["--timeout", "20s", ...FAST, ...keyArgs(dir)],
      () => bash(dir, KEYS.ecdsa!.sign),
    );
    assertEquals(r.code, 0);
    assertEquals(r.attempts[0]!.error, "the signature file does not hold base64");
  }));

Deno.test({
  name: "cosign verifies a Sigstore bundle offline against its trusted root, bundle written late",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withSigstore(async (dir, sigstore) => {
      await bash(dir, "head -c 100000 /dev/urandom > blob");
      await Deno.writeTextFile(`${dir}/trusted_root.json`, sigstore.trustedRoot);
      const bundle = await sigstore.sign(await Deno.readFile(`${dir}/blob`));
      const args = [
        ...["cosign", "--blob", `${dir}/blob`, "--bundle", `${dir}/blob.sigstore.json`],
        ...["--trusted-root", `${dir}/trusted_root.json`],
      ];
      const r = await runLate(
        ["--timeout", "20s", ...FAST, ...args],
        () => Deno.writeTextFile(`${dir}/blob.sigstore.json`, bundle),
      );
      assertEquals(r.code, 0);
      const c = r.report.conditions[0]!;
      assertEquals(c.last_error, `bundle ${dir}/blob.sigstore.json does not exist`);
      assertEquals(c.detail, `bundle verified (signed by ${SIGNER_IDENTITY})`);

      await bash(dir, "echo tampered >> blob");
      const bad = await expectJson(["--timeout", "400ms", ...FAST, ...args], { code: 1 });
      assertStringIncludes(bad.json.conditions[0]!.last_error, "the bundle does not verify: ");
      assertEquals(bad.stderr, "");
    }),
});

Deno.test("cosign usage errors: flags, and a key that cannot be read", () =>
  inTempDir("waitcmd-cosign-")(async (dir) => {
    assertEquals(
      usageErrorLine(await runCli(["cosign", "--blob", "b", "--signature", "s"])),
      "waitcmd: condition 1 (cosign): --key: --signature needs --key PUBKEY (see: waitcmd help cosign)",
    );
    assertStringIncludes(usageErrorLine(await runCli(["cosign", "b"])), "condition 1 (cosign)");
    assertEquals(
      usageErrorLine(await runCli(keyArgs(dir))),
      `waitcmd: condition 1 (cosign): --key: cannot read --key ${dir}/key.pub: no such file or directory (see: waitcmd help cosign)`,
    );
    await bash(
      dir,
      "openssl ecparam -name secp384r1 -genkey -noout -out key.pem; openssl pkey -in key.pem -pubout -out key.pub",
    );
    assertStringIncludes(usageErrorLine(await runCli(keyArgs(dir))), "(expected P-256)");
    await Deno.writeTextFile(`${dir}/root.json`, "{}");
    assertStringIncludes(
      usageErrorLine(
        await runCli([
          ...["cosign", "--blob", "b", "--bundle", "x", "--trusted-root", `${dir}/root.json`],
        ]),
      ),
      "--trusted-root: cannot read --trusted-root",
    );
  }));
