/**
 * Runs the CLI with `--output jsonl` and makes a change as soon as the first
 * attempt has failed: the way to test "the target appears later" without
 * guessing how long waitcmd takes to start. The `end` event carries the same
 * fields as the JSON report.
 *
 * @module
 */

import { type JsonReportShape, WAITCMD } from "./_cli.ts";

/** An `attempt` event of `--output jsonl`. */
export interface AttemptEvent {
  event: "attempt";
  condition: string;
  attempt: number;
  ok: boolean;
  detail: string;
  error: string;
}

/** What a late run produced. */
export interface LateResult {
  code: number;
  stderr: string;
  /** The `end` event: the JSON report. */
  report: JsonReportShape;
  attempts: AttemptEvent[];
}

/**
 * Runs `waitcmd --output jsonl ...args`; once the first attempt event with
 * `ok: false` arrives, runs `change()` (once).
 */
export async function runLate(
  args: string[],
  change: () => Promise<unknown>,
  env: Record<string, string> = {},
): Promise<LateResult> {
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
  let changed: Promise<unknown> | undefined;
  let buf = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const ev = JSON.parse(line) as { event: string };
      if (ev.event === "attempt") {
        const a = ev as AttemptEvent;
        attempts.push(a);
        if (!a.ok) changed ??= change();
      } else if (ev.event === "end") {
        report = ev as unknown as JsonReportShape;
      }
    }
  }
  const status = await child.status;
  await changed;
  if (!report) throw new Error(`no end event; stderr:\n${await stderr}`);
  return { code: status.code, stderr: await stderr, report, attempts };
}
