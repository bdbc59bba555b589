/**
 * Fixtures for the release tests: stand-in executables (real compiled
 * binaries cannot be built on machines without denort), release directories
 * made by the real release task or its archive functions, and a loopback
 * HTTP server that serves them the way a release host does
 * (`<base>/v<version>/<file>`, `<base>/latest/<file>`).
 *
 * @module
 */

import { type Target, TARGETS } from "../../scripts/targets.ts";
import { archiveName, sha256, sha256sums, tarGz, zip } from "../../scripts/archives.ts";
import { repoRoot } from "../services/_util.ts";

export { repoRoot };

/** The pinned deno, for running the scripts as subprocesses. */
export const DENO: string = `${repoRoot}/scripts/deno`;

/** This machine's release target (the installer's happy path). */
export const HOST: Target = Deno.build.target as Target;

/** A stand-in for a compiled waitcmd: a shell script answering `--version` like the real one. */
export function standIn(version: string, target: string, says = version): Uint8Array {
  return new TextEncoder().encode(
    `#!/bin/sh\n# stand-in for a compiled waitcmd\necho "waitcmd ${says} (${target}, stand-in)"\n`,
  );
}

/** Writes stand-in binaries for `targets` into `dist` under the names `deno task compile` uses. */
export async function writeStandIns(
  dist: string,
  version: string,
  targets: readonly Target[] = TARGETS,
): Promise<void> {
  await Deno.mkdir(dist, { recursive: true });
  for (const t of targets) {
    const name = `${dist}/waitcmd-${t}${t.includes("windows") ? ".exe" : ""}`;
    await Deno.writeFile(name, standIn(version, t), { mode: 0o755 });
  }
}

/**
 * A release directory made with the release task's own archive functions,
 * for versions other than deno.json's. `tamper` changes an archive after its
 * checksum was taken; `says` makes the binaries report another version.
 */
export async function writeRelease(dir: string, version: string, opts: {
  targets?: readonly Target[];
  tamper?: Target;
  says?: string;
} = {}): Promise<Map<string, string>> {
  await Deno.mkdir(dir, { recursive: true });
  const sums = new Map<string, string>();
  for (const t of opts.targets ?? TARGETS) {
    const exe = t.includes("windows") ? ".exe" : "";
    const entries = [{
      name: `waitcmd-${version}-${t}/waitcmd${exe}`,
      data: standIn(version, t, opts.says),
      mode: 0o755,
    }];
    const bytes = exe ? await zip(entries, 1_700_000_000) : await tarGz(entries, 1_700_000_000);
    sums.set(archiveName(t, version), await sha256(bytes));
    if (opts.tamper === t) bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0xff;
    await Deno.writeFile(`${dir}/${archiveName(t, version)}`, bytes);
  }
  await Deno.writeTextFile(`${dir}/SHA256SUMS`, sha256sums(sums));
  return sums;
}

/** WAITCMD_TOOLS_DIR when set: where scripts/deno keeps the pinned Deno instead of .tools/. */
function toolsDir(): Record<string, string> {
  const dir = Deno.env.get("WAITCMD_TOOLS_DIR");
  return dir ? { WAITCMD_TOOLS_DIR: dir } : {};
}

/**
 * Runs a command to completion with exactly `env` (plus PATH and WAITCMD_TOOLS_DIR), returning
 * code and outputs (127: no such command).
 */
export async function run(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let out;
  try {
    out = await new Deno.Command(cmd, {
      args,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...toolsDir(), ...env },
      clearEnv: true,
      cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return { code: 127, stdout: "", stderr: `${cmd}: not found` };
    }
    throw e;
  }
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A static file server on 127.0.0.1 for `root`; `requests` records the paths asked for. */
export function serveDir(root: string): {
  url: string;
  requests: string[];
  close(): Promise<void>;
} {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    requests.push(path);
    if (path.includes("..")) return new Response("bad path", { status: 400 });
    try {
      const data = await Deno.readFile(`${root}${path}`);
      return new Response(data);
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
  };
}

/** Lists a directory's entry names, sorted ([] when it does not exist). */
export async function ls(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) names.push(e.name);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return names.sort();
}

/** SHA-256 of a file. */
export async function fileSha256(path: string): Promise<string> {
  return await sha256(await Deno.readFile(path));
}
