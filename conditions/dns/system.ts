/**
 * The dns kind's system resolver: getaddrinfo for A/AAAA (so /etc/hosts
 * counts), `Deno.resolveDns` with the system's resolv.conf for the other
 * types. It cannot tell NXDOMAIN from NODATA: no records reads NXDOMAIN.
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import type { Lookup } from "./judge.ts";
import { makeRecord, type Rec, type RecordType } from "./records.ts";

/** Looks `name` up through the OS. Throws when the resolver fails (not when the name is unknown). */
export async function lookupSystem(
  name: string,
  type: RecordType,
  signal: AbortSignal,
): Promise<Lookup> {
  if (type === "A" || type === "AAAA") {
    const { promises } = await import("node:dns");
    try {
      const list = await promises.lookup(name, { all: true, family: type === "A" ? 4 : 6 });
      const seen = new Set<string>();
      const records: Rec[] = [];
      for (const a of list) {
        const r = makeRecord(type, a.address);
        if (!seen.has(r.text)) records.push(r);
        seen.add(r.text);
      }
      return { rcode: "NOERROR", records };
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "ENOTFOUND" || code === "ENODATA" || code === "EAI_NODATA") {
        return { rcode: "NXDOMAIN", records: [] };
      }
      if (code === "EAI_AGAIN" || code === "ESERVFAIL") {
        throw new Error(`temporary resolver failure (${code})`);
      }
      throw new Error(describeError(e));
    }
  }
  try {
    const answers = await Deno.resolveDns(name, type as Deno.RecordType, { signal });
    return { rcode: "NOERROR", records: answers.map((a) => makeRecord(type, a)) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { rcode: "NXDOMAIN", records: [] };
    throw new Error(describeError(e).replace(/^proto error: /, ""));
  }
}
