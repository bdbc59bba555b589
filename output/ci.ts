/**
 * CI logs (docs/contract.md §6, CI logs): in GitHub Actions the progress
 * lines go in one `::group::` … `::endgroup::` pair and a failed run adds an
 * `::error` annotation; in GitLab CI they go in a collapsed section; in
 * GitHub Actions the step summary gets a table of the conditions.
 * `WAITCMD_CI=off` turns all of it off. The bytes are the ones each system
 * documents: GitHub's workflow commands (data escaped `%` → `%25`, CR →
 * `%0D`, LF → `%0A`) and GitLab's section markers
 * (`\e[0Ksection_start:<unix seconds>:<name>[collapsed=true]\r\e[0K<header>`).
 *
 * @module
 */

import { formatElapsed } from "../engine/duration.ts";
import type { ConditionReport, Report } from "../engine/report.ts";
import type { Redact } from "./redact.ts";
import { type Fold, summaryLines, withHint } from "./text.ts";

/** The CI systems whose logs waitcmd folds. */
export type CiSystem = "github" | "gitlab";

/** The CI system the environment names, or undefined (none, or `WAITCMD_CI=off`). */
export function ciSystem(env: Readonly<Record<string, string>>): CiSystem | undefined {
  if ((env.WAITCMD_CI ?? "").toLowerCase() === "off") return undefined;
  if (env.GITHUB_ACTIONS === "true") return "github";
  if (env.GITLAB_CI === "true") return "gitlab";
  return undefined;
}

/** The escapes of a GitHub workflow command's data. */
const DATA_ESCAPES: Readonly<Record<string, string>> = { "%": "%25", "\r": "%0D", "\n": "%0A" };

/**
 * Text as the data of a GitHub workflow command: `%`, CR and LF escaped, in one pass of a
 * one-character class (docs/development.md, "Linear-time text handling").
 */
export function escapeData(text: string): string {
  return text.replace(/[%\r\n]/g, (c) => DATA_ESCAPES[c]!);
}

/**
 * A text line with GitHub's legacy workflow commands (`##[error]`, `##[group]`, `##[add-mask]`,
 * `##[stop-commands]`) made inert: the runner reads `##[` anywhere in a line, so a server's
 * message, a command's output or a file name could otherwise open a group, raise an error or
 * stop the runner reading commands. Written `## [` instead (docs/contract.md §6, CI logs). The
 * `::` commands need the start of a line, which text from outside never has (§6).
 */
export function neutraliseLegacyCommands(line: string): string {
  return line.includes("##[") ? line.replaceAll("##[", "## [") : line;
}

/** The section's name in GitLab's log (letters, digits, `_`, `.` and `-` only). */
export const GITLAB_SECTION = "waitcmd";

/**
 * The fold of `system`'s log. `wallMs` reads the wall clock (ms since the epoch), for
 * GitLab's section timestamps.
 */
export function ciFold(system: CiSystem, wallMs: () => number): Fold {
  if (system === "github") {
    return {
      // The header is the group's title: the folded log still shows it.
      open: (header) => `::group::${escapeData(header)}`,
      close: () => "::endgroup::",
      annotation: (report, lines) => {
        if (report.status === "satisfied" || report.status === "cancelled") return undefined;
        // Several summary lines (a timeout with several conditions) make one annotation, its
        // lines joined by an escaped newline.
        const text = lines.map((l) => l.replace(/^waitcmd: /, "")).join("\n");
        return `::error title=waitcmd::${escapeData(text)}`;
      },
    };
  }
  const seconds = () => Math.floor(wallMs() / 1000);
  return {
    open: (header) =>
      `\x1b[0Ksection_start:${seconds()}:${GITLAB_SECTION}[collapsed=true]\r\x1b[0K${header}`,
    close: () => `\x1b[0Ksection_end:${seconds()}:${GITLAB_SECTION}\r\x1b[0K`,
    annotation: () => undefined,
  };
}

/** A Markdown table cell: `\\` and `|` escaped, line breaks as `<br>`, in one pass. */
function cell(text: string): string {
  return text.replace(/[\\|]|\r\n?|\n/g, (m) => m === "\\" || m === "|" ? `\\${m}` : "<br>");
}

/** A condition's verdict in the step summary. */
function verdict(c: ConditionReport): string {
  if (c.guard) return c.satisfied ? "guard matched" : "guard, did not match";
  if (c.satisfied) return "satisfied";
  if (c.fatal) return "fatal";
  if (c.exhausted) return "gave up";
  if (c.stopped) return "not needed";
  return "not satisfied";
}

/**
 * The step summary's Markdown: the run's summary, then a table of its conditions (condition,
 * verdict, attempts, time, and the last error of a row that does not hold); secrets removed.
 */
export function stepSummary(report: Report, redact: Redact): string {
  // Secrets are removed before escaping: an escaped secret would no longer be found.
  const safe = (text: string) => cell(redact(text));
  const head = summaryLines(report).map((l) => safe(l.replace(/^waitcmd: /, "")));
  const rows = report.conditions.map((c) => {
    const time = c.elapsedMs === null ? "" : formatElapsed(c.elapsedMs);
    // A row that holds has no error to show: its last failed attempt came before it held.
    const error = c.satisfied || c.lastError === "" ? "" : withHint(c.lastError, c.hint);
    return `| ${[c.name, verdict(c), String(c.attempts), time, error].map(safe).join(" | ")} |`;
  });
  return [
    `**waitcmd**: ${head.join("<br>")}`,
    "",
    "| condition | verdict | attempts | time | last error |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    "",
  ].join("\n");
}

/**
 * Appends the step summary to `GITHUB_STEP_SUMMARY` in GitHub Actions, by `--report`'s rules
 * (docs/contract.md §6, CI logs); nothing elsewhere. Throws what the write throws.
 */
export async function writeStepSummary(
  env: Readonly<Record<string, string>>,
  report: Report,
  redact: Redact,
): Promise<void> {
  const file = env.GITHUB_STEP_SUMMARY;
  if (ciSystem(env) !== "github" || !file) return;
  // --report's rules (output/report_file.ts): no link followed, no wait without end on a FIFO.
  const { appendFile } = await import("./report_file.ts");
  await appendFile(file, stepSummary(report, redact), "the step summary");
}
