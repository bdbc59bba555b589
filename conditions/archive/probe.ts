/**
 * archive's probe: reads the whole archive (streamed) and judges its member
 * list; read again only when the file changed (another size, mtime or
 * inode, or a watch event). An archive that changes while it is read is
 * still being written (docs/contract.md §5 archive, §10).
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import { fileType } from "../../engine/files.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { formatSize } from "../_common/bytes.ts";
import {
  assertUnchanged,
  ContentCache,
  invalidating,
  stampOf,
  statIfExists,
  StillWritingError,
} from "../_common/filestamp.ts";
import { expandBraces, segmentMatcher } from "../_common/glob.ts";
import { watchPath } from "../_common/watch.ts";
import type { ArchiveOptions } from "./mod.ts";
import { type Format, FORMAT_NAMES, listTar, listZip, type Member, sniffFormat } from "./read.ts";

type Segment = "**" | ((name: string) => boolean);

function matchSegments(pat: readonly Segment[], i: number, parts: string[], j: number): boolean {
  if (i === pat.length) return j === parts.length;
  const p = pat[i]!;
  if (p === "**") {
    // Zero or more whole segments; like bash's globstar, never through a dot-name.
    for (let k = j; k <= parts.length; k++) {
      if (matchSegments(pat, i + 1, parts, k)) return true;
      if (k < parts.length && parts[k]!.startsWith(".")) return false;
    }
    return false;
  }
  return j < parts.length && p(parts[j]!) && matchSegments(pat, i + 1, parts, j + 1);
}

/**
 * A matcher of member names for a bash-style glob (conditions/_common/glob.ts
 * semantics: `*`, `?`, `[...]`, `{a,b}`, `**` for any depth; wildcards do
 * not match a leading dot). A leading `./` or `/` in the pattern is ignored.
 */
export function memberMatcher(pattern: string): (name: string) => boolean {
  const alternatives = expandBraces(pattern).map((p) => {
    let q = p;
    while (q.startsWith("./")) q = q.slice(2);
    return q.split("/").filter((s) => s !== "").map((s): Segment =>
      s === "**" ? "**" : segmentMatcher(s)
    );
  });
  return (name) => {
    const parts = name.split("/");
    return alternatives.some((pat) => matchSegments(pat, 0, parts, 0));
  };
}

function quoteList(names: readonly string[], max = 3): string {
  const shown = names.slice(0, max).map((n) => JSON.stringify(n)).join(", ");
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/** Whether the member list satisfies the options, as a result. */
export function judgeMembers(
  format: Format,
  members: readonly Member[],
  options: Pick<ArchiveOptions, "contains" | "matches" | "minCount">,
): ProbeResult {
  const what = `${FORMAT_NAMES[format]}, ${members.length} member${
    members.length === 1 ? "" : "s"
  }`;
  const names = new Set(members.map((m) => m.name));
  const missing = options.contains.filter((c) => !names.has(c));
  if (missing.length > 0) {
    return { status: "pending", error: `${what}; missing ${quoteList(missing)}` };
  }
  const parts = [what];
  if (options.contains.length > 0) parts.push(`contains ${quoteList(options.contains)}`);
  if (options.minCount !== undefined) {
    const match = options.matches === undefined ? () => true : memberMatcher(options.matches);
    const count = members.filter((m) => !m.dir && match(m.name)).length;
    const counted = options.matches === undefined
      ? `${count} non-directory members`
      : `${count} matching ${JSON.stringify(options.matches)}`;
    if (count < options.minCount) {
      return { status: "pending", error: `${what}; ${counted}, need ${options.minCount}` };
    }
    parts.push(counted);
  }
  return { status: "satisfied", detail: parts.join(", ") };
}

/** Makes the probe of one archive condition. */
export function create(options: ArchiveOptions, env: ProbeEnv): Probe {
  const { path } = options;
  const cache = new ContentCache<ProbeResult>();

  async function read(signal: AbortSignal, size: number): Promise<ProbeResult> {
    const format = options.format === "auto" ? await sniffFormat(path) : options.format;
    if (format === undefined) {
      return {
        status: "pending",
        error: `not a tar, tar.gz or zip archive (${formatSize(size)}; or not one yet)`,
      };
    }
    try {
      const members = format === "zip"
        ? await listZip(path, signal)
        : await listTar(path, format === "tgz", signal);
      return judgeMembers(format, members, options);
    } catch (e) {
      if (signal.aborted || e instanceof StillWritingError) throw e;
      return {
        status: "pending",
        error: `cannot read the ${FORMAT_NAMES[format]} archive (${formatSize(size)}): ${
          describeError(e)
        }`,
      };
    }
  }

  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const info = await statIfExists(path);
      if (info === undefined) return { status: "pending", error: "does not exist" };
      if (info.isDirectory) {
        return { status: "pending", error: "is a directory, not an archive" };
      }
      // A device or a named pipe has no size: it is not an empty archive, and reading one
      // would never end or wait for a writer.
      if (!info.isFile) {
        return {
          status: "pending",
          error: `not a regular file (${fileType(info)}), not an archive`,
        };
      }
      if (info.size === 0) return { status: "pending", error: "is empty" };
      const stamp = stampOf(info);
      const known = cache.get([stamp]);
      if (known !== undefined) return known;
      const generation = cache.begin();
      const result = await read(signal, info.size);
      // A file that changed meanwhile gave no verdict about any one version of it.
      await assertUnchanged(path, stamp, "the archive");
      cache.set([stamp], result, generation);
      return result;
    },
    watch: (ctx) => invalidating(watchPath(path, ctx, { clock: env.clock }), cache),
  };
}
