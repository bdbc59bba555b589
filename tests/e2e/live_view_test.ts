/**
 * The live view on a real terminal (docs/contract.md §6): the run's elapsed
 * time and time left, each condition's time since the run started, and
 * lines cut to the terminal's width with the error kept.
 *
 * @module
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { literal, runOnTerminal, stripAnsi, timing, WAITCMD } from "./_cli.ts";

const PRESENT = await Deno.makeTempFile({ prefix: "waitcmd-live-" });

/** A long name: the label of a condition that is refused at once. */
const LONG = "the primary database of the shop, port one on loopback";

Deno.test("live view at 120 columns: elapsed, time left, time since the start, the error", async () => {
  const { drawn, raw } = await runOnTerminal([
    ...timing("1500ms", "5s"),
    ...["tcp", "127.0.0.1:1", "--label", LONG],
  ], { columns: 120 });
  const rows = drawn.filter((l) => l.includes(LONG));
  assert(rows.length > 0, `no live row drawn:\n${raw}`);
  assert(drawn.every((l) => l.length <= 119), "every line fits the terminal");
  assert(rows.some((l) => l.includes("connection refused")), rows.join("\n"));
  // One attempt, yet its time keeps growing: it counts from the run's start.
  const times = rows.filter((l) => l.includes("attempt 1 ")).map((l) =>
    Number(/attempt 1 {2}(\d+\.\d)s/.exec(l)?.[1])
  );
  assert(times.length > 0 && Math.max(...times) >= 0.8, `times of attempt 1: ${times}`);
  const status = drawn.filter((l) => /^ {2}elapsed /.test(l));
  assert(status.length > 0, `no status line:\n${drawn.join("\n")}`);
  assertMatch(status.at(-1)!, /^ {2}elapsed \d+\.\ds, \d+s left$/);
  assert(status.some((l) => / [01]s left$/.test(l)), status.join("\n"));
  assert(status.some((l) => l.endsWith(", 2s left")), status.join("\n"));
  // The final lines and the summary are unchanged.
  assertMatch(stripAnsi(raw), /\[\.\.\] .* attempt 1 \(\d+\.\ds\): connection refused/);
  assertStringIncludes(raw, "timed out after 1.5s");
});

Deno.test("a terminal that reports 0×0: plain lines, never cut, no live view", async () => {
  const { drawn, raw } = await runOnTerminal([
    ...timing("1s", "300ms"),
    ...["tcp", "127.0.0.1:1", "--label", LONG],
  ], { columns: 0, rows: 0 });
  assertEquals(drawn, [], "nothing redrawn in place");
  const lines = stripAnsi(raw).split(/\r?\n/).filter((l) => l !== "");
  assertMatch(lines[0]!, /^waitcmd: waiting for 1 condition \(timeout 1s, interval 300ms\)$/);
  assertMatch(
    lines[1]!,
    new RegExp(`^\\[\\.\\.\\] ${literal(LONG)} attempt 1 \\(\\d+\\.\\ds\\): connection refused$`),
  );
  assert(lines.filter((l) => l.includes(`${LONG} attempt `)).length >= 2, lines.join("\n"));
  assertEquals(
    lines.at(-1),
    `waitcmd: timed out after 1s; not satisfied: ${LONG}: connection refused`,
  );
});

Deno.test("live view at 60 columns: the name is cut, the error stays", async () => {
  const { drawn, raw } = await runOnTerminal([
    ...timing("1s", "5s"),
    ...["tcp", "127.0.0.1:1", "--label", LONG],
  ], { columns: 60 });
  const rows = drawn.filter((l) => l.includes("attempt 1"));
  assert(rows.length > 0, `no live row drawn:\n${raw}`);
  assert(drawn.every((l) => l.length <= 59), `a line wider than 59:\n${drawn.join("\n")}`);
  const row = rows.at(-1)!;
  assertStringIncludes(row, "connection refused");
  assertMatch(row, /^. the primary databa.*… {2}attempt 1 {2}\d+\.\ds {2}connection refused$/);
  assert(drawn.some((l) => /^ {2}elapsed \d+\.\ds, \d+s left$/.test(l)), drawn.join("\n"));
});

Deno.test("live view without a deadline says so", async () => {
  const { drawn, raw } = await runOnTerminal(["--timeout", "0", "file", PRESENT], {
    columns: 100,
  });
  assert(drawn.some((l) => /^ {2}elapsed \d+\.\ds, no timeout$/.test(l)), drawn.join("\n"));
  assertStringIncludes(raw, "satisfied in");
});

/**
 * The screen a terminal of `columns` shows after `raw`: enough of a terminal for the live
 * view's bytes (CR, LF, cursor up, erase line, erase below; colours ignored), and where each
 * run of text written after a cursor-up started.
 */
function screen(raw: string, columns: number): { rows: string[]; starts: number[] } {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  let moved = false;
  const starts: number[] = [];
  const line = () => (rows[row] ??= []);
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === "\r") col = 0;
    else if (ch === "\n") {
      row++;
      line();
    } else if (ch === "\x1b" && raw[i + 1] === "[") {
      // deno-lint-ignore no-control-regex
      const m = /^\x1b\[([0-9;?]*)([A-Za-z])/.exec(raw.slice(i))!;
      i += m[0].length - 1;
      const n = Number(m[1] || "0");
      if (m[2] === "A") {
        row = Math.max(0, row - (n || 1));
        moved = true;
      } else if (m[2] === "K" && n === 2) rows[row] = [];
      else if (m[2] === "J" && n === 0) {
        line().length = Math.min(line().length, col);
        rows.length = row + 1;
      }
    } else {
      if (moved) starts.push(col);
      moved = false;
      const cells = line();
      while (cells.length < col) cells.push(" ");
      cells[col] = ch;
      col = Math.min(col + 1, columns - 1);
    }
  }
  return { rows: rows.map((r) => r.join("").trimEnd()), starts };
}

Deno.test("live view after Ctrl-C: no spinner glyph is left at the start of a line", async () => {
  // The terminal echoes ^C where the cursor is, two columns into the line below the block; the
  // view must redraw and erase from the first column, not from there.
  const quoted = [WAITCMD, "--timeout", "30s", "--interval", "5s", "tcp", "127.0.0.1:1"]
    .map((a) => `'${a}'`).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qefc", `stty cols 100 rows 40 echoctl isig; env -u NO_COLOR ${quoted}`, "/dev/null"],
    env: { TERM: "xterm", WAITCMD_CI: "off" },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let raw = "";
  const stdin = child.stdin.getWriter();
  let sent = false;
  for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
    raw += text;
    if (!sent && /attempt 1 +\d+\.\ds +connection refused/.test(stripAnsi(raw))) {
      sent = true;
      await stdin.write(new Uint8Array([3])); // Ctrl-C, through the terminal
    }
  }
  await stdin.close().catch(() => {});
  const status = await child.status;
  assert(sent, `the live view never drew its row:\n${raw}`);
  assertEquals(status.code, 130, raw);
  const { rows, starts } = screen(raw, 100);
  const glyphs = /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏✓]/;
  assertEquals(rows.filter((r) => glyphs.test(r)), [], rows.join("\n"));
  // Every redraw and the final lines begin in the first column.
  assertEquals(starts.filter((c) => c !== 0), [], JSON.stringify(raw));
  const text = rows.filter((r) => r !== "");
  assertMatch(
    text.at(-2)!,
    /^\[\.\.\] tcp 127\.0\.0\.1:1 attempt 1 \(\d+\.\ds\): connection refused$/,
  );
  assertMatch(
    text.at(-1)!,
    /^waitcmd: cancelled by SIGINT after \d+\.\ds; not satisfied: tcp 127\.0\.0\.1:1$/,
  );
});

Deno.test("live view of a command still running at the deadline: attempt 1 and why, never attempt 0", async () => {
  const { drawn, raw } = await runOnTerminal(["--timeout", "1500ms", "exec", "--", "sleep", "5"], {
    columns: 120,
  });
  const rows = drawn.filter((l) => l.includes("exec sleep 5"));
  assert(rows.length > 0, `no live row drawn:\n${raw}`);
  assert(
    rows.every((l) => /attempt 1 {2}\d+\.\ds {2}waiting for the first answer$/.test(l)),
    rows.join("\n"),
  );
  const plain = stripAnsi(raw);
  assert(!plain.includes("attempt 0"), plain);
  assertMatch(
    plain,
    /\[\.\.\] exec sleep 5 attempt 1 \(1\.5s\): no answer before the deadline \(attempt 1 still running\)/,
  );
});
