/**
 * The cosign kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { sh } from "../../tests/services/_util.ts";
import { fileToggle, type KindSuite, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => {
    // validate reads the key before any probe: a real one (Ed25519), the blob missing.
    Deno.writeTextFileSync(
      `${d.dir}/cosign.pub`,
      "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAyIBwwTtiyDoUbtP+f549R3QhCAegYGHy1f1ks5/2Vzw=\n-----END PUBLIC KEY-----\n",
    );
    return {
      args: [
        ...["cosign", "--blob", `${d.dir}/none.bin`, "--signature", `${d.dir}/none.sig`],
        ...["--key", `${d.dir}/cosign.pub`],
      ],
    };
  },
  live: {
    needs: "openssl",
    async make() {
      const dir = await tempDir("cosign");
      const bash = (script: string) => sh("bash", ["-c", `set -e; cd ${dir}; ${script}`]);
      await bash(
        "openssl genpkey -algorithm ed25519 -out key.pem; openssl pkey -in key.pem -pubout -out key.pub; echo release > blob; echo other > other",
      );
      const sign = (what: string, sig: string) =>
        bash(`openssl pkeyutl -sign -inkey key.pem -rawin -in ${what} | base64 > ${sig}`);
      await sign("other", "other.sig");
      const args = (sig: string) => [
        ...["cosign", "--blob", `${dir}/blob`, "--signature", `${dir}/${sig}`],
        ...["--key", `${dir}/key.pub`],
      ];
      return {
        satisfied: args("blob.sig"),
        detail: /signature verified \(Ed25519 key\)/,
        pending: args("other.sig"),
        pendingError: "the signature does not verify with the Ed25519 key",
        ...fileToggle(`${dir}/blob.sig`, () => sign("blob", "blob.sig")),
        downError: /blob\.sig does not exist/,
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "cosign has no credentials", secret: "cosign takes no secret" },
  },
};
