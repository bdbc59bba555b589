/**
 * file: a path exists, is non-empty, contains a text, or is deleted.
 *
 * @module
 */

import type { ConditionKind, ProbeResult } from "../engine/types.ts";
import { fileContains, formatSize } from "./_bytes.ts";
import { describeError } from "./_net.ts";
import { watchPath } from "./_watch.ts";

/** The file kind. */
export const file: ConditionKind = {
  name: "file",
  aliases: [],
  summary: "a file exists, is non-empty, contains a text, or is deleted",
  description:
    "State flags combine: all given must hold. --exists is implied when no state flag is given; --contains and --nonempty imply it. --deleted holds while the path does not exist (at once for a path that never existed) and cannot be combined with the others.",
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
  ],
  examples: [
    { args: "file /tmp/app.ready", description: "wait until the ready marker exists" },
    { args: "file /var/run/app.pid --deleted", description: "wait until the pid file is removed" },
    {
      args: "file config.json --nonempty --contains '\"ready\": true'",
      description: "wait for content",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    const deleted = input.bool("deleted");
    if (deleted) {
      for (const other of ["exists", "nonempty", "contains"]) {
        if (input.has(other)) input.fail("deleted", `cannot be combined with --${other}`);
      }
    }
    const nonempty = input.bool("nonempty");
    const contains = input.string("contains");
    if (contains === "") input.fail("contains", "expected a text, got an empty string");
    return {
      target: path,
      async check({ signal }): Promise<ProbeResult> {
        let info: Deno.FileInfo;
        try {
          info = await Deno.stat(path);
        } catch (e) {
          if (e instanceof Deno.errors.NotFound) {
            return deleted
              ? { status: "satisfied", detail: "does not exist" }
              : { status: "pending", error: "does not exist" };
          }
          return { status: "pending", error: describeError(e) };
        }
        if (deleted) return { status: "pending", error: "still exists" };
        const what = info.isDirectory ? "directory" : `${formatSize(info.size)}`;
        if (nonempty && info.size === 0) return { status: "pending", error: "exists but is empty" };
        if (contains !== undefined) {
          if (info.isDirectory) return { status: "pending", error: "is a directory, not a file" };
          try {
            if (!(await fileContains(path, contains, signal))) {
              return {
                status: "pending",
                error: `does not contain ${JSON.stringify(contains)} (${what})`,
              };
            }
          } catch (e) {
            return { status: "pending", error: describeError(e) };
          }
          return { status: "satisfied", detail: `contains ${JSON.stringify(contains)} (${what})` };
        }
        return { status: "satisfied", detail: `exists (${what})` };
      },
      watch: (ctx) => watchPath(path, ctx),
    };
  },
};
