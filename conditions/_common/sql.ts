/**
 * The query flags of the SQL kinds (postgres, mysql; docs/contract.md §5
 * postgres): `--query SQL` with `--expect TEXT` (the first column of the
 * first row, as text) or `--min-rows N`, and the judgement of a result.
 *
 * @module
 */

import type { FlagSpec, KindInput } from "../../engine/types.ts";
import { clip } from "./datastore.ts";

/** The `--query`, `--expect` and `--min-rows` flags. */
export const SQL_FLAGS: readonly FlagSpec[] = [
  {
    name: "query",
    type: "string",
    placeholder: "SQL",
    description: "run SQL instead of SELECT 1 (several statements: the last result counts)",
  },
  {
    name: "expect",
    type: "string",
    placeholder: "TEXT",
    description: "with --query: the first column of the first row, as text, equals TEXT",
  },
  {
    name: "min-rows",
    type: "integer",
    min: 0,
    placeholder: "N",
    description: "with --query: it returns at least N rows",
  },
];

/** What to run and how to judge its result. */
export interface SqlCheck {
  /** The statement(s) to run; undefined: `SELECT 1`. */
  readonly query: string | undefined;
  readonly expect: string | undefined;
  readonly minRows: number | undefined;
}

/** The query flags, validated: `--expect` and `--min-rows` need `--query` and exclude each other. */
export function sqlCheck(input: KindInput): SqlCheck {
  const query = input.string("query");
  const expect = input.string("expect");
  const minRows = input.integer("min-rows");
  if (query !== undefined && query.trim().replace(/;+\s*$/, "") === "") {
    input.fail("query", "expected an SQL statement, got an empty one");
  }
  if (expect !== undefined && minRows !== undefined) {
    input.fail("min-rows", "cannot be combined with --expect");
  }
  if (query === undefined) {
    if (expect !== undefined) input.fail("expect", "needs --query");
    if (minRows !== undefined) input.fail("min-rows", "needs --query");
  }
  return { query, expect, minRows };
}

/** A result as the server wrote it: rows of columns, each a text or null (SQL NULL). */
export type TextRows = readonly (readonly (string | null)[])[];

/** Whether a result satisfies the check: the detail when it does, the reason when not. */
export type RowsVerdict = { readonly ok: true; readonly detail: string } | {
  readonly ok: false;
  readonly error: string;
};

function rowsText(n: number): string {
  return `${n} ${n === 1 ? "row" : "rows"}`;
}

/** Judges the last result of the query against `--expect` / `--min-rows`. */
export function judgeRows(check: SqlCheck, rows: TextRows): RowsVerdict {
  if (check.query === undefined) return { ok: true, detail: "SELECT 1 answered" };
  if (check.expect !== undefined) {
    const want = JSON.stringify(clip(check.expect));
    if (rows.length === 0) return { ok: false, error: `query returned no rows, expected ${want}` };
    const first = rows[0]![0];
    if (first === undefined) {
      return { ok: false, error: `query returned no columns, expected ${want}` };
    }
    if (first === null) return { ok: false, error: `query returned NULL, expected ${want}` };
    if (first !== check.expect) {
      return {
        ok: false,
        error: `query returned ${JSON.stringify(clip(first))}, expected ${want}`,
      };
    }
    return { ok: true, detail: `query returned ${want}` };
  }
  if (check.minRows !== undefined) {
    if (rows.length < check.minRows) {
      return {
        ok: false,
        error: `query returned ${rowsText(rows.length)}, expected at least ${check.minRows}`,
      };
    }
    return {
      ok: true,
      detail: `query returned ${rowsText(rows.length)} (at least ${check.minRows})`,
    };
  }
  return { ok: true, detail: `query answered (${rowsText(rows.length)})` };
}
