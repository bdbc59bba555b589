/**
 * permission's probe: one `stat` (or `lstat` for `--type symlink`) per
 * attempt, woken by changes to the path: chmod and chown are changes too
 * (docs/contract.md §5 permission, §10).
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { memoize } from "../_common/memo.ts";
import { watchPath } from "../_common/watch.ts";
import { type IdSpec, resolveId } from "./ids.ts";
import { type FileType, formatMode, type PermissionOptions } from "./mod.ts";

/** What a path is, in `--type`'s words (and two more no flag asks for). */
export function typeOf(info: Deno.FileInfo): FileType | "block device" | "char device" | "other" {
  if (info.isSymlink) return "symlink";
  if (info.isFile) return "file";
  if (info.isDirectory) return "dir";
  if (info.isSocket) return "socket";
  if (info.isFifo) return "fifo";
  if (info.isBlockDevice) return "block device";
  if (info.isCharDevice) return "char device";
  return "other";
}

/** The ids `--owner` and `--group` stand for (names resolved). */
export interface WantedIds {
  readonly uid?: number;
  readonly gid?: number;
}

function shownId(spec: IdSpec | undefined, id: number): string {
  return spec !== undefined && "name" in spec ? `${spec.name} (${id})` : String(id);
}

/** Every property of `options` that `info` fails, as texts; empty when all hold. */
export function mismatches(
  info: Deno.FileInfo,
  options: PermissionOptions,
  ids: WantedIds,
): string[] {
  const out: string[] = [];
  const type = typeOf(info);
  if (options.type !== undefined && type !== options.type) {
    out.push(`is a ${type}, not a ${options.type}`);
  }
  if (options.mode !== undefined || options.modeIncludes !== undefined) {
    if (info.mode === null) {
      out.push("this system reports no permission bits");
    } else {
      const bits = info.mode & 0o7777;
      if (options.mode !== undefined && bits !== options.mode) {
        out.push(`mode is ${formatMode(bits)}, not ${formatMode(options.mode)}`);
      }
      if (
        options.modeIncludes !== undefined && (bits & options.modeIncludes) !== options.modeIncludes
      ) {
        out.push(`mode ${formatMode(bits)} lacks ${formatMode(options.modeIncludes & ~bits)}`);
      }
    }
  }
  for (
    const [what, want, got, spec] of [
      ["owner", ids.uid, info.uid, options.owner],
      ["group", ids.gid, info.gid, options.group],
    ] as const
  ) {
    if (want === undefined) continue;
    if (got === null) out.push(`this system reports no ${what}`);
    else if (got !== want) out.push(`${what} is ${got}, not ${shownId(spec, want)}`);
  }
  return out;
}

/** The outcome text of a path that holds: `file 0644, owner 0, group 0`. */
export function describe(info: Deno.FileInfo): string {
  const mode = info.mode === null ? "" : ` ${formatMode(info.mode)}`;
  const owner = info.uid === null ? "" : `, owner ${info.uid}, group ${info.gid}`;
  return `${typeOf(info)}${mode}${owner}`;
}

/** Makes the probe of one permission condition. */
export function create(options: PermissionOptions, env: ProbeEnv): Probe {
  const { path, owner, group } = options;
  // Names were checked before the run (validate); resolved once here for the probe.
  const ids = memoize(async (): Promise<WantedIds> => {
    const uid = owner === undefined ? undefined : await resolveId("passwd", owner);
    const gid = group === undefined ? undefined : await resolveId("group", group);
    if (owner !== undefined && uid === undefined) {
      throw new Error(`unknown user ${"name" in owner ? owner.name : owner.id}`);
    }
    if (group !== undefined && gid === undefined) {
      throw new Error(`unknown group ${"name" in group ? group.name : group.id}`);
    }
    return { uid, gid };
  });
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      let info: Deno.FileInfo;
      try {
        info = options.type === "symlink" ? await Deno.lstat(path) : await Deno.stat(path);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) {
          return { status: "pending", error: "does not exist" };
        }
        throw e;
      }
      const wrong = mismatches(info, options, await ids.get(signal));
      return wrong.length === 0
        ? { status: "satisfied", detail: describe(info) }
        : { status: "pending", error: wrong.join("; ") };
    },
    // Not for a FIFO: Deno's file watcher (notify) opens a FIFO created in a watched
    // directory and blocks there until a writer comes, which stalls every watch of the
    // process and its exit; such a condition is polled at the interval instead.
    watch: options.type === "fifo"
      ? undefined
      : (ctx) => watchPath(path, ctx, { clock: env.clock }),
  };
}
