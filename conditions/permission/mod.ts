/**
 * permission (perm): a path has the mode, owner, group and type asked for
 * (docs/contract.md §5 permission).
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import type { IdSpec } from "./ids.ts";

/** File types `--type` names. */
export const FILE_TYPES = ["file", "dir", "symlink", "socket", "fifo"] as const;
/** One of `FILE_TYPES`. */
export type FileType = typeof FILE_TYPES[number];

/** What a permission condition needs. */
export interface PermissionOptions {
  /** The path to look at. */
  readonly path: string;
  /** Permission bits (the low 12 bits of the mode) must equal this. */
  readonly mode?: number;
  /** Permission bits must include all of these. */
  readonly modeIncludes?: number;
  readonly owner?: IdSpec;
  readonly group?: IdSpec;
  /** The path's type; `symlink` looks at the link itself (lstat), the others follow links. */
  readonly type?: FileType;
}

/** An octal mode (`0644`, `644`, `0o644`, `4755`) as a number, or undefined. */
export function parseMode(text: string): number | undefined {
  const m = /^(?:0o?)?([0-7]{1,4})$/i.exec(text.trim());
  return m ? parseInt(m[1]!, 8) : undefined;
}

/** A mode as four octal digits: `0644`. */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

function idFlag(input: KindInput, flag: "owner" | "group"): IdSpec | undefined {
  const v = input.string(flag);
  if (v === undefined) return undefined;
  if (v === "") input.fail(flag, "expected a name or a numeric id, got an empty string");
  if (/^\d+$/.test(v)) return { id: Number(v) };
  if (/[:\s]/.test(v)) input.fail(flag, `expected a name or a numeric id, got "${v}"`);
  return { name: v };
}

/** The permission kind. */
export const permission = defineKind<PermissionOptions>({
  name: "permission",
  aliases: ["perm"],
  summary: "a path has the permissions, owner, group or type asked for",
  description:
    "Every property given must hold: --mode (the permission bits exactly, octal like 0644) or --mode-includes (at least these bits), --owner and --group (a name or a numeric id), --type. Links are followed, except with --type symlink, which checks the link itself. A path that does not exist is pending.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path to check",
    complete: "file",
  },
  flags: [
    {
      name: "mode",
      type: "string",
      placeholder: "MODE",
      description: "permission bits equal MODE (octal, e.g. 0644)",
    },
    {
      name: "mode-includes",
      type: "string",
      placeholder: "MODE",
      description: "permission bits include every bit of MODE (octal, e.g. 0600)",
    },
    {
      name: "owner",
      type: "string",
      placeholder: "NAME|UID",
      description: "owned by this user",
    },
    {
      name: "group",
      type: "string",
      placeholder: "NAME|GID",
      description: "owned by this group",
    },
    {
      name: "type",
      type: "enum",
      values: FILE_TYPES,
      placeholder: "TYPE",
      description: "the path is of this type",
    },
  ],
  examples: [
    {
      args: "permission /run/app/app.sock --type socket --mode 0660 --group app",
      description: "wait until a socket is ready for the app group",
    },
    {
      args: "perm /etc/ssl/private/key.pem --mode 0600 --owner 0",
      description: "wait until a key is locked down",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    const modeFlag = (flag: "mode" | "mode-includes") => {
      const v = input.string(flag);
      if (v === undefined) return undefined;
      const m = parseMode(v);
      if (m === undefined) input.fail(flag, `expected an octal mode like 0644, got "${v}"`);
      return m;
    };
    const mode = modeFlag("mode");
    const modeIncludes = modeFlag("mode-includes");
    if (mode !== undefined && modeIncludes !== undefined) {
      input.fail("mode-includes", "cannot be combined with --mode");
    }
    const owner = idFlag(input, "owner");
    const group = idFlag(input, "group");
    const type = input.string("type") as FileType | undefined;
    if ([mode, modeIncludes, owner, group, type].every((x) => x === undefined)) {
      input.fail(
        undefined,
        "permission needs at least one of --mode, --mode-includes, --owner, --group, --type",
      );
    }
    return { target: path, options: { path, mode, modeIncludes, owner, group, type } };
  },
  async validate(options, fail) {
    const { resolveId } = await import("./ids.ts");
    for (
      const [flag, db, spec] of [
        ["owner", "passwd", options.owner],
        ["group", "group", options.group],
      ] as const
    ) {
      if (spec === undefined || "id" in spec) continue;
      if ((await resolveId(db, spec)) === undefined) {
        fail(flag, `no ${flag === "owner" ? "user" : "group"} named "${spec.name}" on this system`);
      }
    }
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
