/**
 * What the compiled program weighs above Deno's runtime, the payload that must stay under 10 MB
 * (docs/performance.md): the release bundle compiled for this machine onto the deno CLI itself,
 * and an empty program the same way. `deno task bench release` reports it
 * (scripts/bench/release_bench.ts); scripts/compile.ts builds the binaries that ship.
 *
 * @module
 */

import { BUNDLE_DIR, readManifest } from "./bundle_manifest.ts";
import { compileArgs, denoCompile, embeddedFiles } from "./compile.ts";
import type { Target } from "./targets.ts";

/** What the compiled program weighs above Deno's runtime (see {@link measurePayload}). */
export interface Payload {
  /** The compiled binary's size minus the deno CLI's, with the CLI as `DENORT_BIN`. */
  readonly bytes: number;
  /** The same for an empty program: what `deno compile` adds to any program. */
  readonly emptyBytes: number;
  /** The files embedded, as deno compile lists them. */
  readonly embedded: readonly string[];
  /** deno compile's log. */
  readonly log: string;
}

/**
 * Compiles the bundle in `dir` for this machine with the deno CLI itself as
 * the base binary (`DENORT_BIN`; the result does not run waitcmd, but holds
 * the whole embedded program), and an empty program the same way: their
 * sizes above the CLI's are the payload and what `deno compile` adds to any
 * program (padding that aligns the embedded section in the executable).
 */
export async function measurePayload(dir = BUNDLE_DIR): Promise<Payload> {
  const manifest = await readManifest(dir);
  if (!manifest) throw new Error(`no bundle in ${dir} (deno task bundle)`);
  const target = Deno.build.target as Target;
  const work = await Deno.makeTempDir({ prefix: "waitcmd-payload-" });
  try {
    const cli = Deno.execPath();
    const cliBytes = (await Deno.stat(cli)).size;
    const out = await denoCompile(compileArgs(target, `${work}/waitcmd`, dir, manifest), cli);
    if (!out.success) throw new Error(`deno compile failed: ${out.log.trim().slice(-300)}`);
    await Deno.writeTextFile(`${work}/empty.js`, "\n");
    const empty = await denoCompile(
      [
        "compile",
        "--no-check",
        "--no-config",
        "--no-lock",
        "--output",
        `${work}/empty`,
        `${work}/empty.js`,
      ],
      cli,
    );
    if (!empty.success) throw new Error(`deno compile failed: ${empty.log.trim().slice(-300)}`);
    return {
      bytes: (await Deno.stat(`${work}/waitcmd`)).size - cliBytes,
      emptyBytes: (await Deno.stat(`${work}/empty`)).size - cliBytes,
      embedded: embeddedFiles(out.log),
      log: out.log,
    };
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}
