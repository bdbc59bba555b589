/**
 * scripts/install.sh against a release host on loopback. The release holds
 * stand-in executables (shell scripts answering `--version`): what is under
 * test is the installer's logic — platform detection, version resolution,
 * checksum verification, directory choice, atomic and idempotent install.
 * Every run uses `dash` (Debian's /bin/sh), the strictest common POSIX sh.
 *
 * The machine's real /usr/local/bin is never touched: WAITCMD_SYSTEM_BIN_DIR
 * stands in for it (tests run as root, for whom every directory is writable,
 * so the unwritable case runs the installer as the user `nobody`).
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { TARGETS } from "../../scripts/targets.ts";
import { archiveName } from "../../scripts/archives.ts";
import { requireService } from "../services/_util.ts";
import {
  DENO,
  fileSha256,
  HOST,
  ls,
  repoRoot,
  run,
  serveDir,
  writeRelease,
  writeStandIns,
} from "./_fixture.ts";

const INSTALL_SH = `${repoRoot}/scripts/install.sh`;

interface World {
  root: string;
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/**
 * The release host: v0.1.0 made by the real release task from stand-ins;
 * v0.2.0 (also "latest"); v0.3.0 with a tampered archive; v0.4.0 whose binary
 * reports another version; v0.5.0 without a build for this machine.
 */
async function makeWorld(): Promise<World> {
  const root = await Deno.makeTempDir({ prefix: "waitcmd-install-test-" });
  await Deno.chmod(root, 0o755); // the `nobody` case reads the script and release from here
  const mirror = `${root}/mirror`;
  await writeStandIns(`${root}/dist`, "0.1.0");
  const rel = await new Deno.Command(DENO, {
    args: [
      ...["run", "-A", `${repoRoot}/scripts/release.ts`, "--skip-compile"],
      ...["--dist", `${root}/dist`, "--formula-out", "none"],
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(rel.code, 0, new TextDecoder().decode(rel.stderr));
  await Deno.mkdir(`${mirror}/v0.1.0`, { recursive: true });
  for (const f of await ls(`${root}/dist/release`)) {
    await Deno.copyFile(`${root}/dist/release/${f}`, `${mirror}/v0.1.0/${f}`);
  }
  await writeRelease(`${mirror}/v0.2.0`, "0.2.0");
  await Deno.mkdir(`${mirror}/latest`);
  await Deno.copyFile(`${mirror}/v0.2.0/SHA256SUMS`, `${mirror}/latest/SHA256SUMS`);
  await writeRelease(`${mirror}/v0.3.0`, "0.3.0", { tamper: HOST });
  await writeRelease(`${mirror}/v0.4.0`, "0.4.0", { says: "9.9.9" });
  await writeRelease(`${mirror}/v0.5.0`, "0.5.0", { targets: TARGETS.filter((t) => t !== HOST) });
  await Deno.copyFile(INSTALL_SH, `${root}/install.sh`);
  await Deno.chmod(`${root}/install.sh`, 0o755);
  const server = serveDir(mirror);
  return {
    root,
    url: server.url,
    requests: server.requests,
    async close() {
      await server.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

let caseNo = 0;

/** Fresh directories for one case: a fake HOME and a stand-in for /usr/local/bin. */
async function fresh(
  w: World,
): Promise<{ home: string; sys: string; dir: string; env: Record<string, string> }> {
  const dir = `${w.root}/case${++caseNo}`;
  await Deno.mkdir(`${dir}/home`, { recursive: true });
  await Deno.mkdir(`${dir}/sys`);
  const [home, sys] = [`${dir}/home`, `${dir}/sys`];
  // The installer's environment: this case's home and system bin directory.
  return { home, sys, dir, env: { HOME: home, WAITCMD_SYSTEM_BIN_DIR: sys } };
}

/** Runs the installer under dash with a clean environment pointing at the test host. */
function install(
  w: World,
  args: string[],
  env: Record<string, string>,
  shell = "dash",
) {
  return run(shell, [`${w.root}/install.sh`, ...args], { WAITCMD_BASE_URL: w.url, ...env });
}

async function versionOf(bin: string): Promise<string> {
  const r = await run(bin, ["--version"], {});
  return r.stdout.trim();
}

Deno.test({
  name: "install.sh installs, verifies and stays idempotent under dash",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    for (const tool of ["dash", "curl"]) {
      const found = await run("sh", ["-c", `command -v ${tool}`], {});
      if (found.code !== 0) {
        requireService(tool, `the installer tests run install.sh under dash and fetch with curl`);
        return;
      }
    }
    const w = await makeWorld();
    try {
      await t.step("happy path: pinned version into the writable system directory", async () => {
        const c = await fresh(w);
        const r = await install(w, ["--version", "0.1.0"], c.env);
        assertEquals(r.code, 0, r.stderr);
        assertEquals(r.stderr, "");
        assertEquals(await ls(c.sys), ["waitcmd"]); // no staging file left behind
        assertEquals(await versionOf(`${c.sys}/waitcmd`), `waitcmd 0.1.0 (${HOST}, stand-in)`);
        const archive = archiveName(HOST, "0.1.0");
        assertStringIncludes(r.stdout, `downloading ${w.url}/v0.1.0/${archive}`);
        assertStringIncludes(
          r.stdout,
          `verified sha256 ${await fileSha256(`${w.root}/dist/release/${archive}`)}`,
        );
        assertStringIncludes(r.stdout, `installed waitcmd 0.1.0 (${HOST}) to ${c.sys}/waitcmd`);
        assertStringIncludes(r.stdout, `is not on your PATH`);
        assertEquals((await Deno.stat(`${c.sys}/waitcmd`)).mode! & 0o777, 0o755);
        assertEquals(await ls(c.home), []); // nothing written to HOME
      });

      await t.step("re-running is idempotent; a new version replaces atomically", async () => {
        const c = await fresh(w);
        const env = c.env;
        const first = await install(w, ["--version", "0.1.0"], env);
        assertEquals(first.code, 0, first.stderr);
        const before = await Deno.stat(`${c.sys}/waitcmd`);
        const again = await install(w, ["--version", "0.1.0"], env);
        assertEquals(again.code, 0, again.stderr);
        assertStringIncludes(
          again.stdout,
          `waitcmd 0.1.0 (${HOST}) is already installed at ${c.sys}/waitcmd: nothing to do`,
        );
        const after = await Deno.stat(`${c.sys}/waitcmd`);
        assertEquals(after.ino, before.ino, "an unchanged install must not replace the file");
        assertEquals(await ls(c.sys), ["waitcmd"]);
        const upgrade = await install(w, ["--version=v0.2.0"], env);
        assertEquals(upgrade.code, 0, upgrade.stderr);
        assertStringIncludes(upgrade.stdout, `replaced waitcmd 0.1.0 (${HOST}, stand-in)`);
        assertEquals(await versionOf(`${c.sys}/waitcmd`), `waitcmd 0.2.0 (${HOST}, stand-in)`);
        assertEquals(await ls(c.sys), ["waitcmd"]);
      });

      await t.step("without --version the latest release is resolved", async () => {
        const c = await fresh(w);
        const r = await install(w, [], c.env);
        assertEquals(r.code, 0, r.stderr);
        assertEquals(await versionOf(`${c.sys}/waitcmd`), `waitcmd 0.2.0 (${HOST}, stand-in)`);
        assert(w.requests.includes("/latest/SHA256SUMS"), w.requests.join(" "));
        assertStringIncludes(r.stdout, `${w.url}/v0.2.0/${archiveName(HOST, "0.2.0")}`);
      });

      // Refused installs: exit 1, the reason on stderr, nothing installed anywhere.
      const refusals: [name: string, version: string, says: (stderr: string) => void][] = [
        [
          "a checksum mismatch is refused and nothing is installed",
          "0.3.0",
          (e) =>
            assertMatch(
              e,
              new RegExp(
                `^waitcmd-install: error: checksum mismatch for ${
                  archiveName(HOST, "0.3.0").replaceAll(".", "\\.")
                }: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; refusing to install`,
              ),
            ),
        ],
        [
          "a binary reporting another version is refused",
          "0.4.0",
          (e) =>
            assertStringIncludes(
              e,
              `the downloaded binary reports "waitcmd 9.9.9 (${HOST}, stand-in)", expected waitcmd 0.4.0; refusing to install`,
            ),
        ],
        [
          "an unknown version fails clearly",
          "9.9.9",
          (e) =>
            assertEquals(
              e,
              `waitcmd-install: error: waitcmd 9.9.9 not found: no ${w.url}/v9.9.9/SHA256SUMS (is the version right? releases: https://github.com/waitcmd/waitcmd/releases)\n`,
            ),
        ],
        [
          "a release without a build for this platform fails clearly",
          "0.5.0",
          (e) =>
            assertStringIncludes(
              e,
              `waitcmd 0.5.0 has no build for ${HOST} (${archiveName(HOST, "0.5.0")} is not in`,
            ),
        ],
      ];
      for (const [name, version, says] of refusals) {
        await t.step(name, async () => {
          const c = await fresh(w);
          const r = await install(w, ["--version", version], c.env);
          assertEquals(r.code, 1);
          says(r.stderr);
          assertEquals(await ls(c.sys), []);
          assertEquals(await ls(c.home), []);
        });
      }

      await t.step("a mismatch leaves an existing install untouched", async () => {
        const c = await fresh(w);
        const env = c.env;
        assertEquals((await install(w, ["--version", "0.1.0"], env)).code, 0);
        const sum = await fileSha256(`${c.sys}/waitcmd`);
        const r = await install(w, ["--version", "0.3.0"], env);
        assertEquals(r.code, 1);
        assertEquals(await fileSha256(`${c.sys}/waitcmd`), sum);
        assertEquals(await ls(c.sys), ["waitcmd"]);
      });

      await t.step(
        "an unwritable system directory falls back to ~/.local/bin (as nobody)",
        async () => {
          const setpriv = await run("sh", ["-c", "command -v setpriv"], {});
          if (setpriv.code !== 0) {
            requireService(
              "setpriv",
              "util-linux's setpriv runs the installer as an unprivileged user",
            );
            return;
          }
          const c = await fresh(w);
          await Deno.chmod(c.dir, 0o755);
          await Deno.chown(c.home, 65534, 65534);
          // c.sys: owned by root, mode 0755: not writable for nobody.
          const r = await run("setpriv", [
            ...["--reuid=65534", "--regid=65534", "--clear-groups", "dash", `${w.root}/install.sh`],
            ...["--version", "0.1.0"],
          ], { HOME: c.home, WAITCMD_SYSTEM_BIN_DIR: c.sys, WAITCMD_BASE_URL: w.url });
          assertEquals(r.code, 0, r.stderr);
          assertEquals(await ls(c.sys), []);
          assertEquals(await ls(`${c.home}/.local/bin`), ["waitcmd"]);
          assertEquals((await Deno.stat(`${c.home}/.local/bin/waitcmd`)).uid, 65534);
          assertStringIncludes(
            r.stdout,
            `${c.sys} is not writable: installing into ${c.home}/.local/bin instead`,
          );
          assertStringIncludes(r.stdout, `export PATH="${c.home}/.local/bin:$PATH"`);
        },
      );

      await t.step(
        "--prefix installs into PREFIX/bin; --bin-dir and WAITCMD_INSTALL_DIR into the directory",
        async () => {
          const c = await fresh(w);
          const env = c.env;
          const a = await install(w, ["--prefix", `${c.dir}/opt`, "--version", "0.1.0"], env);
          assertEquals(a.code, 0, a.stderr);
          assertEquals(await ls(`${c.dir}/opt/bin`), ["waitcmd"]);
          const b = await install(w, ["--version", "0.1.0", `--bin-dir=${c.dir}/tools`], env);
          assertEquals(b.code, 0, b.stderr);
          assertEquals(await ls(`${c.dir}/tools`), ["waitcmd"]);
          const e = await install(w, ["--version", "0.1.0"], {
            ...env,
            WAITCMD_INSTALL_DIR: `${c.dir}/envdir`,
          });
          assertEquals(e.code, 0, e.stderr);
          assertEquals(await ls(`${c.dir}/envdir`), ["waitcmd"]);
          assertEquals(await ls(c.sys), []);
          const both = await install(w, ["--prefix", "/a", "--bin-dir", "/b"], env);
          assertEquals(both.code, 2);
          assertStringIncludes(both.stderr, "--prefix and --bin-dir are alternatives");
        },
      );

      await t.step("an unwritable target directory fails without leaving files", async () => {
        const c = await fresh(w);
        await Deno.writeTextFile(`${c.dir}/afile`, "x");
        const r = await install(
          w,
          ["--version", "0.1.0", "--bin-dir", `${c.dir}/afile/bin`],
          c.env,
        );
        assertEquals(r.code, 1);
        assertStringIncludes(r.stderr, `cannot create ${c.dir}/afile/bin`);
      });

      await t.step("curl | sh -s -- --version X works", async () => {
        const c = await fresh(w);
        await Deno.copyFile(INSTALL_SH, `${w.root}/mirror/install.sh`);
        const r = await run("dash", [
          "-c",
          `curl -fsSL "${w.url}/install.sh" | sh -s -- --version 0.1.0`,
        ], { HOME: c.home, WAITCMD_SYSTEM_BIN_DIR: c.sys, WAITCMD_BASE_URL: w.url });
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.stdout, `installed waitcmd 0.1.0 (${HOST}) to ${c.sys}/waitcmd`);
        assertEquals(await ls(c.sys), ["waitcmd"]);
      });

      await t.step("wget is used when WAITCMD_DOWNLOADER=wget", async () => {
        if ((await run("sh", ["-c", "command -v wget"], {})).code !== 0) {
          requireService("wget", "install.sh's wget download path");
          return;
        }
        const c = await fresh(w);
        const r = await install(w, ["--version", "0.1.0"], {
          HOME: c.home,
          WAITCMD_SYSTEM_BIN_DIR: c.sys,
          WAITCMD_DOWNLOADER: "wget",
        });
        assertEquals(r.code, 0, r.stderr);
        assertEquals(await versionOf(`${c.sys}/waitcmd`), `waitcmd 0.1.0 (${HOST}, stand-in)`);
      });

      await t.step("platform detection picks the right archive, or says why not", async (t) => {
        // A fake uname on PATH plays other machines; the stand-ins run anywhere.
        const cases: [string, string, string | RegExp][] = [
          ["Darwin", "arm64", "aarch64-apple-darwin"],
          ["Darwin", "x86_64", "x86_64-apple-darwin"],
          ["Linux", "aarch64", "aarch64-unknown-linux-gnu"],
          ["Linux", "riscv64", /unsupported CPU "riscv64"/],
          ["FreeBSD", "amd64", /unsupported operating system "FreeBSD"/],
          [
            "MINGW64_NT-10.0",
            "x86_64",
            /on Windows, download waitcmd-<version>-x86_64-pc-windows-msvc\.zip/,
          ],
        ];
        for (const [os, arch, want] of cases) {
          await t.step(`${os} ${arch}`, async () => {
            const c = await fresh(w);
            await Deno.mkdir(`${c.dir}/fakebin`);
            await Deno.writeTextFile(
              `${c.dir}/fakebin/uname`,
              `#!/bin/sh\ncase "$1" in -s) echo "${os}" ;; -m) echo "${arch}" ;; esac\n`,
              { mode: 0o755 },
            );
            const r = await install(w, ["--version", "0.1.0"], {
              HOME: c.home,
              WAITCMD_SYSTEM_BIN_DIR: c.sys,
              PATH: `${c.dir}/fakebin:${Deno.env.get("PATH")}`,
            });
            if (typeof want === "string") {
              assertEquals(r.code, 0, r.stderr);
              assertEquals(
                await versionOf(`${c.sys}/waitcmd`),
                `waitcmd 0.1.0 (${want}, stand-in)`,
              );
            } else {
              assertEquals(r.code, 1);
              assertMatch(r.stderr, want);
              assertEquals(await ls(c.sys), []);
            }
          });
        }
      });

      await t.step("bad arguments are usage errors (exit 2)", async () => {
        const c = await fresh(w);
        const env = c.env;
        const a = await install(w, ["--bogus"], env);
        assertEquals(a.code, 2);
        assertEquals(
          a.stderr,
          `waitcmd-install: error: unknown argument "--bogus" (see: install.sh --help)\n`,
        );
        const b = await install(w, ["--version"], env);
        assertEquals(b.code, 2);
        assertStringIncludes(b.stderr, "--version needs a value");
        const d = await install(w, ["--version", "1.0;rm -rf /"], env);
        assertEquals(d.code, 2);
        assertStringIncludes(d.stderr, "expected a version like 0.1.0");
        const h = await install(w, ["--help"], env);
        assertEquals(h.code, 0);
        assertStringIncludes(h.stdout, "usage: install.sh [--version X]");
        assertEquals(await ls(c.sys), []);
      });

      await t.step("the same install works under other POSIX shells", async () => {
        for (const shell of ["bash", "busybox"]) {
          const found = await run("sh", ["-c", `command -v ${shell}`], {});
          if (found.code !== 0) continue; // dash above is the required one
          const c = await fresh(w);
          const r = shell === "busybox"
            ? await run("busybox", ["sh", `${w.root}/install.sh`, "--version", "0.1.0"], {
              HOME: c.home,
              WAITCMD_SYSTEM_BIN_DIR: c.sys,
              WAITCMD_BASE_URL: w.url,
            })
            : await install(w, ["--version", "0.1.0"], c.env, "bash");
          assertEquals(r.code, 0, `${shell}: ${r.stderr}`);
          assertEquals(await ls(c.sys), ["waitcmd"]);
        }
      });
    } finally {
      await w.close();
    }
  },
});
