/**
 * lockfile: a lock file is gone (the default), present, or present and stale
 * (docs/contract.md §5 lockfile).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a lockfile condition needs. */
export interface LockfileOptions {
  /** The lock file's path. */
  readonly path: string;
  /** absent: no lock (the default); present: a lock exists. */
  readonly want: "absent" | "present";
  /** With `present`: the lock must be at least this old (ms, by its mtime): a stale lock. */
  readonly olderThanMs?: number;
}

/** The lockfile kind. */
export const lockfile = defineKind<LockfileOptions>({
  name: "lockfile",
  aliases: [],
  summary: "a lock file is released (or held, or stale)",
  description:
    "--absent (the default) holds while no file, directory or symlink exists at the path: the lock is released. --present holds while one exists; with --older-than D only once its modification time is at least D in the past (a stale lock). A dangling symlink (as some programs use for locks) counts as present.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path of the lock file",
    complete: "file",
  },
  flags: [
    { name: "absent", type: "boolean", description: "no lock file exists (default)" },
    { name: "present", type: "boolean", description: "the lock file exists" },
    {
      name: "older-than",
      type: "duration",
      placeholder: "D",
      description: "with --present: the lock was last modified at least D ago (stale)",
    },
  ],
  examples: [
    {
      args: "lockfile /var/lib/dpkg/lock-frontend",
      description: "wait until the lock is released",
    },
    {
      args: "lockfile /tmp/build.lock --present --older-than 10m",
      description: "wait until a build lock has gone stale",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    const absent = input.bool("absent");
    const present = input.bool("present");
    if (absent && present) input.fail("present", "cannot be combined with --absent");
    const olderThanMs = input.duration("older-than");
    if (olderThanMs !== undefined) {
      if (!present) input.fail("older-than", "needs --present (a stale lock is a present one)");
      if (olderThanMs <= 0) input.fail("older-than", "must be greater than 0");
    }
    return {
      target: path,
      options: { path, want: present ? "present" : "absent", olderThanMs },
    };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
