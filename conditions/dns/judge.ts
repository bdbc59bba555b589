/**
 * Judging a dns answer against what the condition requires: enough records,
 * the --equals values, --contains, --absent and --rcode. Pure, so it is
 * tested without servers.
 *
 * @module
 */

import { clip } from "../../engine/masking.ts";
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
  /** Texts every one of which some record must include (case-insensitive); empty: none. */
  readonly contains: readonly string[];
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

/**
 * Whether record `r` has --equals value `v`: compared as the queried type's value, or, for
 * an ANY answer's record, also as a value of the record's own type (`10.0.0.5` finds an A).
 */
function hasValue(r: Rec, type: RecordType, v: string): boolean {
  if (r.keys.includes(normValue(type, v))) return true;
  if (r.caseless && r.keys.includes(v.trim().replace(/\s+/g, " ").toLowerCase())) return true;
  const own = r.type as RecordType | undefined;
  return own !== undefined && own !== type && r.keys.includes(normValue(own, v));
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
  const missing = want.equals.filter((v) => !records.some((r) => hasValue(r, t, v)));
  if (missing.length > 0) {
    const got = records.length === 0 ? "none" : listRecords(t, records);
    return {
      status: "pending",
      error: `${t} records do not include ${missing.join(", ")} (got ${got})`,
    };
  }
  const lower = records.map((r) => r.text.toLowerCase());
  const absentTexts = want.contains.filter((c) => {
    const needle = c.toLowerCase();
    return !lower.some((text) => text.includes(needle));
  });
  if (absentTexts.length > 0) {
    const got = records.length === 0 ? "none" : listRecords(t, records);
    return {
      status: "pending",
      error: `no ${t} record contains ${
        absentTexts.map((c) => JSON.stringify(c)).join(", ")
      } (got ${got})`,
    };
  }
  if (records.length === 0) return { status: "satisfied", detail: want.rcode ?? rcode };
  const list = listRecords(t, records);
  return { status: "satisfied", detail: want.rcode ? `${want.rcode}, ${list}` : list };
}
