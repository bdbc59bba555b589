/**
 * What the data-store e2e tests (postgres, mysql, redis, nats) share: the
 * check that a marker secret shows in no output mode on any path.
 *
 * @module
 */

import { assert } from "../_assert.ts";
import { runCli } from "./_cli.ts";

/** Runs the CLI and returns everything it wrote (stdout, stderr, and the --report file). */
async function allOutput(
  args: string[],
  env: Record<string, string>,
  reportFile?: string,
): Promise<{ code: number; text: string }> {
  const r = await runCli(args, { env });
  let text = r.stdout + r.stderr;
  if (reportFile) text += await Deno.readTextFile(reportFile).catch(() => "");
  return { code: r.code, text };
}

/** The output modes every secret check runs: extra global options before the conditions. */
export function outputModes(dir: string): { name: string; globals: string[]; report?: string }[] {
  return [
    { name: "text", globals: [] },
    { name: "json", globals: ["-o", "json"] },
    {
      name: "jsonl + --report",
      globals: ["-o", "jsonl", "--report", `${dir}/report.json`],
      report: `${dir}/report.json`,
    },
    { name: "--explain", globals: ["--explain"] },
    { name: "--explain -o json", globals: ["--explain", "-o", "json"] },
  ];
}

/** One path of a run for the secret checks: its conditions, the exit codes it may end with. */
export interface SecretPath {
  readonly name: string;
  readonly args: string[];
  /** Exit codes outside --explain (which exits 0, or 2 on a usage error). */
  readonly codes: readonly number[];
}

/**
 * Runs every path in every output mode and asserts that no output holds
 * any of `marks` (the secret as written, and any encoded form).
 */
export async function assertSecretsAbsent(
  paths: readonly SecretPath[],
  marks: readonly string[],
  env: Record<string, string>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-ds-secrets-" });
  try {
    for (const path of paths) {
      for (const mode of outputModes(dir)) {
        await Deno.remove(`${dir}/report.json`).catch(() => {});
        const r = await allOutput([...mode.globals, ...path.args], env, mode.report);
        const explain = mode.globals.includes("--explain");
        const usage = path.codes.includes(2);
        const want = explain ? [usage ? 2 : 0] : path.codes;
        assert(
          want.includes(r.code),
          `${path.name}, ${mode.name}: exit ${r.code}, expected ${want.join(" or ")}\n${r.text}`,
        );
        for (const m of marks) {
          assert(
            !r.text.includes(m),
            `${path.name}, ${mode.name}: the secret ${JSON.stringify(m)} shows:\n${r.text}`,
          );
        }
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
