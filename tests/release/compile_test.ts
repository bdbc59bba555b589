/**
 * `deno task compile` (scripts/compile.ts). Real denort binaries cannot be
 * had on these machines, so the builds here use this machine's `/bin/true`
 * as a stand-in base: `deno compile` embeds the program into it exactly as
 * into denort (the result just does not run waitcmd), which is enough to
 * check the denort plumbing, the refusal paths, the post-build smoke test
 * and what gets embedded.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { compileTarget, embeddedFiles } from "../../scripts/compile.ts";
import {
  DENORT_SUMS_FILE,
  denortRelease,
  denortUrl,
  executableTarget,
  expectedExecutable,
  findDenort,
  parseDenortSums,
  prepareDenort,
  readZip,
} from "../../scripts/denort.ts";
import { binaryName, type Target, TARGETS } from "../../scripts/targets.ts";
import { bundle } from "../../scripts/bundle.ts";
import { BUNDLE_DIR, bundleState, readManifest } from "../../scripts/bundle_manifest.ts";
import { V8_FLAGS } from "../../scripts/launcher.ts";
import { sha256, zip } from "../../scripts/archives.ts";
import { DENO, HOST, ls, repoRoot, run, serveDir } from "./_fixture.ts";

/** A stand-in denort for this machine: a copy of /bin/true (a real executable of the host's format). */
async function standInDenort(dir: string): Promise<string> {
  const path = `${dir}/denort-standin`;
  await Deno.copyFile("/bin/true", path);
  return path;
}

function compileTask(args: string[], env: Record<string, string>) {
  return run(DENO, ["run", "-A", `${repoRoot}/scripts/compile.ts`, ...args], {
    HOME: Deno.env.get("HOME") ?? "/root",
    NO_COLOR: "1",
    ...env,
  });
}

Deno.test("compile task without denort fails, naming each target and what to provide", async () => {
  const dist = await Deno.makeTempDir({ prefix: "waitcmd-compile-test-" });
  try {
    // The repository pins no sum yet (scripts/denort-sums.txt says why): with neither variable
    // set, every target is refused before anything is downloaded.
    const pinned = parseDenortSums(await Deno.readTextFile(DENORT_SUMS_FILE), DENORT_SUMS_FILE);
    const r = await compileTask(["--dist", dist], {});
    assertEquals(r.code, 1);
    for (const t of TARGETS) {
      if (pinned.has(`${Deno.version.deno} ${t}`)) continue;
      assertStringIncludes(
        r.stderr,
        `compile: ${t}: BLOCKED: no denort for ${t}: no pinned SHA-256 for deno ${Deno.version.deno} ${t} in scripts/denort-sums.txt; add it from denort-${t}.zip.sha256sum of ${denortRelease()}, or set DENORT_BIN / DENORT_DIR (download: ${
          denortUrl(t)
        })`,
      );
    }
    const none = await compileTask(["--dist", dist], { DENORT_DIR: `${dist}/none` });
    assertEquals(none.code, 1);
    assertStringIncludes(
      none.stderr,
      `compile: ${HOST}: BLOCKED: no denort for ${HOST}: set DENORT_BIN to it, or put denort-${HOST}.zip into DENORT_DIR`,
    );
    for (const out of [r, none]) {
      assertStringIncludes(out.stderr, "compile: INCOMPLETE: 0 of 5 target(s) built, 5 blocked");
    }
    assertEquals(await ls(dist), []);
  } finally {
    await Deno.remove(dist, { recursive: true });
  }
});

Deno.test("parseDenortSums() reads `<deno version> <target> <sha256>` lines and names a bad line", () => {
  const sum = "0123456789abcdef".repeat(4);
  const good = parseDenortSums(
    `# comment\n\n2.9.6 x86_64-unknown-linux-gnu ${sum}\n  2.9.7\taarch64-apple-darwin ${sum.toUpperCase()} # note\n`,
    "/x/sums.txt",
  );
  assertEquals([...good], [
    ["2.9.6 x86_64-unknown-linux-gnu", sum],
    ["2.9.7 aarch64-apple-darwin", sum],
  ]);
  const bad: [string, string][] = [
    [`2.9.6 x86_64-unknown-linux-gnu`, `"2.9.6 x86_64-unknown-linux-gnu"`],
    [`v2.9.6 x86_64-unknown-linux-gnu ${sum}`, "v2.9.6"],
    [`2.9.6 sparc-sun-solaris ${sum}`, "sparc-sun-solaris"],
    [`2.9.6 x86_64-unknown-linux-gnu ${sum.slice(1)}`, sum.slice(1)],
    [`2.9.6 x86_64-unknown-linux-gnu ${sum} extra`, "extra"],
    [`${sum}  denort-x86_64-unknown-linux-gnu.zip`, "denort-x86_64"],
  ];
  for (const [line, names] of bad) {
    try {
      parseDenortSums(`# ok\n${line}\n`, "/x/sums.txt");
      throw new Error(`accepted ${line}`);
    } catch (e) {
      const msg = (e as Error).message;
      assertStringIncludes(
        msg,
        `/x/sums.txt:2: expected "<deno version> <target> <sha256>", got "`,
      );
      assertStringIncludes(msg, names);
    }
  }
  // The repository's own file parses.
  parseDenortSums(Deno.readTextFileSync(DENORT_SUMS_FILE), DENORT_SUMS_FILE);
});

/** A loopback release host serving `denort-<HOST>.zip` (a stand-in) as dl.deno.land lays it out. */
async function denortHost(
  dir: string,
): Promise<{ url: string; sum: string; close(): Promise<void> }> {
  const base = await Deno.readFile(await standInDenort(dir));
  const archive = await zip([{ name: "denort", data: base, mode: 0o755 }], 1_700_000_000);
  await Deno.mkdir(`${dir}/www/v${Deno.version.deno}`, { recursive: true });
  await Deno.writeFile(`${dir}/www/v${Deno.version.deno}/denort-${HOST}.zip`, archive);
  const server = serveDir(`${dir}/www`);
  return { url: server.url, sum: await sha256(archive), close: server.close };
}

Deno.test({
  name:
    "compileTarget() downloads denort when none is given and builds with it only when its SHA-256 is the pinned one",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-compile-test-" });
    const host = await denortHost(dir);
    try {
      const dist = await freshBundle(dir);
      const sums = `${dir}/sums.txt`;
      const env = { WAITCMD_DENORT_URL: host.url, WAITCMD_DENORT_SUMS: sums };
      const url = `${host.url}/v${Deno.version.deno}/denort-${HOST}.zip`;

      await Deno.writeTextFile(sums, `${Deno.version.deno} ${HOST} ${host.sum}\n`);
      const work = `${dir}/work`;
      await Deno.mkdir(work);
      const ok = await compileTarget(HOST, { dist: `${dir}/ok`, env, bundle: dist, workDir: work });
      assertEquals(ok.status, "built", ok.reason);
      assertEquals(ok.origin, `${url} (SHA-256 as pinned)`);
      assertStringIncludes(ok.log!, "Embedded Files"); // deno compile ran on the fetched denort
      // The file given to deno compile as DENORT_BIN: the archive's denort, extracted.
      assertEquals(
        await Deno.readFile(`${work}/denort-${HOST}`),
        await Deno.readFile(`${dir}/denort-standin`),
      );
      assertEquals(await ls(`${dir}/ok`), [binaryName(HOST)]);

      const wrong = "0".repeat(64);
      await Deno.writeTextFile(sums, `${Deno.version.deno} ${HOST} ${wrong}\n`);
      const bad = await compileTarget(HOST, { dist: `${dir}/bad`, env, bundle: dist });
      assertEquals(bad.status, "blocked");
      assertEquals(
        bad.reason,
        `${url}: SHA-256 ${host.sum} does not match ${wrong} pinned for deno ${Deno.version.deno} ${HOST} in ${sums}; refused`,
      );
      assertEquals(await ls(`${dir}/bad`), []);
    } finally {
      await host.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "compile task refuses a downloaded denort whose SHA-256 is not the pinned one",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-compile-test-" });
    const host = await denortHost(dir);
    try {
      const wrong = "f".repeat(64);
      await Deno.writeTextFile(`${dir}/sums.txt`, `${Deno.version.deno} ${HOST} ${wrong}\n`);
      const r = await compileTask(["--dist", `${dir}/dist`, "--target", HOST], {
        WAITCMD_DENORT_URL: host.url,
        WAITCMD_DENORT_SUMS: `${dir}/sums.txt`,
      });
      assertEquals(r.code, 1, r.stderr);
      assertStringIncludes(
        r.stderr,
        `compile: ${HOST}: BLOCKED: ${host.url}/v${Deno.version.deno}/denort-${HOST}.zip: SHA-256 ${host.sum} does not match ${wrong} pinned for deno ${Deno.version.deno} ${HOST} in ${dir}/sums.txt; refused\n`,
      );
      assertEquals(await ls(`${dir}/dist`), []);
    } finally {
      await host.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("compile task refuses DENORT_BIN pointing at the deno CLI", async () => {
  const dist = await Deno.makeTempDir({ prefix: "waitcmd-compile-test-" });
  try {
    const r = await compileTask(["--dist", dist, "--target", HOST], {
      DENORT_BIN: Deno.execPath(),
    });
    assertEquals(r.code, 1);
    assertStringIncludes(
      r.stderr,
      `DENORT_BIN=${Deno.execPath()} is the deno CLI itself, not denort`,
    );
    assertEquals(await ls(dist), []);
    const bad = await compileTask(["--target", "sparc-sun-solaris"], {});
    assertEquals(bad.code, 2);
    assertStringIncludes(bad.stderr, `compile: unknown target "sparc-sun-solaris"`);
  } finally {
    await Deno.remove(dist, { recursive: true });
  }
});

Deno.test("findDenort() looks at DENORT_BIN for the host and DENORT_DIR per target", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-denort-test-" });
  try {
    const host: Target = "x86_64-unknown-linux-gnu";
    await Deno.writeTextFile(`${dir}/denort`, "");
    await Deno.writeTextFile(`${dir}/denort-aarch64-unknown-linux-gnu`, "");
    await Deno.writeTextFile(`${dir}/denort-x86_64-pc-windows-msvc.exe`, "");
    await Deno.writeTextFile(`${dir}/denort-aarch64-apple-darwin.zip`, "");
    const cases: [string, Target, Record<string, string>, string][] = [
      [
        "DENORT_BIN for the host",
        host,
        { DENORT_BIN: `${dir}/denort` },
        `found DENORT_BIN=${dir}/denort`,
      ],
      [
        "DENORT_BIN that does not exist",
        host,
        { DENORT_BIN: `${dir}/nope` },
        `missing DENORT_BIN=${dir}/nope does not exist`,
      ],
      [
        "DENORT_BIN is not used for another target",
        "x86_64-apple-darwin",
        { DENORT_BIN: `${dir}/denort` },
        `missing no denort for x86_64-apple-darwin (DENORT_BIN is only used for ${host}): set DENORT_DIR to a directory holding denort-x86_64-apple-darwin.zip (download: ${
          denortUrl("x86_64-apple-darwin")
        })`,
      ],
      [
        "an extracted binary in DENORT_DIR",
        "aarch64-unknown-linux-gnu",
        { DENORT_DIR: dir },
        "found DENORT_DIR/denort-aarch64-unknown-linux-gnu",
      ],
      [
        "an .exe in DENORT_DIR",
        "x86_64-pc-windows-msvc",
        { DENORT_DIR: dir },
        "found DENORT_DIR/denort-x86_64-pc-windows-msvc.exe",
      ],
      [
        "the official zip in DENORT_DIR",
        "aarch64-apple-darwin",
        { DENORT_DIR: dir },
        "found DENORT_DIR/denort-aarch64-apple-darwin.zip zip",
      ],
      [
        "nothing in DENORT_DIR",
        "x86_64-apple-darwin",
        { DENORT_DIR: dir },
        `missing no denort for x86_64-apple-darwin: put denort-x86_64-apple-darwin.zip into DENORT_DIR (${dir}) (download: ${
          denortUrl("x86_64-apple-darwin")
        })`,
      ],
      [
        "neither variable, no sum pinned: nothing to download",
        host,
        { WAITCMD_DENORT_SUMS: `${dir}/empty-sums.txt` },
        `missing no denort for ${host}: no pinned SHA-256 for deno ${Deno.version.deno} ${host} in ${dir}/empty-sums.txt; add it from denort-${host}.zip.sha256sum of ${denortRelease()}, or set DENORT_BIN / DENORT_DIR (download: ${
          denortUrl(host)
        })`,
      ],
      [
        "neither variable, a sum pinned: the official archive, from a mirror",
        host,
        { WAITCMD_DENORT_SUMS: `${dir}/sums.txt`, WAITCMD_DENORT_URL: "http://mirror.test/r/" },
        `fetch http://mirror.test/r/v${Deno.version.deno}/denort-${host}.zip ${"ab".repeat(32)}`,
      ],
      [
        "neither variable, a sums file that cannot be read",
        host,
        { WAITCMD_DENORT_SUMS: `${dir}/nope.txt` },
        `missing no denort for ${host}: cannot read ${dir}/nope.txt: No such file or directory (os error 2): readfile '${dir}/nope.txt'`,
      ],
    ];
    await Deno.writeTextFile(`${dir}/empty-sums.txt`, "# nothing pinned\n");
    await Deno.writeTextFile(
      `${dir}/sums.txt`,
      `${Deno.version.deno} ${host} ${"AB".repeat(32)}  # upper case is read as lower\n`,
    );
    for (const [name, target, env, want] of cases) {
      await t.step(name, async () => {
        const l = await findDenort(target, env, host);
        const got = "found" in l
          ? `found ${l.found.origin}${l.found.zip ? " zip" : ""}`
          : "fetch" in l
          ? `fetch ${l.fetch.url} ${l.fetch.sha256}`
          : `missing ${l.missing}`;
        assertEquals(got, want);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("executableTarget() reads the OS and CPU of ELF, Mach-O and PE headers", () => {
  const elf = (machine: number) => {
    const b = new Uint8Array(64);
    b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1], 0);
    new DataView(b.buffer).setUint16(18, machine, true);
    return b;
  };
  const macho = (cpu: number) => {
    const b = new Uint8Array(64);
    const v = new DataView(b.buffer);
    v.setUint32(0, 0xfeedfacf, true);
    v.setUint32(4, cpu, true);
    return b;
  };
  const pe = (machine: number) => {
    const b = new Uint8Array(256);
    const v = new DataView(b.buffer);
    b.set([0x4d, 0x5a], 0);
    v.setUint32(0x3c, 0x80, true);
    v.setUint32(0x80, 0x50450000);
    v.setUint16(0x84, machine, true);
    return b;
  };
  assertEquals(executableTarget(elf(0x3e)), "linux-x86_64");
  assertEquals(executableTarget(elf(0xb7)), "linux-aarch64");
  assertEquals(executableTarget(macho(0x01000007)), "darwin-x86_64");
  assertEquals(executableTarget(macho(0x0100000c)), "darwin-aarch64");
  assertEquals(executableTarget(pe(0x8664)), "windows-x86_64");
  assertEquals(executableTarget(new TextEncoder().encode("#!/bin/sh\necho hi\n")), undefined);
  for (const t of TARGETS) {
    assert(/^(linux|darwin|windows)-(x86_64|aarch64)$/.test(expectedExecutable(t)));
  }
  assertEquals(expectedExecutable("aarch64-apple-darwin"), "darwin-aarch64");
  assertEquals(expectedExecutable("x86_64-pc-windows-msvc"), "windows-x86_64");
});

Deno.test("prepareDenort() extracts the official zip and rejects the wrong executables", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-denort-test-" });
  try {
    const base = await standInDenort(dir);
    const bytes = await Deno.readFile(base);
    // The official archive holds a single `denort` (or `denort.exe`).
    await Deno.writeFile(
      `${dir}/denort-${HOST}.zip`,
      await zip([{ name: "denort", data: bytes, mode: 0o755 }], 1_700_000_000),
    );
    const path = await prepareDenort(HOST, {
      path: `${dir}/denort-${HOST}.zip`,
      origin: "DENORT_DIR/x.zip",
      zip: true,
    }, dir);
    assertEquals(await Deno.readFile(path), bytes);
    assertEquals(readZip(await Deno.readFile(`${dir}/denort-${HOST}.zip`)).length, 1);

    const reject = async (target: Target, file: string, want: string) => {
      try {
        await prepareDenort(target, { path: file, origin: "ORIGIN" }, dir);
      } catch (e) {
        assertStringIncludes((e as Error).message, want);
        return;
      }
      throw new Error(`prepareDenort accepted ${file} for ${target}`);
    };
    await reject(
      "x86_64-pc-windows-msvc",
      base,
      `ORIGIN is an executable for ${
        expectedExecutable(HOST)
      }, but x86_64-pc-windows-msvc needs a denort for windows-x86_64`,
    );
    await Deno.writeTextFile(`${dir}/text`, "not a binary");
    await reject(HOST, `${dir}/text`, "ORIGIN is not an executable, but");
    await reject(HOST, Deno.execPath(), "ORIGIN is the deno CLI itself, not denort");
    await Deno.writeFile(
      `${dir}/empty.zip`,
      await zip([{ name: "README", data: new Uint8Array(1), mode: 0o644 }], 0),
    );
    try {
      await prepareDenort(HOST, { path: `${dir}/empty.zip`, origin: "Z", zip: true }, dir);
      throw new Error("accepted a zip without denort");
    } catch (e) {
      assertEquals((e as Error).message, "Z: the archive holds no denort");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A bundle of this tree's sources: dist/bundle when fresh, else one built into `dir`. */
async function freshBundle(dir: string): Promise<string> {
  if (await bundleState() === "fresh") return BUNDLE_DIR;
  await bundle({ out: `${dir}/bundle` });
  return `${dir}/bundle`;
}

Deno.test({
  name:
    "compileTarget() embeds the bundle's modules, workers and assets, and nothing else (no node_modules, types, maps or add-ons)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-compile-test-" });
    try {
      const env = { DENORT_BIN: await standInDenort(dir) };
      const dist = await freshBundle(dir);
      const manifest = (await readManifest(dist))!;
      const r = await compileTarget(HOST, { dist: `${dir}/b`, env, bundle: dist });
      assertEquals(r.status, "built", r.reason);
      assertEquals(r.output, `${dir}/b/${binaryName(HOST)}`);
      const embedded = embeddedFiles(r.log!);
      const shipped = manifest.files.map((f) => f.path);
      // deno compile lists a folder whose files are all embedded as `folder/*`.
      const listed = (path: string) =>
        embedded.includes(path) ||
        path.split("/").slice(0, -1).some((_, i, dirs) =>
          embedded.includes(`${dirs.slice(0, i + 1).join("/")}/*`)
        );
      for (const path of shipped) assert(listed(path), `${path} is not embedded:\n${r.log}`);
      for (const w of Object.values(manifest.workers)) assert(listed(w), `worker ${w}`);
      for (const a of manifest.assets) assert(listed(a), `asset ${a}`);
      for (const e of embedded) {
        const folder = e.endsWith("/*") ? e.slice(0, -2) + "/" : undefined;
        assert(
          folder ? shipped.some((p) => p.startsWith(folder)) : shipped.includes(e),
          `${e} is embedded but is not part of the bundle`,
        );
        assert(!/node_modules|\.d\.ts$|\.map$|\.node$/.test(e), `${e} must not be embedded`);
      }
      // The binary runs with the release's V8 flags: deno compile keeps them in its metadata.
      const binary = new TextDecoder().decode(await Deno.readFile(r.output!));
      for (const flag of V8_FLAGS.replace("--v8-flags=", "").split(",")) {
        assertStringIncludes(binary, JSON.stringify(flag));
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("embeddedFiles() reads deno compile's tree of embedded files", () => {
  const log = [
    "Compile dist/bundle/main.js to waitcmd",
    "",
    "Embedded Files",
    "",
    "waitcmd",
    "├── assets/* (55.99KB)",
    "├─┬ conditions (271B)",
    "│ ├── _common/regex_worker.js (171B)",
    "│ └─┬ x (100B)",
    "│   └── y.js (100B)",
    "├── main.js (28KB)",
    "└── probe-X.js (1KB)",
    "",
    "Files: 6.1MB",
  ].join("\n");
  assertEquals(embeddedFiles(log), [
    "assets/*",
    "conditions/_common/regex_worker.js",
    "conditions/x/y.js",
    "main.js",
    "probe-X.js",
  ]);
});

Deno.test({
  name: "compile task smoke-tests the host binary and drops one that is not waitcmd",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-compile-test-" });
    try {
      const base = await Deno.readFile(await standInDenort(dir));
      await Deno.mkdir(`${dir}/denorts`);
      await Deno.writeFile(
        `${dir}/denorts/denort-${HOST}.zip`,
        await zip([{ name: "denort", data: base, mode: 0o755 }], 1_700_000_000),
      );
      const r = await compileTask(["--dist", `${dir}/dist`, "--target", HOST], {
        DENORT_DIR: `${dir}/denorts`,
      });
      assertEquals(r.code, 1, r.stderr);
      assertStringIncludes(r.stderr, "Embedded Files"); // deno compile ran, with the zip's denort
      assertStringIncludes(
        r.stderr,
        `compile: ${HOST}: FAILED: the built binary does not answer as waitcmd`,
      );
      assertEquals(await ls(`${dir}/dist`), []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
