/**
 * What the SQL kinds (those with conditions/_common/sql.ts's flags) share, run against a kind's
 * real server: `--query` with `--expect` and with `--min-rows`, and a syntax error, fatal.
 *
 * @module
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { runCli, runJson } from "./_cli.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];

/** A kind's live server, as the SQL scenarios reach it. */
export interface SqlTarget {
  readonly kind: string;
  /** The URL of its `app` login (with the password). */
  readonly url: string;
  readonly password: string;
}

/** The URL as a report shows it: its password masked. */
function shown(t: SqlTarget): string {
  return t.url.replace(t.password, "***");
}

/**
 * `--query` with `--expect` under the word `expect.word` (the report names it, the kind and
 * the target, masked); then `--min-rows 3` under `minRows.word` over a query whose last
 * statement returns 3 rows.
 */
export async function assertQueries(
  t: SqlTarget,
  expect: { word: string; args: string[]; detail: string },
  minRows: { word: string; query: string },
): Promise<void> {
  const e = await runJson([...FAST, expect.word, t.url, ...expect.args]);
  assertEquals([e.code, e.stderr], [0, ""]);
  const c = e.json.conditions[0]!;
  assertEquals([c.name, c.kind, c.target], [`${expect.word} ${shown(t)}`, t.kind, shown(t)]);
  assertEquals(c.detail, expect.detail);
  const m = await runJson([
    ...FAST,
    minRows.word,
    t.url,
    "--query",
    minRows.query,
    "--min-rows",
    "3",
  ]);
  assertEquals(m.code, 0);
  assertEquals(m.json.conditions[0]!.detail, "query returned 3 rows (at least 3) as app@app");
}

/**
 * A query with a syntax error ends the run at once (exit 3, one attempt) with the server's
 * `error`, in JSON and in text (whose line begins with `textError`); no output holds the password.
 */
export async function assertSyntaxErrorFatal(
  t: SqlTarget,
  error: string | RegExp,
  textError: string,
): Promise<void> {
  const r = await runJson([...FAST, t.kind, t.url, "--query", "SELEC 1"]);
  assertEquals([r.code, r.stderr, r.json.status], [3, "", "fatal"]);
  const c = r.json.conditions[0]!;
  assertEquals([c.fatal, c.attempts], [true, 1]);
  if (typeof error === "string") assertEquals(c.last_error, error);
  else assertMatch(c.last_error, error);
  const text = await runCli([...FAST, t.kind, t.url, "--query", "SELECT 1 +"]);
  assertEquals(text.code, 3);
  assertStringIncludes(text.stderr, `waitcmd: fatal: ${t.kind} ${shown(t)}: ${textError}`);
  for (const out of [r.stdout, text.stderr]) assert(!out.includes(t.password), out);
}
