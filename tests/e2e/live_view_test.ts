/**
 * The live view on a real terminal (docs/contract.md §6): the run's elapsed
 * time and time left, each condition's time since the run started, and
 * lines cut to the terminal's width with the error kept.
 *
 * @module
 */

import { assert, assertMatch, assertStringIncludes } from "../_assert.ts";
import { runOnTerminal, stripAnsi } from "./_cli.ts";

const PRESENT = await Deno.makeTempFile({ prefix: "waitcmd-live-" });

/** A long name: the label of a condition that is refused at once. */
const LONG = "the primary database of the shop, port one on loopback";

Deno.test("live view at 120 columns: elapsed, time left, time since the start, the error", async () => {
  const { drawn, raw } = await runOnTerminal([
    "--timeout",
    "1500ms",
    "--interval",
    "5s",
    "tcp",
    "127.0.0.1:1",
    "--label",
    LONG,
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

Deno.test("live view at 60 columns: the name is cut, the error stays", async () => {
  const { drawn, raw } = await runOnTerminal([
    "--timeout",
    "1s",
    "--interval",
    "5s",
    "tcp",
    "127.0.0.1:1",
    "--label",
    LONG,
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
