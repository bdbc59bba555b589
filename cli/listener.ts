/**
 * How a session's run events reach the process's streams (docs/contract.md §6, §7): the
 * renderer `--output` asks for (none for json, JSON lines for jsonl, text lines for text), and
 * for text whether the terminal gets the live view, colours, and a CI system's folded sections.
 * Each renderer is imported only when a run writes with it (docs/performance.md).
 *
 * @module
 */

import type { Plan } from "../engine/plan.ts";
import type { RunEvent } from "../engine/report.ts";
import { lineRedactor, type Redact } from "../output/redact.ts";
import type { SessionIo } from "./session.ts";

/** Whether the environment may name a CI system (output/ci.ts decides; loaded only then). */
function ciSystemOf(env: Readonly<Record<string, string>>): boolean {
  return env.GITHUB_ACTIONS === "true" || env.GITLAB_CI === "true";
}

/**
 * The listener of the run's events, and for text a whole line's way to stderr that keeps the live
 * view intact (`print`, for `--start`'s lines).
 */
export type Listener = ((e: RunEvent) => void) & { print?: (line: string) => void };

/** The listener of the run's events for `--output` and the terminal; undefined for json. */
export async function listener(
  plan: Plan,
  io: SessionIo,
  redact: Redact,
): Promise<Listener | undefined> {
  const o = plan.options;
  // JSON output listens to no event: the runner then makes none (docs/performance.md).
  if (o.output === "json") return undefined;
  if (o.output === "jsonl") {
    const { renderJsonlEvent } = await import("../output/json.ts");
    return (e) => {
      const line = renderJsonlEvent(e, redact);
      if (line !== undefined) io.stdout(line);
    };
  }
  const text = await import("../output/text.ts");
  const color = io.stderrIsTerminal && !o.noColor &&
    !("NO_COLOR" in io.env && io.env.NO_COLOR !== "");
  const style = color ? text.ansiStyle : text.plainStyle;
  // Text lines: control characters escaped, so a server's newline cannot forge a line (§6).
  const lineRedact = lineRedactor(redact, color);
  // A terminal whose size is unknown or 0 cannot hold the live view's lines: plain lines (§6).
  if (io.stderrIsTerminal && !o.quiet && io.columns() > 0) {
    const { LiveRenderer } = await import("../output/live.ts");
    const live = new LiveRenderer(io.stderr, lineRedact, style, io.columns);
    return Object.assign((e: RunEvent) => live.onEvent(e), { print: (l: string) => live.above(l) });
  }
  // A CI system's log folds the progress lines (docs/contract.md §6, CI logs).
  const ci = ciSystemOf(io.env) ? await import("../output/ci.ts") : undefined;
  const system = ci?.ciSystem(io.env);
  // GitHub's runner reads a legacy `##[command]` anywhere in a line, whatever WAITCMD_CI says.
  const shown = io.env.GITHUB_ACTIONS === "true"
    ? (t: string) => ci!.neutraliseLegacyCommands(lineRedact(t))
    : lineRedact;
  // The end's summary is a line per condition not satisfied: written at once, one write for
  // tens of thousands of lines, not one each (docs/contract.md §3: the deadline's 100 ms).
  let batch: string[] | undefined;
  const lines = new text.LineRenderer((l) => batch ? batch.push(l) : io.stderr(l + "\n"), shown, {
    quiet: o.quiet,
    style,
    progress: o.progress,
    clock: io.clock,
    fold: system && ci!.ciFold(system, () => io.wallClock?.() ?? Date.now()),
  });
  return (e) => {
    if (e.type !== "end") return lines.onEvent(e);
    batch = [];
    try {
      lines.onEvent(e);
    } finally {
      const all = batch;
      batch = undefined;
      if (all.length > 0) io.stderr(all.join("\n") + "\n");
    }
  };
}
