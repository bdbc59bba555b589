/**
 * Reading what S3 answered (pure): metadata matches and object facts.
 *
 * @module
 */

import { formatSize } from "../_common/bytes.ts";

/** What a successful HEAD/GET told us about an object. */
export interface ObjectFacts {
  readonly size: number | undefined;
  readonly etag: string | undefined;
  /** As the SDK returns them: lower-cased names without `x-amz-meta-`. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** The metadata mismatches, as a text; undefined when every wanted NAME, VALUE pair matches. */
export function metadataMismatch(
  want: Iterable<readonly [string, string]>,
  have: Readonly<Record<string, string>>,
): string | undefined {
  const lower = new Map(Object.entries(have).map(([k, v]) => [k.toLowerCase(), v]));
  const bad: string[] = [];
  for (const [name, value] of want) {
    const got = lower.get(name);
    if (got === undefined) bad.push(`metadata ${name} is not set, want ${JSON.stringify(value)}`);
    else if (got !== value) {
      bad.push(`metadata ${name} is ${JSON.stringify(got)}, want ${JSON.stringify(value)}`);
    }
  }
  return bad.length ? bad.join("; ") : undefined;
}

/** `object 1.2 KiB, etag "…"`. */
export function describeObject(f: ObjectFacts): string {
  const parts = [`object ${f.size === undefined ? "of unknown size" : formatSize(f.size)}`];
  if (f.etag) parts.push(`etag ${f.etag}`);
  return parts.join(", ");
}

/** The total size from `Content-Range: bytes 0-4/11`. */
export function totalFromContentRange(range: string | undefined): number | undefined {
  const m = /\/(\d+)\s*$/.exec(range ?? "");
  return m ? Number(m[1]) : undefined;
}
