/**
 * Runs the CLI with `--output jsonl`, calls a hook on every attempt event
 * (to change the target after a given attempt: restart a server once it
 * answered, fix a password once it was refused), and measures how long the
 * process took to exit after its `end` event: a driver's pool, reconnect
 * loop or timer must not hold the process after the verdict.
 *
 * @module
 */

import type { AttemptEvent } from "./_late.ts";
import { type JsonReportShape, WAITCMD } from "./_cli.ts";

/** What a watched run produced. */
export interface WatchedResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The `end` event: the JSON report. */
  report: JsonReportShape;
  attempts: AttemptEvent[];
  /**
   * Milliseconds from reading the last attempt event (the one that decided)
   * to the process's exit: closing the probes and writing the report.
   */
  exitAfterVerdictMs: number;
}

/**
 * Runs `waitcmd --output jsonl ...args`; `onAttempt` sees each attempt event
 * and may start a change (not awaited by the stream; awaited before returning).
 * A timeout decides without an attempt: then the figure counts from the last attempt.
 */
export async function runWatched(
  args: string[],
  onAttempt: (a: AttemptEvent, all: readonly AttemptEvent[]) => Promise<unknown> | void,
  env: Record<string, string> = {},
): Promise<WatchedResult> {
  const child = new Deno.Command(WAITCMD, {
    args: ["--output", "jsonl", ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const attempts: AttemptEvent[] = [];
  const changes: Promise<unknown>[] = [];
  let report: JsonReportShape | undefined;
  let decidedAt = 0;
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
        decidedAt = performance.now();
        const p = onAttempt(a, attempts);
        if (p) changes.push(p);
      } else if (ev.event === "end") {
        report = ev as unknown as JsonReportShape;
      }
    }
  }
  const status = await child.status;
  const exitedAt = performance.now();
  await Promise.all(changes);
  if (!report) throw new Error(`no end event; stderr:\n${await stderr}`);
  return {
    code: status.code,
    stdout,
    stderr: await stderr,
    report,
    attempts,
    exitAfterVerdictMs: exitedAt - decidedAt,
  };
}
