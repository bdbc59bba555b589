/**
 * exec: a command exits with the expected status (and prints a text).
 *
 * The probe (probe.ts) runs the command without a shell, in its own process
 * group, so a timeout or a cancel kills it and everything it started
 * (docs/contract.md §5 exec).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";
import { commandDisplay } from "./display.ts";

/** What an exec condition needs. */
export interface ExecOptions {
  /** The program, run without a shell. */
  readonly command: string;
  readonly args: readonly string[];
  /** `--exit-code`: the status that counts as success (default 0). */
  readonly exitCode: number;
  /** `--output-contains`: a text stdout or stderr must include. */
  readonly outputContains: string | undefined;
}

/** The exec kind. */
export const exec = defineKind<ExecOptions>({
  name: "exec",
  aliases: [],
  summary: "a command succeeds",
  description:
    "Runs the command on each attempt, without a shell, in its own process group. Satisfied when it exits with --exit-code (default 0) and, with --output-contains, its stdout or stderr includes the text (at most 1 MiB of output is kept). A command that cannot be started (not found, not executable) is fatal (exit 3); any exit status is an ordinary failed attempt. On timeout or cancel the whole process group gets SIGTERM, then SIGKILL after 2s.",
  target: {
    shape: "command",
    placeholder: "COMMAND [ARGS...]",
    description: "the command and its arguments",
  },
  flags: [
    {
      name: "output-contains",
      type: "string",
      placeholder: "TEXT",
      description: "stdout or stderr includes TEXT",
    },
    {
      name: "exit-code",
      type: "integer",
      min: 0,
      max: 255,
      placeholder: "N",
      description: "expected exit status (default 0)",
    },
  ],
  examples: [
    { args: "exec -- pg_isready -h db", description: "wait until pg_isready succeeds" },
    {
      args: "exec --output-contains healthy -- curl -s http://localhost/status",
      description: "wait for a word in a command's output",
    },
    {
      args: "exec --exit-code 1 -- grep -q lock /etc/state",
      description: "wait until grep no longer finds the text",
    },
  ],
  parse(input) {
    const [command, ...args] = input.command;
    if (!command) return input.fail(undefined, "missing command after --");
    return {
      // Its arguments tell two commands apart; the credentials among them are masked.
      target: commandDisplay(input.command),
      options: {
        command,
        args,
        exitCode: input.integer("exit-code") ?? 0,
        outputContains: input.string("output-contains"),
      },
    };
  },
  load: () => import("./probe.ts").then((m) => m.create),
});
