/**
 * scripts/waitcmd, the from-source launcher: it resolves the npm packages
 * from node_modules without reading deno.lock only while scripts/packages'
 * stamp is newer than deno.lock, and from Deno's cache through the lockfile
 * otherwise. What the launcher chose is read from the command line of the
 * Deno process it exec'd (an exec condition's parent), on Linux.
 *
 * @module
 */

import { assert, assertEquals } from "../_assert.ts";
import { cachedPackages, ignoreWithout } from "../_kit.ts";
import { repoRoot } from "../services/_util.ts";
import { runCli } from "./_cli.ts";
import { V8_FLAGS } from "../../scripts/launcher.ts";

const STAMP = "node_modules/.waitcmd-installed";
const LONG_AGO = new Date("2020-01-01T00:00:00Z");

/**
 * Args of a condition that is satisfied at once when the launcher's Deno
 * process was given `--no-lock` (`expected`), or was not.
 */
function noLockIs(expected: boolean): string[] {
  return [
    "--timeout",
    "5s",
    "exec",
    "--exit-code",
    expected ? "0" : "1",
    "--",
    "sh",
    "-c",
    'tr "\\0" "\\n" < /proc/$PPID/cmdline | grep -qx -- --no-lock',
  ];
}

/**
 * A copy of the launcher in a root of its own (the sources linked, deno.json
 * and deno.lock copied) with `node_modules` made by `setUp`, run with the
 * project's pinned Deno.
 */
async function inOwnRoot(
  setUp: (root: string) => Promise<void>,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string }> {
  const root = await Deno.makeTempDir({ prefix: "waitcmd-launcher-test-" });
  try {
    await Deno.mkdir(`${root}/scripts`);
    for (const f of ["scripts/waitcmd", "scripts/deno", "deno.json", "deno.lock"]) {
      await Deno.copyFile(`${repoRoot}/${f}`, `${root}/${f}`);
    }
    await Deno.chmod(`${root}/scripts/waitcmd`, 0o755);
    for (const d of ["main.ts", "engine", "conditions", "output", "cli"]) {
      await Deno.symlink(`${repoRoot}/${d}`, `${root}/${d}`);
    }
    await setUp(root);
    const out = await new Deno.Command(`${root}/scripts/waitcmd`, {
      args,
      // The pinned Deno where scripts/deno put it: the shared tools directory when one is set.
      env: {
        NO_COLOR: "1",
        WAITCMD_TOOLS_DIR: Deno.env.get("WAITCMD_TOOLS_DIR") ?? `${repoRoot}/.tools`,
        ...env,
      },
      stdout: "null",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** `root/node_modules` with the stamp, the stamp's and the lockfile's times as given. */
function stamped(stampTime: Date, lockTime: Date): (root: string) => Promise<void> {
  return async (root) => {
    await Deno.mkdir(`${root}/node_modules`);
    await Deno.writeTextFile(`${root}/${STAMP}`, "");
    await Deno.utime(`${root}/${STAMP}`, stampTime, stampTime);
    await Deno.utime(`${root}/deno.lock`, lockTime, lockTime);
  };
}

Deno.test({
  name:
    "launcher: a stamp newer than deno.lock makes Deno resolve npm packages without the lockfile",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const r = await inOwnRoot(stamped(new Date(), LONG_AGO), noLockIs(true));
    assertEquals(r.code, 0, r.stderr);
  },
});

Deno.test({
  name: "launcher: a stamp older than deno.lock, or none, keeps the lockfile",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const older = await inOwnRoot(stamped(LONG_AGO, new Date()), noLockIs(false));
    assertEquals(older.code, 0, older.stderr);
    const none = await inOwnRoot(() => Promise.resolve(), noLockIs(false));
    assertEquals(none.code, 0, none.stderr);
  },
});

/** Why the repository's own stamp does not make the launcher skip the lockfile, if it does not. */
async function staleSetUp(): Promise<string | undefined> {
  const seconds = (path: string) =>
    Deno.stat(`${repoRoot}/${path}`).then((s) => Math.floor(s.mtime!.getTime() / 1000), () => NaN);
  const [stamp, lock] = await Promise.all([seconds(STAMP), seconds("deno.lock")]);
  if (Number.isNaN(stamp)) return `no ${STAMP} (scripts/packages makes it)`;
  return stamp > lock ? undefined : `${STAMP} is older than deno.lock (run scripts/packages)`;
}

const stale = await staleSetUp();

Deno.test({
  name:
    "launcher: after scripts/packages, a kind's npm package loads from node_modules without the lockfile",
  ignore: Deno.build.os !== "linux" || ignoreWithout("scripts/packages' node_modules", stale),
  async fn() {
    assert(stale === undefined, `${stale}: scripts/test runs scripts/packages first`);
    assertEquals((await runCli(noLockIs(true))).code, 0, "the launcher did not pass --no-lock");
    // --matches runs the user's pattern on re2js, an npm package.
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-launcher-test-" });
    try {
      await Deno.writeTextFile(`${dir}/app.log`, "listening on 127.0.0.1:8080\n");
      const r = await runCli([
        ...["--timeout", "10s", "--output", "json", "log", `${dir}/app.log`, "--from-start"],
        ...["--matches", "listening on .*:\\d+"],
      ]);
      assertEquals(r.code, 0, r.stderr);
      assertEquals(r.json?.conditions[0]?.detail, "listening on 127.0.0.1:8080");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "launcher: with an empty package cache and no node_modules, a kind that needs npm packages downloads nothing and ends at once, exit 3, one line naming scripts/packages",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const denoDir = await Deno.makeTempDir({ prefix: "waitcmd-empty-deno-dir-" });
    const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const env = { DENO_DIR: denoDir };
      const none = () => Promise.resolve();
      // A kind without npm packages works from nothing.
      const port = (server.addr as Deno.NetAddr).port;
      const tcp = await inOwnRoot(none, ["--timeout", "10s", "tcp", `127.0.0.1:${port}`], env);
      assertEquals(tcp.code, 0, tcp.stderr);
      // A deadline far away: exit 3 (not the timeout's 1) shows it did not wait it out.
      for (
        const args of [
          ["postgres", "postgres://app:pw@127.0.0.1:1/app"],
          ["log", "/etc/hostname", "--matches", "x"], // re2js, loaded to validate the pattern
        ]
      ) {
        const r = await inOwnRoot(none, ["--timeout", "5m", ...args], env);
        assertEquals(r.code, 3, r.stderr);
        const lines = r.stderr.trimEnd().split("\n");
        assertEquals(lines.length, 1, r.stderr);
        assert(
          /^waitcmd: the kinds' npm packages are not installed \(npm:\S+ is missing\), and a wait never downloads: run \/\S+\/scripts\/packages$/
            .test(lines[0]!),
          lines[0],
        );
      }
      assertEquals(await cachedPackages(denoDir), [], "the launcher downloaded packages");
    } finally {
      server.close();
      await Deno.remove(denoDir, { recursive: true });
    }
  },
});

Deno.test({
  name: "launcher: waitcmd runs with the release's V8 flags (scripts/launcher.ts V8_FLAGS)",
  ignore: Deno.build.os !== "linux",
  async fn() {
    // The heaps' sizes under the memory cap (docs/reliability.md, large manifests): the Deno
    // process the launcher exec'd (the exec condition's parent) was given them.
    const r = await runCli([
      "--timeout",
      "5s",
      "exec",
      "--",
      "sh",
      "-c",
      `tr "\\0" "\\n" < /proc/$PPID/cmdline | grep -qxF -- '${V8_FLAGS}'`,
    ]);
    assertEquals(r.code, 0, `${V8_FLAGS} not given: ${r.stderr}`);
  },
});
