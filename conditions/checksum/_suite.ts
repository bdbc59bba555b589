/**
 * The checksum kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { fileToggle, type KindSuite, tempDir, writeWhole } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({
    args: ["checksum", `${d.dir}/none.bin`, "--equals", `md5:${"0".repeat(32)}`],
  }),
  live: {
    needs: "a local file",
    async make() {
      const dir = await tempDir("checksum");
      const f = `${dir}/release.bin`;
      const data = "release 1.2.3\n";
      const digest = Array.from(
        new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(data))),
      ).map((b) => b.toString(16).padStart(2, "0")).join("");
      return {
        satisfied: ["checksum", f, "--equals", `sha256:${digest}`],
        detail: /sha256 matches \(14 B\)/,
        pending: ["checksum", f, "--equals", `sha256:${"0".repeat(64)}`],
        pendingError: `sha256 is ${digest}, not the expected digest (14 B)`,
        ...fileToggle(f, () => writeWhole(f, data)),
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "checksum has no credentials", secret: "checksum takes no secret" },
  },
  usage: [
    [["checksum", "f"], "--equals: checksum needs --equals [sha256:|sha512:|sha1:|md5:]HEX"],
    [["checksum", "f", "--equals", "xyz"], '--equals: expected a hex digest, got "xyz"'],
    [
      ["checksum", "f", "--equals", "sha256:abcd"],
      "--equals: a sha256 digest has 64 hex digits, got 4",
    ],
    [["checksum", "f", "--equals", "sha1:abc"], "--equals: a sha1 digest has 40 hex digits, got 3"],
    [
      ["checksum", "f", "--equals", "crc32:abcd"],
      '--equals: unknown algorithm "crc32" (expected md5, sha1, sha256, sha512)',
    ],
    [
      ["checksum", "f", "--equals", "abcd"],
      "--equals: cannot tell the algorithm from 4 hex digits (md5 32, sha1 40, sha256 64, sha512 128); add a prefix such as sha256:",
    ],
    [
      ["checksum", "f", "--equals", "12345"],
      "--equals: cannot tell the algorithm from 5 hex digits (md5 32, sha1 40, sha256 64, sha512 128); add a prefix such as sha256:",
    ],
    [["checksum", "--equals", "00000000000000000000000000000000"], "missing target PATH"],
  ],
};
