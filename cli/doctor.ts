/**
 * `waitcmd doctor`: which kinds can work on this machine, and why not
 * (docs/contract.md §1).
 *
 * @module
 */

import { describeError } from "../engine/errors.ts";
import type { Registry } from "../engine/registry.ts";

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

/** What `doctor` writes with. */
export interface DoctorIo {
  stdout(text: string): void;
  /** Where text output names each failed requirement (absent: nowhere). */
  stderr?(text: string): void;
  readonly env: Readonly<Record<string, string>>;
}

/** `waitcmd: doctor: required kind KIND cannot work here: REASON`, one per failed requirement. */
export function failedRequirements(
  rows: readonly DoctorRow[],
  required: readonly string[],
): string[] {
  return required.flatMap((kind) => {
    const reason = rows.find((r) => r.kind === kind)?.reason;
    return reason === undefined
      ? []
      : [`waitcmd: doctor: required kind ${kind} cannot work here: ${reason}`];
  });
}

/**
 * `waitcmd doctor`: asks every kind whether it can work here, prints the verdicts, and
 * returns the exit code: 1 when a `--require`d kind cannot, else 0. Text output names each
 * failed requirement on stderr, after the table.
 */
export async function doctor(
  command: { readonly output: "text" | "json"; readonly required: readonly string[] },
  registry: Registry,
  io: DoctorIo,
): Promise<number> {
  const rows: DoctorRow[] = await Promise.all(
    registry.kinds.map(async (k) => ({
      kind: k.name,
      reason: k.doctor ? await k.doctor(io.env).catch((e) => describeError(e)) : undefined,
    })),
  );
  io.stdout(command.output === "json" ? doctorJson(rows) : doctorText(rows));
  const failed = failedRequirements(rows, command.required);
  if (command.output === "text") { for (const line of failed) io.stderr?.(line + "\n"); }
  return failed.length > 0 ? 1 : 0;
}
