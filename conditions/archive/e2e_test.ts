import { assert, assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { sh } from "../../tests/services/_util.ts";
import { assertKindUsageErrors, expectJson, runJson, runLate } from "../../tests/e2e/_cli.ts";

const FAST = ["--interval", "100ms"];

/** A source tree and its tar, tar.gz and zip, made by the real tools. */
async function makeArchives(dir: string): Promise<void> {
  await sh("bash", [
    "-c",
    `set -e; cd ${dir}; mkdir -p src/bin src/doc src/reports
     echo app > src/bin/app; echo readme > src/README.md
     for i in 1 2 3; do echo "<r$i/>" > src/reports/r$i.xml; done
     head -c 2000000 /dev/urandom > src/doc/big.bin
     # bin/app and README.md first, the large member last: a cut falls after them.
     tar cf t.tar -C src ./bin ./README.md ./reports ./doc
     tar czf t.tgz -C src ./bin ./README.md ./reports ./doc
     (cd src && zip -qr ../t.zip bin README.md reports doc)
     cp t.tgz release.bin`,
  ]);
}

/** Copies `from` into `to` in `parts` pieces, pausing between them: a file still arriving. */
async function copyInChunks(from: string, to: string, parts: number): Promise<void> {
  const data = await Deno.readFile(from);
  const step = Math.ceil(data.length / parts);
  using out = await Deno.open(to, { write: true, create: true, truncate: true });
  for (let off = 0; off < data.length; off += step) {
    await out.write(data.subarray(off, off + step));
    await new Promise((r) => setTimeout(r, 200));
  }
}

Deno.test("archive lists tar, tar.gz and zip made by tar, gzip and zip", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-archive-" });
  try {
    await makeArchives(dir);
    const want = [
      ["t.tar", "tar"],
      ["t.tgz", "tar.gz"],
      ["t.zip", "zip"],
      ["release.bin", "tar.gz"], // told by the content, not the name
    ];
    for (const [name, format] of want) {
      const r = await runJson([
        ...["--timeout", "10s", "archive", `${dir}/${name}`, "--contains", "bin/app"],
        ...["--contains", "./README.md", "--matches", "reports/*.xml", "--min-count", "3"],
      ]);
      assertEquals([name, r.code], [name, 0]);
      assertEquals(
        r.json.conditions[0]!.detail,
        `${format}, 9 members, contains "bin/app", "README.md", 3 matching "reports/*.xml"`,
      );
    }
    const forced = await expectJson([
      ...["--timeout", "300ms"],
      ...FAST,
      ...["archive", `${dir}/t.tgz`, "--format", "zip"],
    ], { code: 1 });
    assertStringIncludes(forced.json.conditions[0]!.last_error, "cannot read the zip archive");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const [name, format] of [["t.tgz", "tar.gz"], ["t.zip", "zip"], ["t.tar", "tar"]]) {
  Deno.test(`archive waits for a ${format} archive still being written in chunks`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-archive-" });
    try {
      await makeArchives(dir);
      const target = `${dir}/incoming`;
      await Deno.writeFile(target, new Uint8Array());
      // bin/app and README.md come early in the archive: only the complete archive counts.
      const r = await runLate(
        [
          ...["--timeout", "30s"],
          ...FAST,
          ...["archive", target, "--contains", "bin/app", "--contains", "README.md"],
        ],
        () => copyInChunks(`${dir}/${name}`, target, 5),
      );
      assertEquals(r.code, 0);
      const size = (await Deno.stat(target)).size;
      assertEquals(size, (await Deno.stat(`${dir}/${name}`)).size);
      assert(r.attempts.length >= 2, `${r.attempts.length} attempts`);
      assert(r.attempts.slice(0, -1).every((a) => !a.ok));
      assertEquals(r.attempts[0]!.error, "is empty");
      assertStringIncludes(r.report.conditions[0]!.detail, `${format}, `);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("archive never holds for a truncated or corrupt archive, member before the damage", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-archive-" });
  try {
    await makeArchives(dir);
    await sh("bash", [
      "-c",
      `set -e; cd ${dir}
       head -c 200000 t.tgz > cut.tgz
       head -c $(( $(stat -c%s t.zip) - 30 )) t.zip > cut.zip
       cp t.zip bad.zip; printf 'XXXX' | dd of=bad.zip bs=1 seek=500000 conv=notrunc 2>/dev/null
       tar cf noend.tar -C src bin README.md`,
    ]);
    // A tar cut cleanly after its last member: no end-of-archive blocks.
    const tar = await Deno.readFile(`${dir}/noend.tar`);
    let end = tar.length;
    while (end > 0 && tar[end - 1] === 0) end--;
    await Deno.writeFile(`${dir}/noend.tar`, tar.subarray(0, Math.ceil(end / 512) * 512));
    const check = async (file: string) => {
      const r = await runJson([
        ...["--timeout", "400ms"],
        ...FAST,
        ...["archive", `${dir}/${file}`, "--contains", "bin/app"],
      ]);
      assertEquals([file, r.code], [file, 1]);
      return r.json.conditions[0]!.last_error;
    };
    assertStringIncludes(await check("cut.tgz"), "cannot read the tar.gz archive");
    assertStringIncludes(await check("cut.zip"), "cannot read the zip archive");
    assertStringIncludes(await check("bad.zip"), "invalid CRC32");
    assertStringIncludes(await check("noend.tar"), "ends without the end-of-archive blocks");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("archive keeps a file that is not an archive pending", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-archive-" });
  try {
    await Deno.writeTextFile(`${dir}/text`, "not an archive\n");
    const text = await runJson(["--timeout", "300ms", ...FAST, "archive", `${dir}/text`]);
    assertEquals(
      text.json.conditions[0]!.last_error,
      "not a tar, tar.gz or zip archive (15 B; or not one yet)",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("archive usage errors", () =>
  assertKindUsageErrors("archive", [
    [
      ["archive", "a.tar", "--format", "rar"],
      '--format: expected one of auto, tar, tgz, zip, got "rar" (did you mean tar?)',
    ],
    [
      ["archive", "a.tar", "--min-count", "0"],
      '--min-count: expected a whole number of at least 1, got "0"',
    ],
    [["archive", "a.tar", "--contains", "/"], '--contains: expected a member name, got "/"'],
    [
      ["archive", "a.tar", "--matches", "{a,b}".repeat(11)],
      "--matches: the pattern's {a,b} groups expand to more than 1024 patterns",
    ],
  ]));
