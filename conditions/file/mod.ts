/**
 * file: a path exists, is non-empty, contains a text, or is deleted.
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a file condition needs. */
export interface FileOptions {
  /** The awaited path. */
  readonly path: string;
  /** The path must not exist (`--deleted`; excludes the other states). */
  readonly deleted: boolean;
  /** The file must be larger than 0 bytes (`--nonempty`). */
  readonly nonempty: boolean;
  /** The file's content must include this non-empty text (`--contains`). */
  readonly contains?: string;
  /**
   * `--unchanged-for`: ms the path's size and modification time (and inode) must have stayed the
   * same, counted from the attempt that first saw them.
   */
  readonly unchangedForMs?: number;
}

/** The file kind. */
export const file = defineKind<FileOptions>({
  name: "file",
  aliases: [],
  summary: "a file exists, is non-empty, contains a text, or is deleted",
  description:
    "State flags combine: all given must hold. --exists is implied when no state flag is given; --contains, --nonempty and --unchanged-for imply it. --unchanged-for DURATION holds once the file's size and modification time have stayed the same for DURATION, counted from the first look (a file still being written keeps it pending). --deleted holds while the path does not exist (at once for a path that never existed) and cannot be combined with the others.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path of the file (or directory)",
    complete: "file",
  },
  flags: [
    { name: "exists", type: "boolean", description: "the path exists (default)" },
    { name: "nonempty", type: "boolean", description: "the file is larger than 0 bytes" },
    { name: "deleted", type: "boolean", description: "the path does not exist" },
    {
      name: "contains",
      type: "string",
      placeholder: "TEXT",
      description: "the file's content includes TEXT",
    },
    {
      name: "unchanged-for",
      type: "duration",
      placeholder: "DURATION",
      description: "the file's size and modification time have not changed for DURATION",
    },
  ],
  examples: [
    { args: "file /tmp/app.ready", description: "wait until the ready marker exists" },
    { args: "file /var/run/app.pid --deleted", description: "wait until the pid file is removed" },
    {
      args: "file config.json --nonempty --contains '\"ready\": true'",
      description: "wait for content",
    },
    {
      args: "file dist/app.tar.gz --unchanged-for 2s",
      description: "wait until a file being written has stayed the same for 2 seconds",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    const deleted = input.bool("deleted");
    if (deleted) {
      for (const other of ["exists", "nonempty", "contains", "unchanged-for"]) {
        if (input.has(other)) input.fail("deleted", `cannot be combined with --${other}`);
      }
    }
    const nonempty = input.bool("nonempty");
    const contains = input.string("contains");
    if (contains === "") input.fail("contains", "expected a text, got an empty string");
    const unchangedForMs = input.duration("unchanged-for");
    if (unchangedForMs === 0) {
      input.fail("unchanged-for", "expected a duration above 0, like 2s or 500ms");
    }
    return {
      target: path,
      options: {
        path,
        deleted,
        nonempty,
        contains,
        ...(unchangedForMs === undefined ? {} : { unchangedForMs }),
      },
    };
  },
  claims(word) {
    // wait-on's `file:/tmp/ready`, or a bare path.
    const m = /^file:(?:\/\/)?(.+)$/i.exec(word);
    if (m) return `file ${m[1]}`;
    return /^(\/|\.\.?\/|~\/)./.test(word) ? `file ${word}` : undefined;
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
