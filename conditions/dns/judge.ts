/**
 * Judging a dns answer against what the condition requires: enough records,
 * the --equals values, --contains, --absent and --rcode. Pure, so it is
 * tested without servers.
 *
 * @module
 */

import { clip } from "../../engine/secrets.ts";
import type { ProbeResult } from "../../engine/types.ts";
import { normValue, type Rec, type RecordType } from "./records.ts";

/** Records shown in a detail before "…". */
const SHOWN = 5;

/** What one lookup found (a lookup that failed threw instead). */
export interface Lookup {
  readonly rcode: string;
  readonly records: readonly Rec[];
  /** Who answered (wire: the server), for messages. */
  readonly from?: string;
}

/** What to require of the answer. */
export interface DnsWant {
  readonly type: RecordType;
  readonly minCount: number;
  readonly equals: readonly string[];
  readonly contains: string | undefined;
  readonly absent: boolean;
  readonly rcode: string | undefined;
  /** Whether rcodes are known (wire): NXDOMAIN vs NODATA can be told apart. */
  readonly wire: boolean;
}

/** Records in a stable order (servers rotate them): numbers compare as numbers. */
function sorted(records: readonly Rec[]): Rec[] {
  return [...records].sort((a, b) => a.text.localeCompare(b.text, "en", { numeric: true }));
}

function listRecords(type: string, records: readonly Rec[]): string {
  const shown = sorted(records).slice(0, SHOWN).map((r) => clip(r.text, 80)).join(", ");
  return `${type} ${shown}${records.length > SHOWN ? `, … (${records.length} records)` : ""}`;
}

/** Judges a lookup against the requirements. */
export function judgeLookup(found: Lookup, want: DnsWant): ProbeResult {
  const { rcode, records } = found;
  const from = found.from ?? "the resolver";
  const t = want.type;
  const none = want.wire
    ? `no ${t} records (${rcode === "NOERROR" ? "NODATA" : rcode})`
    : `no ${t} records`;
  if (want.rcode !== undefined && rcode !== want.rcode) {
    return { status: "pending", error: `rcode ${rcode}, expected ${want.rcode}` };
  }
  if (want.absent) {
    if (rcode !== "NOERROR" && rcode !== "NXDOMAIN") {
      return { status: "pending", error: `${rcode} from ${from}` };
    }
    return records.length === 0
      ? { status: "satisfied", detail: none }
      : { status: "pending", error: `still resolves: ${listRecords(t, records)}` };
  }
  if (want.rcode === undefined && rcode !== "NOERROR") {
    return { status: "pending", error: rcode === "NXDOMAIN" ? none : `${rcode} from ${from}` };
  }
  if (records.length < want.minCount) {
    if (records.length === 0) return { status: "pending", error: none };
    return {
      status: "pending",
      error: `${records.length} ${t} record${
        records.length === 1 ? "" : "s"
      }, expected at least ${want.minCount}: ${listRecords(t, records)}`,
    };
  }
  const missing = want.equals.filter((v) => {
    const key = normValue(t, v);
    return !records.some((r) => r.keys.includes(key));
  });
  if (missing.length > 0) {
    const got = records.length === 0 ? "none" : listRecords(t, records);
    return {
      status: "pending",
      error: `${t} records do not include ${missing.join(", ")} (got ${got})`,
    };
  }
  if (want.contains !== undefined) {
    const needle = want.contains.toLowerCase();
    if (!records.some((r) => r.text.toLowerCase().includes(needle))) {
      const got = records.length === 0 ? "none" : listRecords(t, records);
      return {
        status: "pending",
        error: `no ${t} record contains ${JSON.stringify(want.contains)} (got ${got})`,
      };
    }
  }
  if (records.length === 0) return { status: "satisfied", detail: want.rcode ?? rcode };
  const list = listRecords(t, records);
  return { status: "satisfied", detail: want.rcode ? `${want.rcode}, ${list}` : list };
}
