/**
 * archive: a tar, tar.gz or zip archive is complete and readable and lists
 * the members asked for (docs/contract.md §5 archive).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** Formats `--format` names; `auto` tells them by their first bytes. */
export const FORMATS = ["auto", "tar", "tgz", "zip"] as const;
/** One of `FORMATS`. */
export type FormatFlag = typeof FORMATS[number];

/** What an archive condition needs. */
export interface ArchiveOptions {
  /** The archive's path. */
  readonly path: string;
  readonly format: FormatFlag;
  /** Members that must be listed (normalised: no leading `./` or `/`, no trailing `/`). */
  readonly contains: readonly string[];
  /** A bash-style glob over member names (`**` for any depth). */
  readonly matches?: string;
  /** At least this many members that are not directories (matching `matches` when given). */
  readonly minCount?: number;
}

/** A member name as compared: without a leading `./` or `/` and a trailing `/`. */
export function normalizeMember(name: string): string {
  let n = name.replace(/\\/g, "/");
  while (n.startsWith("./")) n = n.slice(2);
  n = n.replace(/^\/+/, "").replace(/\/+$/, "");
  return n;
}

/** The archive kind. */
export const archive = defineKind<ArchiveOptions>({
  name: "archive",
  aliases: [],
  summary: "a tar, tar.gz or zip archive is complete and lists the members asked for",
  description:
    "Holds when the archive can be read to its end (a truncated or corrupt archive never holds, even when the member sits before the damage; every zip entry's CRC is checked) and lists every --contains member, and at least --min-count members that are not directories (those matching --matches, if given; --matches alone needs one). The format is told by the content unless --format says it. Member names are compared without a leading ./ or a trailing /.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path of the archive",
    complete: "file",
  },
  flags: [
    {
      name: "contains",
      type: "string",
      repeatable: true,
      placeholder: "MEMBER",
      description: "the archive lists this member (repeatable)",
    },
    {
      name: "matches",
      type: "string",
      placeholder: "GLOB",
      description: "members matching a bash-style glob count (default: all; ** for any depth)",
    },
    {
      name: "min-count",
      type: "integer",
      min: 1,
      placeholder: "N",
      description: "at least N counted members (default 1 with --matches)",
    },
    {
      name: "format",
      type: "enum",
      values: FORMATS,
      placeholder: "FORMAT",
      description: "archive format (default auto: told by the content)",
    },
  ],
  examples: [
    {
      args: "archive dist/release.tar.gz --contains bin/app --contains README.md",
      description: "wait until a release archive is complete",
    },
    {
      args: "archive reports.zip --matches '**/*.xml' --min-count 10",
      description: "wait for a zip holding at least ten XML reports",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    const contains = input.strings("contains").map((raw) => {
      const n = normalizeMember(raw);
      if (n === "") input.fail("contains", `expected a member name, got "${raw}"`);
      return n;
    });
    const matches = input.string("matches");
    if (matches === "") input.fail("matches", "expected a pattern, got an empty string");
    const minCount = input.integer("min-count") ?? (matches !== undefined ? 1 : undefined);
    const format = (input.string("format") ?? "auto") as FormatFlag;
    return { target: path, options: { path, format, contains, matches, minCount } };
  },
  async validate(options, fail) {
    if (options.matches === undefined) return;
    const { expandBraces } = await import("../_common/glob.ts");
    try {
      expandBraces(options.matches);
    } catch (e) {
      fail("matches", `the pattern's ${e instanceof Error ? e.message : e}`);
    }
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
