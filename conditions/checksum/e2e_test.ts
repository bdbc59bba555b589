import { assert, assertEquals } from "../../tests/_assert.ts";
import { inTempDir, sh } from "../../tests/services/_util.ts";
import { assertKindUsageErrors, runJson, runLate } from "../../tests/e2e/_cli.ts";
import { usageRows } from "../../tests/_suite.ts";

/** The kind's usage errors, from its folder (conditions/checksum/_suite.ts). */
const USAGE = await usageRows("checksum");

const FAST = ["--interval", "100ms"];

/** The digest the coreutils tool prints for `path`. */
async function digestOf(tool: string, path: string): Promise<string> {
  return (await sh(tool, [path])).split(/\s+/)[0]!;
}

Deno.test("checksum matches the digests sha256sum, sha512sum, sha1sum and md5sum print", () =>
  inTempDir("waitcmd-checksum-")(async (dir) => {
    const f = `${dir}/data.bin`;
    await sh("sh", ["-c", `head -c 3000000 /dev/urandom > ${f}`]);
    for (
      const [tool, algo] of [
        ["sha256sum", "sha256"],
        ["sha512sum", "sha512"],
        ["sha1sum", "sha1"],
        ["md5sum", "md5"],
      ]
    ) {
      const hex = await digestOf(tool!, f);
      for (const equals of [`${algo}:${hex}`, hex.toUpperCase()]) {
        const r = await runJson(["--timeout", "10s", "checksum", f, "--equals", equals]);
        assertEquals([equals, r.code, r.json.conditions[0]!.detail], [
          equals,
          0,
          `${algo} matches (2.9 MiB)`,
        ]);
      }
    }
  }));

Deno.test("checksum waits for a download grown in chunks to be complete", () =>
  inTempDir("waitcmd-checksum-")(async (dir) => {
    const src = `${dir}/src.bin`;
    const dst = `${dir}/download.bin`;
    await sh("sh", ["-c", `head -c 8000000 /dev/urandom > ${src}`]);
    const want = await digestOf("sha256sum", src);
    await sh("sh", ["-c", `head -c 1000000 ${src} > ${dst}`]);
    const r = await runLate(
      ["--timeout", "30s", ...FAST, "checksum", dst, "--equals", `sha256:${want}`],
      async () => {
        // The rest arrives in pieces, as from a slow download.
        for (let off = 1_000_000; off < 8_000_000; off += 1_750_000) {
          await sh("sh", [
            "-c",
            `tail -c +${off + 1} ${src} | head -c 1750000 >> ${dst}`,
          ]);
          await new Promise((res) => setTimeout(res, 150));
        }
      },
    );
    assertEquals(r.code, 0);
    const c = r.report.conditions[0]!;
    assertEquals(c.name, `checksum ${dst}`);
    assertEquals(c.detail, "sha256 matches (7.6 MiB)");
    assert(r.attempts.length >= 2);
    assert(
      /^sha256 is [0-9a-f]{64}, not the expected digest \(/.test(r.attempts[0]!.error),
      r.attempts[0]!.error,
    );
    assert(r.attempts.slice(0, -1).every((a) => !a.ok));
  }));

Deno.test("checksum usage errors", () => assertKindUsageErrors("checksum", USAGE));
