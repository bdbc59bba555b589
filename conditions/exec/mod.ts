/**
 * exec: a command exits with the expected status (and prints a text).
 *
 * The probe (probe.ts) runs the command without a shell, in its own process
 * group, so a timeout or a cancel kills it and everything it started
 * (docs/contract.md §5 exec).
 *
 * @module
 */

import { isCredentialName } from "../../engine/typed_secrets.ts";
import { defineKind, type KindInput } from "../../engine/types.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "../_common/jsonpath.ts";
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
  /** `--jsonpath`: stdout, parsed as JSON, satisfies each (http's syntax). */
  readonly jsonpaths: readonly JsonPathExpr[];
  /** `--cwd`: the directory the command runs in (default waitcmd's own). */
  readonly cwd: string | undefined;
  /** `--env NAME=VALUE`: variables added to the inherited environment, in order. */
  readonly env: readonly (readonly [name: string, value: string])[];
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `--env NAME=VALUE` values; a value whose NAME is a credential name is a secret. */
function parseEnv(input: KindInput): [string, string][] {
  return input.strings("env").map((text) => {
    const eq = text.indexOf("=");
    const name = text.slice(0, eq);
    if (eq <= 0 || !ENV_NAME.test(name)) {
      // The text may hold a secret value: only the name part is shown.
      input.fail(
        "env",
        `expected NAME=VALUE with NAME made of letters, digits and _, got ${
          JSON.stringify(eq < 0 ? text : `${name}=…`)
        }`,
      );
    }
    const value = text.slice(eq + 1);
    if (isCredentialName(name)) input.secret(value);
    return [name, value];
  });
}

/** `--cwd DIR`: a non-empty path (it may not exist yet: the run waits for it). */
function parseCwd(input: KindInput): string | undefined {
  const cwd = input.string("cwd");
  if (cwd === "") input.fail("cwd", "expected a directory, got an empty string");
  return cwd;
}

/** The exec kind. */
export const exec = defineKind<ExecOptions>({
  name: "exec",
  aliases: [],
  summary: "a command succeeds",
  description:
    "Runs the command on each attempt, without a shell, in its own process group. Satisfied when it exits with --exit-code (default 0) and, with --output-contains, its stdout or stderr includes the text, and with --jsonpath its stdout, parsed as JSON, satisfies each expression (at most 1 MiB of output is kept). --cwd sets the directory it runs in (one that does not exist yet is retried); --env adds variables to the environment it inherits (the value of a credential name, like PGPASSWORD or API_TOKEN, is a secret). A command that cannot be started (not found, not executable) is fatal (exit 3); any exit status is an ordinary failed attempt. On timeout or cancel the whole process group gets SIGTERM, then SIGKILL after 2s.",
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
      name: "jsonpath",
      type: "string",
      placeholder: "EXPR",
      repeatable: true,
      description:
        "stdout, parsed as JSON, satisfies an expression like '$.status == \"ok\"' (http's syntax); all given must hold",
    },
    {
      name: "cwd",
      type: "string",
      placeholder: "DIR",
      complete: "directory",
      description: "run the command in DIR",
    },
    {
      name: "env",
      type: "string",
      placeholder: "NAME=VALUE",
      repeatable: true,
      description:
        "set an environment variable for the command; a credential name's value is secret",
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
      args:
        "exec --jsonpath '$.status == \"healthy\"' -- consul operator autopilot state -format=json",
      description: "wait until a command's JSON output says healthy",
    },
    {
      args: "exec --cwd ./deploy --env PGPASSWORD=secret -- ./migrate.sh --check",
      description: "run a script in a directory with a secret variable",
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
        jsonpaths: input.strings("jsonpath").map((text) => {
          try {
            return parseJsonPathExpr(text);
          } catch (e) {
            return input.fail("jsonpath", (e as Error).message);
          }
        }),
        cwd: parseCwd(input),
        env: parseEnv(input),
      },
    };
  },
  async validate(options, fail) {
    if (options.jsonpaths.length === 0) return;
    const { validateJsonPaths } = await import("../_common/jsonpath_lib.ts");
    await validateJsonPaths(options.jsonpaths, fail);
  },
  load: () => import("./probe.ts").then((m) => m.create),
});
