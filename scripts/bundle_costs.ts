/**
 * What the bundle's bytes come from: every byte of each bundled module is
 * attributed to the source it was made from, read from the bundler's source
 * maps, and summed by npm package (`waitcmd` for the project's own code).
 * scripts/bundle.ts records the sums in `bundle.json` (`packages`, and each
 * file's `holds`); the maps are deleted, as nothing ships one.
 *
 * @module
 */

import { listFiles } from "./bundle_manifest.ts";

/** What the bundled modules' bytes come from, read from the bundler's source maps. */
export interface Costs {
  /** Bytes by npm package (`waitcmd` for the project's own code), largest first. */
  readonly packages: { name: string; bytes: number }[];
  /** The packages that make most of each module, largest first. */
  readonly byFile: Map<string, string[]>;
}

/**
 * Attributes every byte of each bundled module to the source it was made
 * from, by its source map, sums them by npm package, then deletes the maps
 * (nothing ships a source map).
 */
export async function attributeAndDropMaps(dir: string): Promise<Costs> {
  const total = new Map<string, number>();
  const byFile = new Map<string, string[]>();
  for (const path of await listFiles(dir)) {
    if (!path.endsWith(".js.map")) continue;
    const js = path.slice(0, -".map".length);
    const map = JSON.parse(await Deno.readTextFile(`${dir}/${path}`)) as SourceMap;
    const mine = attribute(await Deno.readTextFile(`${dir}/${js}`), map);
    for (const [name, n] of mine) total.set(name, (total.get(name) ?? 0) + n);
    byFile.set(js, [...mine].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([name]) => name));
    await Deno.remove(`${dir}/${path}`);
  }
  const packages = [...total].map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  return { packages, byFile };
}

/** The parts of a source map (version 3) that {@link attribute} reads. */
export interface SourceMap {
  readonly sources: readonly string[];
  readonly mappings: string;
}

/** The npm package a bundled source belongs to, or `waitcmd` for the project's own modules. */
export function packageOf(source: string): string {
  const m = /registry\.npmjs\.org\/((?:@[^/]+\/)?[^/]+)\//.exec(source) ??
    /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
  return m ? m[1]! : "waitcmd";
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** The numbers of one mapping segment (base64 VLQ). */
function decodeSegment(seg: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of seg) {
    const digit = BASE64.indexOf(ch);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

/**
 * Bytes of `code` by npm package: each generated span belongs to the source
 * of the mapping segment that starts it; spans before the first segment of
 * a line or with no source are the bundler's (`(bundler)`).
 */
export function attribute(code: string, map: SourceMap): Map<string, number> {
  const enc = new TextEncoder();
  const out = new Map<string, number>();
  const add = (name: string, text: string) => {
    if (text.length > 0) out.set(name, (out.get(name) ?? 0) + enc.encode(text).length);
  };
  const lines = code.split("\n");
  const mapLines = map.mappings.split(";");
  let source = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]! + (i < lines.length - 1 ? "\n" : "");
    let col = 0;
    let at = 0;
    let owner = "(bundler)";
    for (const seg of (mapLines[i] ?? "").split(",")) {
      if (seg === "") continue;
      const f = decodeSegment(seg);
      col += f[0]!;
      add(owner, line.slice(at, col));
      at = col;
      if (f.length >= 4) {
        source += f[1]!;
        owner = packageOf(map.sources[source] ?? "");
      } else {
        owner = "(bundler)";
      }
    }
    add(owner, line.slice(at));
  }
  return out;
}
