/**
 * The terminal view: one line per condition (spinner, attempts, elapsed, last
 * error) redrawn in place, then the final lines and the summary. Used only
 * when stderr is a terminal and `--quiet` is not given.
 *
 * @module
 */

import { formatElapsed } from "../engine/duration.ts";
import type { ConditionPlan } from "../engine/grammar.ts";
import type { RunEvent } from "../engine/runner.ts";
import type { Redact } from "./redact.ts";
import { attemptText, headerLine, type Style, summaryLines } from "./text.ts";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

interface Row {
  condition: ConditionPlan;
  attempts: number;
  elapsedMs: number;
  text: string;
  done: boolean;
}

/** Redraws a block of status lines in place on a terminal. */
export class LiveRenderer {
  #rows: Row[] = [];
  #drawn = 0;
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly write: (text: string) => void,
    private readonly redact: Redact,
    private readonly style: Style,
    private readonly columns: () => number,
  ) {}

  /** Consumes one run event. */
  onEvent(e: RunEvent): void {
    switch (e.type) {
      case "start":
        this.write(this.redact(headerLine(e.plan)) + "\n");
        this.#rows = e.plan.conditions.map((c) => ({
          condition: c,
          attempts: 0,
          elapsedMs: 0,
          text: "starting",
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
        clearInterval(this.#timer);
        this.#clear();
        const lines: string[] = [];
        for (const r of this.#rows) {
          if (r.condition.guard && !r.done) continue;
          const tag = r.done ? this.style.ok("[ok]") : this.style.wait("[..]");
          const head = `${r.condition.name} attempt ${r.attempts} (${formatElapsed(r.elapsedMs)})`;
          lines.push(`${tag} ${head}${r.text ? `: ${r.text}` : ""}`);
        }
        lines.push(...summaryLines(e.report, this.style));
        this.write(lines.map((l) => this.redact(l) + "\n").join(""));
        return;
      }
    }
  }

  #clear(): void {
    if (this.#drawn === 0) return;
    this.write(`\x1b[${this.#drawn}A\x1b[0J`);
    this.#drawn = 0;
  }

  #draw(): void {
    const width = Math.max(20, this.columns() - 1);
    const lines = this.#rows.map((r) => {
      const mark = r.done ? this.style.ok("✓") : this.style.wait(FRAMES[this.#frame]!);
      const plain = `${r.condition.name}  attempt ${r.attempts}  ${
        formatElapsed(r.elapsedMs)
      }  ${r.text}`;
      // Truncate before colouring so a wrapped line never breaks the redraw.
      const text = this.redact(plain).replace(/\s+/g, " ");
      return `${mark} ${text.length > width - 2 ? text.slice(0, width - 3) + "…" : text}`;
    });
    let out = this.#drawn > 0 ? `\x1b[${this.#drawn}A` : "";
    out += lines.map((l) => `\x1b[2K${l}\n`).join("");
    this.#drawn = lines.length;
    this.write(out);
  }
}
