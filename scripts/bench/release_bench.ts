/**
 * The release artefact: what a user downloads above Deno's own runtime.
 *
 * `deno compile` of the release bundle (scripts/bundle.ts) for this machine,
 * with the deno CLI itself as the base binary (`DENORT_BIN`; denort cannot be
 * had here, and the result does not run, but it holds the whole embedded
 * program): its size minus the CLI's is the payload. An empty program
 * compiled the same way shows what `deno compile` adds to any program. The
 * five largest embedded items are the npm packages (and waitcmd's own code)
 * that the bundle's bytes come from, read from the bundler's source maps.
 *
 * Run alone: `deno task bench release`.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import { ensureBundle } from "./_forms.ts";
import { progress } from "./_stats.ts";
import { measurePayload } from "../payload.ts";
import { readManifest } from "../bundle_manifest.ts";

/** Target: the payload, in bytes (10 MB). */
const PAYLOAD_TARGET = 10_000_000;

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`;
}

async function payload(): Promise<BenchRow[]> {
  await ensureBundle();
  const manifest = (await readManifest())!;
  progress(`payload: deno compile of dist/bundle for ${Deno.build.target}, the CLI as base`);
  const p = await measurePayload();
  const program = manifest.files.reduce((n, f) => n + f.bytes, 0);
  const top = manifest.packages.slice(0, 5).map((x) => `${x.name} ${mb(x.bytes)}`).join(", ");
  const files = manifest.files.slice(0, 5).map((f) =>
    `${f.path} ${mb(f.bytes)}${f.holds?.length ? ` (${f.holds.join(", ")})` : ""}`
  ).join(", ");
  return [
    {
      name:
        `payload: deno compile of the release bundle, ${Deno.build.target}, above Deno's runtime`,
      figure: `${mb(p.bytes)} (${mb(p.bytes - p.emptyBytes)} of program, ${
        mb(p.emptyBytes)
      } that deno compile adds to an empty one)`,
      target: `<= ${mb(PAYLOAD_TARGET)}`,
      reference: `five largest embedded items: ${top}; ${p.embedded.length} files embedded, ${
        mb(program)
      } in all`,
      ok: p.bytes <= PAYLOAD_TARGET,
    },
    {
      name: "payload: the five largest embedded files",
      figure: files,
      target: "",
    },
  ];
}

/** The bench entries of this module. */
export const entries: BenchEntry[] = [
  { name: "release artefact payload", run: payload },
];

if (import.meta.main) {
  for (const r of await payload()) {
    console.log(`${r.name}: ${r.figure}${r.target ? ` (target ${r.target})` : ""}`);
    if (r.reference) console.log(`  ${r.reference}`);
  }
}
