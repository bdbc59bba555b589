/**
 * The tools a bench compares with: npm packages installed into a cache, and
 * the peers (waitfor, wait4x, wait-on) the peers directory's install.sh
 * unpacks.
 *
 * Benchmarks measure; nothing here asserts a timing.
 *
 * @module
 */

import { progress } from "./_stats.ts";

/** Root of the bench's tool cache: WAITCMD_BENCH_TOOLS, else ~/.cache/waitcmd/bench-tools. */
export function toolsDir(): string {
  return Deno.env.get("WAITCMD_BENCH_TOOLS") ??
    `${Deno.env.get("HOME") ?? "/tmp"}/.cache/waitcmd/bench-tools`;
}

/** An npm package installed for comparison. */
export interface NpmTool {
  /** Path of its executable in node_modules/.bin. */
  readonly bin: string;
  /** Installed version (from its package.json). */
  readonly version: string;
  /** `node --version` of the Node.js that runs it. */
  readonly node: string;
}

/**
 * Installs `pkg@version` with npm into its own folder of the tool cache
 * (once; later runs reuse it) and returns its executable. Throws with npm's
 * message when npm or Node.js is missing or the install fails.
 */
export async function npmTool(pkg: string, version: string, binName = pkg): Promise<NpmTool> {
  const dir = `${toolsDir()}/${pkg.replace("/", "+")}@${version}`;
  const pj = `${dir}/node_modules/${pkg}/package.json`;
  const installed = async () => {
    try {
      return JSON.parse(await Deno.readTextFile(pj)).version as string;
    } catch {
      return undefined;
    }
  };
  let v = await installed();
  if (v !== version) {
    progress(`installing ${pkg}@${version} with npm into ${dir}`);
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(`${dir}/package.json`, '{ "private": true }\n');
    const out = await new Deno.Command("npm", {
      args: [
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        "--prefix",
        dir,
        `${pkg}@${version}`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output().catch((e) => {
      throw new Error(`cannot run npm to install ${pkg}@${version}: ${e.message}`);
    });
    if (out.code !== 0) {
      const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join("; ");
      throw new Error(`npm install ${pkg}@${version} failed: ${err}`);
    }
    v = await installed();
    if (v === undefined) throw new Error(`npm install ${pkg}@${version} left no ${pj}`);
  }
  const node = await new Deno.Command("node", { args: ["--version"], stdout: "piped" }).output()
    .then((o) => new TextDecoder().decode(o.stdout).trim())
    .catch(() => "node not found");
  return { bin: `${dir}/node_modules/.bin/${binName}`, version: v, node };
}

/** The peer tools unpacked for side-by-side runs: executables by name, and why any are missing. */
export interface PeerTools {
  /** `waitfor`, `wait4x` and `wait-on` mapped to their executables, for those installed. */
  readonly bins: Readonly<Record<string, string>>;
  /** Why install.sh could not provide them all ("" when it did). */
  readonly error: string;
}

let peerToolsMemo: Promise<PeerTools> | undefined;

/**
 * The peers waitcmd is compared with (waitfor and wait4x, Go binaries; wait-on, npm), unpacked
 * once by the peers directory's install.sh (WAITCMD_PEERS_DIR, default `shared/peers` beside the repository) into
 * the tool cache. install.sh is idempotent and prints `NAME: PATH` for each tool it provides,
 * so its output is the list.
 */
export function peerTools(): Promise<PeerTools> {
  peerToolsMemo ??= (async () => {
    const peers = Deno.env.get("WAITCMD_PEERS_DIR") ??
      new URL("../../../shared/peers", import.meta.url).pathname;
    let stdout = "";
    let failure = "";
    try {
      const out = await new Deno.Command("sh", {
        args: [`${peers}/install.sh`, `${toolsDir()}/peers/bin`],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      stdout = new TextDecoder().decode(out.stdout);
      const err = new TextDecoder().decode(out.stderr).trim().slice(-200);
      if (out.code !== 0) failure = ` (exit ${out.code}: ${err})`;
    } catch (e) {
      failure = ` (${e instanceof Error ? e.message : e})`;
    }
    const bins: Record<string, string> = {};
    for (const m of stdout.matchAll(/^([\w-]+): (\/\S+)$/gm)) bins[m[1]!] = m[2]!;
    const missing = ["waitfor", "wait4x", "wait-on"].filter((t) => !(t in bins));
    const error = missing.length === 0
      ? ""
      : `${peers}/install.sh did not provide ${missing.join(", ")}${failure}`;
    return { bins, error };
  })();
  return peerToolsMemo;
}

/**
 * One peer's executable: the one `envVar` names, else the one the peers'
 * install.sh provides (`peerTools`); or why there is none.
 */
export async function peerBin(
  name: "waitfor" | "wait4x" | "wait-on",
  envVar: string,
): Promise<{ bin: string } | { error: string }> {
  const given = Deno.env.get(envVar);
  if (given) return { bin: given };
  const { bins, error } = await peerTools();
  return bins[name] ? { bin: bins[name]! } : { error: `${error || `no ${name}`} (set ${envVar})` };
}
