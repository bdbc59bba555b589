/**
 * `deno task compile` (scripts/compile.ts). Real denort binaries cannot be
 * had on these machines, so the builds here use this machine's `/bin/true`
 * as a stand-in base: `deno compile` embeds the program into it exactly as
 * into denort (the result just does not run waitcmd), which is enough to
 * check the denort plumbing, the refusal paths, the post-build smoke test
 * and which npm packages get embedded.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import {
  binaryName,
  compileTarget,
  denortUrl,
  executableTarget,
  expectedExecutable,
  findDenort,
  prepareDenort,
  readZip,
  type Target,
  TARGETS,
  WORKERS,
} from "../../scripts/compile.ts";
import { zip } from "../../scripts/release.ts";
import denoJson from "../../deno.json" with { type: "json" };
import { DENO, HOST, ls, repoRoot, run } from "./_fixture.ts";

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
    const r = await compileTask(["--dist", dist], {});
    assertEquals(r.code, 1);
    for (const t of TARGETS) {
      assertStringIncludes(r.stderr, `compile: ${t}: BLOCKED: no denort for ${t}: `);
      assertStringIncludes(r.stderr, `(download: ${denortUrl(t)})`);
    }
    assertStringIncludes(
      r.stderr,
      `compile: ${HOST}: BLOCKED: no denort for ${HOST}: set DENORT_BIN to it, or set DENORT_DIR`,
    );
    assertStringIncludes(r.stderr, "compile: INCOMPLETE: 0 of 5 target(s) built, 5 blocked");
    assertEquals(await ls(dist), []);
  } finally {
    await Deno.remove(dist, { recursive: true });
  }
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
        "nothing at all for the host",
        host,
        {},
        `missing no denort for ${host}: set DENORT_BIN to it, or set DENORT_DIR to a directory holding denort-${host}.zip (download: ${
          denortUrl(host)
        })`,
      ],
    ];
    for (const [name, target, env, want] of cases) {
      await t.step(name, async () => {
        const l = await findDenort(target, env, host);
        const got = "found" in l
          ? `found ${l.found.origin}${l.found.zip ? " zip" : ""}`
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
      zip([{ name: "denort", data: bytes, mode: 0o755 }], 1_700_000_000),
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
      zip([{ name: "README", data: new Uint8Array(1), mode: 0o644 }], 0),
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

/** npm packages that conditions/ imports lazily with a literal specifier, as `name@version`. */
async function lazyNpmImports(): Promise<{ name: string; version: string }[]> {
  const imports = denoJson.imports as Record<string, string>;
  const found = new Map<string, { name: string; version: string }>();
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      if (e.isDirectory) await walk(`${dir}/${e.name}`);
      else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) {
        files.push(`${dir}/${e.name}`);
      }
    }
  };
  await walk(`${repoRoot}/conditions`);
  for (const path of files) {
    const src = await Deno.readTextFile(path);
    for (const m of src.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
      const spec = imports[m[1]!] ?? m[1]!;
      const npm = /^npm:(@?[^@]+)@(.+)$/.exec(spec);
      if (npm) found.set(npm[1]!, { name: npm[1]!, version: npm[2]! });
    }
  }
  return [...found.values()];
}

/**
 * Whether deno compile's "Embedded Files" listing shows an npm package. The
 * listing has three shapes: `── name/1.2.3/*` (one version), `─┬ name (…)`
 * with `── 1.2.3/*` children (several versions), and for scoped packages
 * `── @scope/name/*` or `─┬ @scope (…)` with `── name/*` children.
 */
function embeds(log: string, name: string, version: string): boolean {
  if (log.includes(`── ${name}/${version}/`) || log.includes(`── ${name}/*`)) return true;
  const [parent, child] = name.startsWith("@")
    ? name.split("/") as [string, string]
    : [name, version];
  const lines = log.split("\n");
  const head = lines.findIndex((l) => l.includes(`─┬ ${parent} (`));
  if (head < 0) return false;
  const depth = lines[head]!.indexOf("─┬");
  for (const l of lines.slice(head + 1)) {
    if (l.search(/[├└]──/) <= depth && l.search(/[├└]─┬/) <= depth) break; // left the subtree
    if (l.includes(`── ${child}/`) || l.includes(`─┬ ${child} (`)) return true;
  }
  return false;
}

Deno.test({
  name: "compileTarget() embeds the npm packages that kinds import lazily, and no others",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-compile-test-" });
    try {
      const env = { DENORT_BIN: await standInDenort(dir) };
      // A module with one lazy import proves both halves: imported -> embedded, not imported -> absent.
      await Deno.writeTextFile(
        `${dir}/lazy.ts`,
        `if (Deno.args[0] === "x") {\n  const m = await import("jsonpath-plus");\n  console.log(typeof m);\n}\n`,
      );
      const small = await compileTarget(HOST, { dist: `${dir}/a`, env, entry: `${dir}/lazy.ts` });
      assertEquals(small.status, "built", small.reason);
      assert(embeds(small.log!, "jsonpath-plus", "11.3.0"), small.log);
      assert(
        !embeds(small.log!, "dockerode", "5.0.1"),
        "dockerode is not imported, so not embedded",
      );
      assert(!embeds(small.log!, "ssh2", "1.17.0"), "ssh2 is not imported, so not embedded");

      // The real program: every lazily imported npm package of every kind is inside.
      const real = await compileTarget(HOST, { dist: `${dir}/b`, env });
      assertEquals(real.status, "built", real.reason);
      assertEquals(real.output, `${dir}/b/${binaryName(HOST)}`);
      assertStringIncludes(real.log!, "main.ts");
      for (const w of WORKERS) assertStringIncludes(real.log!, w.slice(w.lastIndexOf("/") + 1));
      for (const pkg of await lazyNpmImports()) {
        assert(
          embeds(real.log!, pkg.name, pkg.version),
          `${pkg.name}@${pkg.version} is not embedded:\n${real.log}`,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
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
        zip([{ name: "denort", data: base, mode: 0o755 }], 1_700_000_000),
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
