/**
 * A large plain value sent from a worker to the main thread in pieces: the
 * main thread rebuilds it in slices with turns of the event loop between
 * them, so receiving it holds no signal (docs/contract.md §3). One
 * structured clone of a recipe of 30,000 conditions takes the main thread
 * 0.3 s on a busy machine; one `JSON.parse` of it about half that. Here,
 * arrays and objects with more than {@link PIECE_ITEMS} members travel as
 * separate JSON texts of that many members each, parsed one per slice.
 *
 * What JSON cannot hold and a YAML value can (`.inf`, `.nan`) is sent as a
 * marker too. The marker is a key no value holds: a random token per call.
 *
 * @module
 */

import type { Pacer } from "./pace.ts";

/** Members of an array or object sent in one piece at most. */
export const PIECE_ITEMS = 256;

/** A value as pieces: its JSON text (large members replaced by markers) and theirs. */
export interface Pieces {
  readonly token: string;
  readonly root: string;
  readonly pieces: readonly string[];
}

/** What a marker stands for: an array's pieces, an object's (entries), or a number. */
type Marker = { readonly a: readonly number[] } | { readonly o: readonly number[] } | {
  readonly n: "Infinity" | "-Infinity" | "NaN";
};

/** `value` (plain data: what a YAML document's `toJS` makes) as pieces. */
export function toPieces(value: unknown): Pieces {
  const token = `\u0000waitcmd:${crypto.randomUUID()}`;
  const pieces: string[] = [];
  const split = (members: unknown[]): number[] => {
    const ids: number[] = [];
    for (let i = 0; i < members.length; i += PIECE_ITEMS) {
      ids.push(pieces.length);
      pieces.push(""); // its place, kept in order
      pieces[ids.at(-1)!] = JSON.stringify(members.slice(i, i + PIECE_ITEMS), replacer);
    }
    return ids;
  };
  /** The markers made here, and what they hold: written as they are. */
  const made = new WeakSet<object>();
  const mark = (m: Marker): Record<string, Marker> => {
    const outer = { [token]: m };
    made.add(outer).add(m);
    return outer;
  };
  function replacer(this: unknown, _key: string, v: unknown): unknown {
    if (made.has(this as object)) return v;
    if (typeof v === "number" && !Number.isFinite(v)) {
      return mark({ n: String(v) as "Infinity" | "-Infinity" | "NaN" });
    }
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.length > PIECE_ITEMS ? mark({ a: split(v) }) : v;
    let n = 0;
    for (const _ in v) if (++n > PIECE_ITEMS) break;
    return n > PIECE_ITEMS ? mark({ o: split(Object.entries(v)) }) : v;
  }
  const root = JSON.stringify({ v: value }, replacer);
  return { token, root, pieces };
}

/** The value `toPieces` cut, rebuilt with a turn of the event loop between slices. */
export async function fromPieces(p: Pieces, pacer: Pacer): Promise<unknown> {
  const parse = async (text: string): Promise<unknown> => {
    await pacer.step();
    return await resolve(JSON.parse(text));
  };
  const marker = (v: object): Marker | undefined => {
    const keys = Object.keys(v);
    return keys.length === 1 && keys[0] === p.token
      ? (v as Record<string, Marker>)[p.token]
      : undefined;
  };
  const resolve = async (v: unknown): Promise<unknown> => {
    if (v === null || typeof v !== "object") return v;
    await pacer.step();
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = await resolve(v[i]);
      return v;
    }
    const m = marker(v);
    if (m === undefined) {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) o[k] = await resolve(o[k]);
      return o;
    }
    if ("n" in m) return Number(m.n);
    const parts: unknown[] = [];
    for (const id of "a" in m ? m.a : m.o) {
      for (const x of await parse(p.pieces[id]!) as unknown[]) parts.push(x);
    }
    if ("a" in m) return parts;
    const o: Record<string, unknown> = {};
    // Defined, not assigned: a key "__proto__" is a key like any other here, as JSON.parse has it.
    for (const [k, x] of parts as [string, unknown][]) {
      Object.defineProperty(o, k, {
        value: x,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return o;
  };
  return ((await parse(p.root)) as { v: unknown }).v;
}
