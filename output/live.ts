/**
 * The terminal view (docs/contract.md §6): one line per condition (spinner,
 * attempts, time since the run started, current text) and a last line with
 * the run's elapsed time and the time left, redrawn in place; then the final
 * lines and the summary. Used only when stderr is a terminal and `--quiet` is
 * not given.
 *
 * @module
 */

import { formatDuration, formatElapsed } from "../engine/duration.ts";
import type { ConditionPlan } from "../engine/plan.ts";
import type { RunEvent } from "../engine/runner.ts";
import type { Redact } from "./redact.ts";
import { attemptText, headerLine, type Style, summaryLines } from "./text.ts";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A condition's name in the view: a guard's says so, as its text lines do (docs/contract.md §6). */
function shownName(c: ConditionPlan): string {
  return c.guard ? `guard ${c.name}` : c.name;
}

interface Row {
  condition: ConditionPlan;
  attempts: number;
  /** When the last attempt ended, since the run started. */
  elapsedMs: number;
  text: string;
  done: boolean;
}

/** Shortest a name is cut to before the text is cut too. */
const MIN_NAME = 12;

/** `text` cut to `room` columns, ending in `…` when cut. */
function cut(text: string, room: number): string {
  if (text.length <= room) return text;
  return room <= 1 ? "…".slice(0, Math.max(0, room)) : text.slice(0, room - 1) + "…";
}

/** Time left, in whole seconds rounded up: `4m58s`, `3s`. */
function formatLeft(ms: number): string {
  return ms <= 0 ? "0s" : formatDuration(Math.ceil(ms / 1000) * 1000);
}

/**
 * One condition's line without its mark, at most `room` columns: the name is
 * cut first (down to MIN_NAME), so the text (the error) stays readable on a
 * narrow terminal; only then is the text cut.
 */
export function rowText(name: string, meta: string, text: string, room: number): string {
  const fixed = `  ${meta}${text ? "  " : ""}`.length;
  if (name.length + fixed + text.length <= room) {
    return `${name}  ${meta}${text ? `  ${text}` : ""}`;
  }
  const nameRoom = Math.max(Math.min(name.length, MIN_NAME), room - fixed - text.length);
  const shown = cut(name, nameRoom);
  const textRoom = room - shown.length - fixed;
  const line = `${shown}  ${meta}${text && textRoom > 0 ? `  ${cut(text, textRoom)}` : ""}`;
  return cut(line, room);
}

/** Redraws a block of status lines in place on a terminal. */
export class LiveRenderer {
  #rows: Row[] = [];
  #drawn = 0;
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #startedAt = 0;
  #timeoutMs = Infinity;
  #ended = false;

  /** `now` reads the time the run's elapsed time is measured with (ms). */
  constructor(
    private readonly write: (text: string) => void,
    private readonly redact: Redact,
    private readonly style: Style,
    private readonly columns: () => number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Consumes one run event. */
  onEvent(e: RunEvent): void {
    switch (e.type) {
      case "start":
        this.#startedAt = this.now();
        this.#timeoutMs = e.plan.options.timeoutMs;
        this.write(this.redact(headerLine(e.plan)) + "\n");
        this.#rows = e.plan.conditions.map((c) => ({
          condition: c,
          attempts: 0,
          elapsedMs: 0,
          text: "",
          done: false,
        }));
        this.#timer = setInterval(() => {
          this.#frame = (this.#frame + 1) % FRAMES.length;
          this.#draw();
        }, 120);
        this.#draw();
        return;
      case "attempt": {
        const row = this.#rows[e.condition.index - 1];
        if (!row) return;
        row.attempts = e.attempt;
        row.elapsedMs = e.elapsedMs;
        row.done = e.decisive;
        row.text = e.result.status === "satisfied" && e.decisive
          ? e.result.summary ?? e.result.detail
          : attemptText(e.result, e.streak);
        this.#draw();
        return;
      }
      case "notice":
        this.#clear();
        this.write(this.redact(`waitcmd: ${e.condition.name}: ${e.message}`) + "\n");
        this.#draw();
        return;
      case "end": {
        this.#ended = true;
        clearInterval(this.#timer);
        this.#clear();
        const lines: string[] = [];
        const reported = new Map(e.report.conditions.map((c) => [c.index, c]));
        for (const r of this.#rows) {
          if (r.condition.guard && !r.done) continue;
          const tag = r.done ? this.style.ok("[ok]") : this.style.wait("[..]");
          const c = reported.get(r.condition.index);
          // No attempt finished (a command still running at the deadline): what the report says.
          const [n, at, text] = r.attempts === 0 && c
            ? [c.attempts, e.report.elapsedMs, c.lastError || "no attempt finished"]
            : [r.attempts, r.elapsedMs, r.text];
          lines.push(
            `${tag} ${shownName(r.condition)} attempt ${n} (${formatElapsed(at)})${
              text ? `: ${text}` : ""
            }`,
          );
        }
        lines.push(...summaryLines(e.report, this.style));
        this.write(lines.map((l) => this.redact(l) + "\n").join(""));
        return;
      }
    }
  }

  /**
   * Writes a whole line above the live block (a started command's `[start N] ` line): the block
   * is erased, the line written, the block drawn again; after the end, only the line.
   */
  above(line: string): void {
    if (this.#timer === undefined || this.#ended) return this.write(line + "\n");
    this.#clear();
    this.write(line + "\n");
    this.#draw();
  }

  /**
   * Erases the block. The cursor goes back to the first column first: the terminal may have
   * moved it (its echo of ^C), and erasing from there would leave the start of a row, a
   * spinner glyph, on the screen.
   */
  #clear(): void {
    if (this.#drawn === 0) return;
    this.write(`\r\x1b[${this.#drawn}A\x1b[0J`);
    this.#drawn = 0;
  }

  #draw(): void {
    const width = Math.max(20, this.columns() - 1);
    const elapsed = Math.max(0, this.now() - this.#startedAt);
    const flat = (s: string) => this.redact(s).replace(/\s+/g, " ");
    const lines = this.#rows.map((r) => {
      const mark = r.done ? this.style.ok("✓") : this.style.wait(FRAMES[this.#frame]!);
      // A condition still waiting shows the run's time so far; a done one, when it was done.
      const at = r.done ? r.elapsedMs : Math.max(elapsed, r.elapsedMs);
      // Before its first answer a condition is on its first attempt, not its 0th.
      const text = r.attempts === 0 ? "waiting for the first answer" : r.text;
      // Cut before colouring so a wrapped line never breaks the redraw.
      return `${mark} ${
        rowText(
          flat(shownName(r.condition)),
          `attempt ${Math.max(1, r.attempts)}  ${formatElapsed(at)}`,
          flat(text),
          width - 2,
        )
      }`;
    });
    const left = Number.isFinite(this.#timeoutMs)
      ? `${formatLeft(this.#timeoutMs - elapsed)} left`
      : "no timeout";
    lines.push(cut(`  elapsed ${formatElapsed(elapsed)}, ${left}`, width));
    let out = this.#drawn > 0 ? `\r\x1b[${this.#drawn}A` : "";
    out += lines.map((l) => `\x1b[2K${l}\n`).join("");
    this.#drawn = lines.length;
    this.write(out);
  }
}
