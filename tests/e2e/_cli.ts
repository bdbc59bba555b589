/**
 * Runs the waitcmd CLI (`scripts/waitcmd`) as a subprocess, the way users
 * and CI do, and collects its exit code and outputs.
 *
 * @module
 */

import { assertReportSchema } from "../_schema.ts";
import { repoRoot } from "../services/_util.ts";

/** Path of the from-source launcher. */
export const WAITCMD: string = `${repoRoot}/scripts/waitcmd`;

/** What one CLI run produced. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is a JSON document. */
  json: JsonReportShape | undefined;
}

/** The JSON report as tests read it. */
export interface JsonReportShape {
  status: string;
  elapsed_seconds: number;
  mode?: string;
  timeout_seconds?: number;
  conditions: {
    name: string;
    kind?: string;
    target?: string;
    guard?: boolean;
    satisfied: boolean;
    attempts: number;
    detail: string;
    last_error: string;
    hint?: string;
    fatal?: boolean;
  }[];
}

/** Options of one run. */
export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Text written to stdin (stdin is closed otherwise). */
  stdin?: string;
  /** Called once the process started (e.g. to create the awaited file, or to signal it). */
  started?: (child: Deno.ChildProcess) => void | Promise<void>;
}

/**
 * Runs `waitcmd ...args` to completion, with NO_COLOR and WAITCMD_CI=off unless `env` sets
 * them (a suite run inside GitHub Actions or GitLab CI must not fold its runs' lines).
 */
export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const child = new Deno.Command(WAITCMD, {
    args,
    cwd: opts.cwd,
    env: { NO_COLOR: "1", WAITCMD_CI: "off", ...opts.env },
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const [_, out] = await Promise.all([opts.started?.(child), child.output()]);
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  let json: JsonReportShape | undefined;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  // Every report a test reads must match the published schema (docs/report.schema.json).
  if (json !== undefined && typeof json === "object" && json !== null && "status" in json) {
    await assertReportSchema(json);
  }
  return { code: out.code, stdout, stderr, json };
}

/** Runs the CLI with `--output json` and returns the result, failing loudly if stdout is not one report. */
export async function runJson(
  globalsAndArgs: string[],
  opts: CliOptions = {},
): Promise<CliResult & { json: JsonReportShape }> {
  const r = await runCli(["--output", "json", ...globalsAndArgs], opts);
  if (!r.json) {
    throw new Error(
      `expected a JSON report on stdout, got:\n${r.stdout}\n--- stderr ---\n${r.stderr}`,
    );
  }
  return r as CliResult & { json: JsonReportShape };
}

/** Asserts a usage error: exit 2, nothing on stdout, exactly one stderr line containing `fragment`. */
export function usageErrorLine(r: CliResult): string {
  const lines = r.stderr.trimEnd().split("\n");
  if (r.code !== 2 || r.stdout !== "" || lines.length !== 1 || !lines[0]!.startsWith("waitcmd: ")) {
    throw new Error(
      `expected one usage-error line and exit 2, got exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
    );
  }
  return lines[0]!;
}
