/**
 * checksum: a file's digest equals the one given (docs/contract.md §5
 * checksum).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** Digest algorithms `--equals` takes, with their length in hex digits. */
export const ALGORITHMS = { md5: 32, sha1: 40, sha256: 64, sha512: 128 } as const;
/** One of `ALGORITHMS`. */
export type Algorithm = keyof typeof ALGORITHMS;

/** What a checksum condition needs. */
export interface ChecksumOptions {
  /** The file to digest. */
  readonly path: string;
  readonly algorithm: Algorithm;
  /** The expected digest, lower-case hex. */
  readonly digest: string;
}

/**
 * The algorithm and digest of an `--equals` value (`sha256:HEX` or bare
 * HEX, whose length tells the algorithm), or the reason it is not one.
 */
export function parseEquals(
  text: string,
): { algorithm: Algorithm; digest: string } | { error: string } {
  const m = /^([a-z0-9]+):(.*)$/i.exec(text.trim());
  const hex = (m ? m[2]! : text).trim();
  if (!/^[0-9a-f]+$/i.test(hex)) {
    return { error: `expected a hex digest, got "${hex}"` };
  }
  const lengths = Object.entries(ALGORITHMS) as [Algorithm, number][];
  if (m) {
    const algorithm = m[1]!.toLowerCase();
    const want = ALGORITHMS[algorithm as Algorithm];
    if (want === undefined) {
      return {
        error: `unknown algorithm "${m[1]}" (expected ${lengths.map(([a]) => a).join(", ")})`,
      };
    }
    if (hex.length !== want) {
      return { error: `a ${algorithm} digest has ${want} hex digits, got ${hex.length}` };
    }
    return { algorithm: algorithm as Algorithm, digest: hex.toLowerCase() };
  }
  const byLength = lengths.find(([, n]) => n === hex.length);
  if (!byLength) {
    return {
      error: `cannot tell the algorithm from ${hex.length} hex digits (${
        lengths.map(([a, n]) => `${a} ${n}`).join(", ")
      }); add a prefix such as sha256:`,
    };
  }
  return { algorithm: byLength[0], digest: hex.toLowerCase() };
}

/** The checksum kind. */
export const checksum = defineKind<ChecksumOptions>({
  name: "checksum",
  aliases: [],
  summary: "a file's digest (sha256, sha512, sha1, md5) equals the one given",
  description:
    "Holds when the file's digest equals --equals, given as ALGORITHM:HEX (sha256, sha512, sha1, md5) or as bare HEX, whose length tells the algorithm. The file is read in a stream (any size, little memory) and read again only when it changed; a file that changes while it is read is still being written and is pending.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path of the file",
    complete: "file",
  },
  flags: [
    {
      name: "equals",
      type: "string",
      placeholder: "[ALGO:]HEX",
      description: "the expected digest: sha256:HEX, sha512:HEX, sha1:HEX, md5:HEX or HEX",
    },
  ],
  examples: [
    {
      args:
        "checksum dist/app.tar.gz --equals sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
      description: "wait until a download is complete and intact",
    },
    {
      args: "checksum image.iso --equals d41d8cd98f00b204e9800998ecf8427e",
      description: "an md5 digest: 32 hex digits",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    const equals = input.string("equals");
    if (equals === undefined) {
      return input.fail("equals", "checksum needs --equals [sha256:|sha512:|sha1:|md5:]HEX");
    }
    const parsed = parseEquals(equals);
    if ("error" in parsed) return input.fail("equals", parsed.error);
    return { target: path, options: { path, ...parsed } };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
