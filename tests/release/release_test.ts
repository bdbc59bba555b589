/**
 * `deno task release` (scripts/release.ts) run as a subprocess into temporary
 * dist directories, so the repository is never written: without denort it
 * must fail on the compile step and still produce everything else; with
 * (stand-in) binaries it must produce the complete, reproducible release.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { readZip } from "../../scripts/denort.ts";
import { TARGETS, version } from "../../scripts/targets.ts";
import { archiveName, parseSha256sums, tarGz, zip } from "../../scripts/archives.ts";
import { NOT_BUILT } from "../../scripts/formula.ts";
import { DENO, fileSha256, ls, repoRoot, run, writeStandIns } from "./_fixture.ts";
import { inTempDir } from "../services/_util.ts";

const REPO_FORMULA = `${repoRoot}/packaging/homebrew/waitcmd.rb`;

/** Runs the release task with an environment that has no denort at all. */
function releaseTask(args: string[], env: Record<string, string> = {}) {
  return run(DENO, ["run", "-A", `${repoRoot}/scripts/release.ts`, ...args], {
    HOME: Deno.env.get("HOME") ?? "/root",
    NO_COLOR: "1",
    ...env,
  });
}

async function readOrUndefined(path: string): Promise<string | undefined> {
  return await Deno.readTextFile(path).catch(() => undefined);
}

Deno.test("release task without DENORT_BIN fails on the compile step and produces the rest", async () => {
  const dist = await Deno.makeTempDir({ prefix: "waitcmd-release-test-" });
  const repoFormulaBefore = await readOrUndefined(REPO_FORMULA);
  try {
    const r = await releaseTask(["--dist", dist, "--formula-out", `${dist}/formula-out.rb`]);
    assertEquals(r.code, 1, r.stderr);
    assertEquals(r.stdout, "");
    // The blocked step is named, per target, with what to provide.
    assertStringIncludes(r.stderr, "release: step 1/4 compile");
    for (const t of TARGETS) {
      assertStringIncludes(r.stderr, `compile: ${t}: BLOCKED: no denort for ${t}`);
      assertStringIncludes(
        r.stderr,
        `https://dl.deno.land/release/v${Deno.version.deno}/denort-${t}.zip`,
      );
    }
    assertStringIncludes(r.stderr, "DENORT_BIN=/path/to/denort");
    assertStringIncludes(r.stderr, "DENORT_DIR=/path/to/dir");
    assertMatch(
      r.stderr,
      /release: BLOCKED at step 1\/4 compile: 5 of 5 target\(s\) not built \(.*\); checksums, formula, installer and notes were produced for the rest\. Not publishable\.\n$/,
    );
    // The rest exists: installer, formula, checksums, notes — and no archive.
    assertEquals(await ls(`${dist}/release`), ["SHA256SUMS", "install.sh", "waitcmd.rb"]);
    const sums = parseSha256sums(await Deno.readTextFile(`${dist}/release/SHA256SUMS`));
    assertEquals([...sums.keys()].sort(), ["install.sh", "waitcmd.rb"]);
    for (const [f, h] of sums) assertEquals(h, await fileSha256(`${dist}/release/${f}`), f);
    assertEquals(
      await Deno.readTextFile(`${dist}/release/install.sh`),
      await Deno.readTextFile(`${repoRoot}/scripts/install.sh`),
    );
    const rb = await Deno.readTextFile(`${dist}/release/waitcmd.rb`);
    assertEquals(rb.split(`sha256 "${NOT_BUILT}"`).length - 1, 4);
    assertStringIncludes(rb, "class Waitcmd < Formula");
    const notes = await Deno.readTextFile(`${dist}/RELEASE_NOTES.md`);
    assertStringIncludes(notes, `# waitcmd ${version}`);
    assertStringIncludes(notes, "**Incomplete build:**");
    // An incomplete formula never reaches the repository copy.
    assertEquals(await readOrUndefined(`${dist}/formula-out.rb`), undefined);
    assertEquals(await readOrUndefined(REPO_FORMULA), repoFormulaBefore);
    // No binaries were left in dist/ either.
    assertEquals(await ls(dist), ["RELEASE_NOTES.md", "release"]);
  } finally {
    await Deno.remove(dist, { recursive: true });
  }
});

/** A release test with a dist directory of its own (removed after). */
function distTest(name: string, fn: (dist: string) => Promise<void>): void {
  Deno.test(name, () => inTempDir("waitcmd-release-test-")(fn));
}

distTest("release task packages every target reproducibly from built binaries", async (dist) => {
  await writeStandIns(dist, version);
  const args = [
    ...["--skip-compile", "--dist", dist],
    ...["--base-url", "https://downloads.example.test/waitcmd/"],
    ...["--formula-out", `${dist}/formula-out.rb`],
  ];
  const r = await releaseTask(args);
  assertEquals(r.code, 0, r.stderr);
  assertStringIncludes(r.stderr, "release: done: 7 files ready to publish");
  const files = await ls(`${dist}/release`);
  assertEquals(
    files,
    [
      "SHA256SUMS",
      "install.sh",
      ...TARGETS.map((t) => archiveName(t)),
      "waitcmd.rb",
    ].sort(),
  );
  // SHA256SUMS is what sha256sum itself accepts.
  const check = await run(
    "sha256sum",
    ["--check", "--strict", "SHA256SUMS"],
    {},
    `${dist}/release`,
  );
  assertEquals(check.code, 0, check.stdout + check.stderr);
  assertEquals(check.stdout.trim().split("\n").length, 7);
  // Archive layout: one top directory holding the executable (mode 0755) and the docs.
  const docs: string[] = [];
  for (const d of ["README.md", "LICENSE"]) {
    if (await Deno.stat(`${repoRoot}/${d}`).then(() => true, () => false)) docs.push(d);
  }
  for (const t of TARGETS.filter((t) => !t.includes("windows"))) {
    const list = await run("tar", ["-tvzf", `${dist}/release/${archiveName(t)}`], {});
    assertEquals(list.code, 0, list.stderr);
    assertMatch(
      list.stdout,
      new RegExp(`^-rwxr-xr-x root/root .* waitcmd-${version}-${t}/waitcmd$`, "m"),
    );
    for (const d of docs) {
      assertMatch(
        list.stdout,
        new RegExp(`^-rw-r--r-- root/root .* waitcmd-${version}-${t}/${d}$`, "m"),
      );
    }
    const x = await run("tar", [
      "-xzOf",
      `${dist}/release/${archiveName(t)}`,
      `waitcmd-${version}-${t}/waitcmd`,
    ], {});
    assertEquals(x.stdout, new TextDecoder().decode(await Deno.readFile(`${dist}/waitcmd-${t}`)));
  }
  const win = `${dist}/release/${archiveName("x86_64-pc-windows-msvc")}`;
  const unzip = await run("unzip", ["-Z1", win], {});
  const winDir = `waitcmd-${version}-x86_64-pc-windows-msvc`;
  const expected = [`${winDir}/waitcmd.exe`, ...docs.map((d) => `${winDir}/${d}`)];
  if (unzip.code !== 127) assertEquals(unzip.stdout.trim().split("\n"), expected);
  const entries = readZip(await Deno.readFile(win));
  assertEquals(entries.map((e) => e.name), expected);
  assertEquals(
    entries[0]!.data(),
    await Deno.readFile(`${dist}/waitcmd-x86_64-pc-windows-msvc.exe`),
  );
  // Complete: the formula is written where --formula-out says.
  assertEquals(
    await Deno.readTextFile(`${dist}/formula-out.rb`),
    await Deno.readTextFile(`${dist}/release/waitcmd.rb`),
  );
  assert(!(await Deno.readTextFile(`${dist}/RELEASE_NOTES.md`)).includes("Incomplete"));
  // The container build context: the Linux binaries under docker's platform names.
  assertEquals(await ls(`${dist}/docker`), ["linux-amd64", "linux-arm64"]);
  assertEquals(
    await Deno.readFile(`${dist}/docker/linux-arm64/waitcmd`),
    await Deno.readFile(`${dist}/waitcmd-aarch64-unknown-linux-gnu`),
  );
  assertEquals((await Deno.stat(`${dist}/docker/linux-amd64/waitcmd`)).mode! & 0o777, 0o755);
  // Reproducible: a second run gives byte-identical artifacts.
  const first = await Deno.readTextFile(`${dist}/release/SHA256SUMS`);
  const again = await releaseTask(args);
  assertEquals(again.code, 0, again.stderr);
  assertEquals(await Deno.readTextFile(`${dist}/release/SHA256SUMS`), first);
});

distTest("release task refuses a stale host binary that is not this version", async (dist) => {
  await writeStandIns(dist, "0.0.1");
  const r = await releaseTask(["--skip-compile", "--dist", dist, "--formula-out", "none"]);
  assertEquals(r.code, 1);
  assertStringIncludes(
    r.stderr,
    `release: ${Deno.build.target}: the built binary does not answer as waitcmd`,
  );
  assert(!(await ls(`${dist}/release`)).includes(archiveName(Deno.build.target as never)));
});

Deno.test("release task rejects bad arguments with exit 2", async () => {
  const a = await releaseTask(["--base-url", "ftp://x"]);
  assertEquals(a.code, 2);
  assertStringIncludes(
    a.stderr,
    `release: --base-url: expected an http(s):// or file:// URL, got "ftp://x"`,
  );
  const b = await releaseTask(["--frobnicate"]);
  assertEquals(b.code, 2);
  assertStringIncludes(b.stderr, `release: unknown argument "--frobnicate"`);
});

Deno.test("tarGz() and zip() write archives that tar, gzip and zip readers accept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-archive-test-" });
  try {
    const big = new Uint8Array(300_000).map((_, i) => (i * 7919) % 251);
    const long = `d/${"x".repeat(60)}/${"y".repeat(60)}/file`; // needs the ustar prefix field
    const entries = [
      { name: "top/a.txt", data: new TextEncoder().encode("hello\n"), mode: 0o644 },
      { name: "top/bin/tool", data: big, mode: 0o755 },
      { name: long, data: new Uint8Array(0), mode: 0o600 },
    ];
    await Deno.writeFile(`${dir}/t.tar.gz`, await tarGz(entries, 1_700_000_000));
    const x = await run("tar", ["-xzf", "t.tar.gz"], {}, dir);
    assertEquals(x.code, 0, x.stderr);
    assertEquals(await Deno.readTextFile(`${dir}/top/a.txt`), "hello\n");
    assertEquals(await Deno.readFile(`${dir}/top/bin/tool`), big);
    assertEquals((await Deno.stat(`${dir}/top/bin/tool`)).mode! & 0o777, 0o755);
    assertEquals((await Deno.stat(`${dir}/${long}`)).size, 0);
    assertEquals((await Deno.stat(`${dir}/top/a.txt`)).mtime?.getTime(), 1_700_000_000_000);

    const z = await zip(entries, 1_700_000_000);
    const back = readZip(z);
    assertEquals(back.map((e) => e.name), entries.map((e) => e.name));
    for (let i = 0; i < entries.length; i++) assertEquals(back[i]!.data(), entries[i]!.data);
    await Deno.writeFile(`${dir}/t.zip`, z);
    const t = await run("unzip", ["-t", "t.zip"], {}, dir);
    if (t.code !== 127) assertEquals(t.code, 0, t.stdout + t.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
