/**
 * pidfile: the process a pid file names is running (or stopped)
 * (docs/contract.md §5 pidfile).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a pidfile condition needs. */
export interface PidfileOptions {
  /** The pid file's path. */
  readonly path: string;
  /** running: the named process is alive (the default); stopped: it is not. */
  readonly want: "running" | "stopped";
  /** The process must also have this executable name (comm, exe or argv[0] basename). */
  readonly name?: string;
}

/** The pidfile kind. */
export const pidfile = defineKind<PidfileOptions>({
  name: "pidfile",
  aliases: [],
  summary: "the process a pid file names is running (or has stopped)",
  description:
    "The pid is the first line of the file. --running (the default) holds while that process is alive, is not a zombie, started before the file was last written (so a pid the system reused for a later process does not count) and, with --name, has that executable name. --stopped holds when none of this is true, or the file does not exist. An empty or half-written file is pending either way.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path of the pid file",
    complete: "file",
  },
  flags: [
    { name: "running", type: "boolean", description: "the process is running (default)" },
    { name: "stopped", type: "boolean", description: "the process is gone, or there is no file" },
    {
      name: "name",
      type: "string",
      placeholder: "NAME",
      description: "the process's executable name must be NAME",
    },
  ],
  examples: [
    { args: "pidfile /run/nginx.pid", description: "wait until nginx has written its pid file" },
    {
      args: "pidfile /run/app.pid --name app",
      description: "the pid must belong to a process named app",
    },
    { args: "pidfile /run/app.pid --stopped", description: "wait until the daemon has exited" },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a path, got an empty string");
    if (input.bool("running") && input.bool("stopped")) {
      input.fail("stopped", "cannot be combined with --running");
    }
    const name = input.string("name");
    if (name === "") input.fail("name", "expected a name, got an empty string");
    if (name !== undefined && name.includes("/")) {
      input.fail("name", `expected an executable name without a directory, got "${name}"`);
    }
    return {
      target: path,
      options: { path, want: input.bool("stopped") ? "stopped" : "running", name },
    };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: () => import("../_common/doctor.ts").then((m) => m.inotify()),
});
