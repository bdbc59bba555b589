/**
 * What the data-store e2e tests (postgres, mysql, redis) share: a jsonl run
 * that reacts to each attempt (stop a server at the first failure, start it
 * again once the port refuses), and the check that a marker secret shows in
 * no output mode on any path.
 *
 * @module
 */

import { assert } from "../_assert.ts";
import { type JsonReportShape, WAITCMD } from "./_cli.ts";
import type { AttemptEvent } from "./_late.ts";

/** What a scripted run produced. */
export interface ScriptedResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The `end` event: the JSON report. */
  report: JsonReportShape;
  attempts: AttemptEvent[];
  /** Spawn to exit. */
  wallMs: number;
}

/**
 * Runs `waitcmd --output jsonl ...args` and calls `onAttempt` with every
 * attempt event as it arrives (awaited in order, without holding up the
 * run). The run's stdout is returned whole too, for secret checks.
 */
export async function runScripted(
  args: string[],
  onAttempt: (a: AttemptEvent, all: readonly AttemptEvent[]) => Promise<unknown> | void,
  env: Record<string, string> = {},
): Promise<ScriptedResult> {
  const t0 = performance.now();
  const child = new Deno.Command(WAITCMD, {
    args: ["--output", "jsonl", ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const attempts: AttemptEvent[] = [];
  let report: JsonReportShape | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  let stdout = "";
  let buf = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    stdout += chunk;
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const ev = JSON.parse(line) as { event: string };
      if (ev.event === "attempt") {
        const a = ev as AttemptEvent;
        attempts.push(a);
        const seen = [...attempts];
        chain = chain.then(() => onAttempt(a, seen));
      } else if (ev.event === "end") {
        report = ev as unknown as JsonReportShape;
      }
    }
  }
  const status = await child.status;
  const wallMs = performance.now() - t0;
  await chain;
  if (!report) throw new Error(`no end event; stderr:\n${await stderr}`);
  return { code: status.code, stdout, stderr: await stderr, report, attempts, wallMs };
}

/** Runs the CLI and returns everything it wrote (stdout, stderr, and the --report file). */
export async function allOutput(
  args: string[],
  env: Record<string, string>,
  reportFile?: string,
): Promise<{ code: number; text: string }> {
  const out = await new Deno.Command(WAITCMD, {
    args,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  let text = d.decode(out.stdout) + d.decode(out.stderr);
  if (reportFile) text += await Deno.readTextFile(reportFile).catch(() => "");
  return { code: out.code, text };
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
