/**
 * `waitcmd doctor`: which kinds can work on this machine, and why not
 * (docs/contract.md §1).
 *
 * @module
 */

/** One kind's verdict. */
export interface DoctorRow {
  readonly kind: string;
  /** undefined: it can work here. */
  readonly reason: string | undefined;
}

/** The text form: one line per kind, `ok` or the reason. */
export function doctorText(rows: readonly DoctorRow[]): string {
  const width = Math.max(...rows.map((r) => r.kind.length));
  return rows.map((r) =>
    `${r.kind.padEnd(width)}  ${r.reason === undefined ? "ok" : `no: ${r.reason}`}`
  )
    .join("\n") + "\n";
}

/** The JSON form. */
export function doctorJson(rows: readonly DoctorRow[]): string {
  return JSON.stringify(
    {
      kinds: rows.map((r) => ({
        kind: r.kind,
        ok: r.reason === undefined,
        reason: r.reason ?? "",
      })),
    },
    null,
    2,
  ) + "\n";
}
