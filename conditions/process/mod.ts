/**
 * process: a process selected by name or pid is running (or stopped).
 * The probe (probe.ts) reads /proc on Linux, `ps` elsewhere; zombies are not
 * running (docs/contract.md §5 process).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a process condition needs: which processes, and the state wanted. */
export type ProcessOptions =
  & ({ readonly by: "name"; readonly name: string } | { readonly by: "pid"; readonly pid: number })
  & {
    /** running: a selected process is alive; stopped: none is. */
    readonly want: "running" | "stopped";
  };

/** The process kind. */
export const process = defineKind<ProcessOptions>({
  name: "process",
  aliases: [],
  summary: "a process is running (or has stopped)",
  description:
    "Selects processes by --name (the executable name: /proc/PID/comm, or the basename of its executable or argv[0]) or by --pid. --running (the default) holds while at least one selected process is alive and not a zombie; --stopped holds when none is.",
  target: { shape: "none", placeholder: "", description: "" },
  flags: [
    {
      name: "name",
      type: "string",
      placeholder: "NAME",
      description: "executable name to look for",
    },
    {
      name: "pid",
      type: "integer",
      min: 1,
      placeholder: "PID",
      description: "process id to look at",
    },
    { name: "running", type: "boolean", description: "a selected process is running (default)" },
    { name: "stopped", type: "boolean", description: "no selected process is running" },
  ],
  examples: [
    { args: "process --name postgres", description: "wait until a postgres process runs" },
    { args: "process --pid 4242 --stopped", description: "wait until process 4242 has exited" },
  ],
  parse(input) {
    const name = input.string("name");
    const pid = input.integer("pid");
    if (name === undefined && pid === undefined) {
      input.fail("name", "process needs --name NAME or --pid PID");
    }
    if (name !== undefined && pid !== undefined) {
      input.fail("pid", "cannot be combined with --name");
    }
    if (name === "") input.fail("name", "expected a name, got an empty string");
    if (input.bool("running") && input.bool("stopped")) {
      input.fail("stopped", "cannot be combined with --running");
    }
    const want = input.bool("stopped") ? "stopped" : "running";
    if (name !== undefined) {
      return { target: `--name ${name}`, options: { by: "name", name, want } };
    }
    return { target: `--pid ${pid}`, options: { by: "pid", pid: pid!, want } };
  },
  load: () => import("./probe.ts").then((m) => m.create),
});
