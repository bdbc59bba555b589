/**
 * YAML a user hands over (recipes; Kubernetes manifests), read into plain
 * values, bounded, and off the main thread when large:
 *
 * - What the `yaml` package throws while it builds a value (an alias bomb:
 *   `Excessive alias count indicates a resource exhaustion attack`; nesting
 *   deeper than the stack) becomes one short reason, for a usage error
 *   (docs/contract.md §1, recipes).
 * - A text longer than {@link INLINE_YAML_MAX} is read in a worker
 *   (engine/yaml_worker.ts) that a signal terminates: composing a document
 *   is one call of the package, seconds for a recipe of 30,000 conditions or
 *   a manifest of 4 MiB on a busy machine, and it must hold no signal
 *   (docs/contract.md §3). A shorter one is read here, in milliseconds.
 *
 * @module
 */

import type { Document } from "yaml";
import { commonJsExports } from "./commonjs.ts";
import { Pacer, Stopped } from "./pace.ts";
import { fromPieces, type Pieces } from "./pieces.ts";
import { runOnce } from "./workers.ts";

/** Why a document has no value we can use, as one short lower-case text. */
export class YamlValueError extends Error {
  override name = "YamlValueError";
}

/**
 * Aliases resolved per document at most (the package's own default): a billion-laughs
 * document of a few hundred bytes would otherwise expand to gigabytes.
 */
const MAX_ALIAS_COUNT = 100;

/** The longest text read on the calling thread; longer ones are read in a worker. */
export const INLINE_YAML_MAX = 32 * 1024;

/** The value of `doc` (`toJS`); throws a `YamlValueError` saying why it has none. */
export function documentValue(doc: Document.Parsed | Document): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    const text = e instanceof Error ? e.message : String(e);
    if (/alias count/i.test(text)) {
      throw new YamlValueError("its aliases expand too far (an alias bomb?)");
    }
    if (e instanceof RangeError) throw new YamlValueError("it is nested too deeply");
    throw new YamlValueError(text.charAt(0).toLowerCase() + text.slice(1).split("\n")[0]);
  }
}

/**
 * Where a node of a document stands: its line (1-based), and for a mapping its values' trees
 * by key, for a sequence its items'. A scalar is its bare line: a recipe of 30,000 conditions
 * crosses from the worker with a few objects per condition, not one per node.
 */
export type LineTree =
  | number
  | readonly [number, Readonly<Record<string, LineTree>>]
  | readonly [number, readonly (LineTree | null)[]];

/** One document of a text, as plain data (it crosses from the worker by structured clone). */
export interface YamlDocument {
  /** The line where it starts. */
  readonly line: number;
  /** Its first parse error: the package's message and the line it names. */
  readonly error?: { readonly message: string; readonly line: number };
  /** Why it has no value (a `YamlValueError`'s text), when it parsed but has none. */
  readonly valueError?: string;
  /** Its value; null for an empty document. */
  readonly value?: unknown;
  /** Whether it held nothing but blanks and comments. */
  readonly empty: boolean;
  /** Where its nodes stand, when asked for (`lines`). */
  readonly lines?: LineTree;
}

/** How a text is read. */
export interface YamlOptions {
  /** Every document of a stream (a manifest), or one (a recipe: a second one is an error). */
  readonly all: boolean;
  /** A mapping's keys must differ (recipes). */
  readonly uniqueKeys?: boolean;
  /** Give each document's {@link LineTree} (recipes, whose errors name a line). */
  readonly lines?: boolean;
}

/** What {@link documentsOf} needs of the `yaml` package. */
type YamlLibrary = Pick<
  typeof import("yaml"),
  "LineCounter" | "parseDocument" | "Composer" | "Parser" | "isMap" | "isSeq" | "isScalar"
>;

/** The documents of `text`, read on this thread (the worker's work, and short texts'). */
export function documentsOf(yaml: YamlLibrary, text: string, opts: YamlOptions): YamlDocument[] {
  const counter = new yaml.LineCounter();
  // A stream is composed one document at a time, each turned into plain values before the next:
  // `parseAllDocuments` keeps every document's syntax tree until the last is read (130 MB for a
  // manifest of 10,000 objects; docs/reliability.md, large manifests).
  // The package's own check of unique keys compares each key with every key before it in its
  // mapping (O(n²): minutes for a mapping of 60,000 keys); ours is one `Set` a mapping.
  const docs = opts.all
    ? new yaml.Composer({ uniqueKeys: false }).compose(
      new yaml.Parser(counter.addNewLine).parse(text),
    )
    : [yaml.parseDocument(text, { lineCounter: counter, uniqueKeys: false })];
  const lineOf = (offset: number) => counter.linePos(offset).line;
  return Array.from(docs, (doc): YamlDocument => {
    const line = lineOf(doc.range[0]);
    const empty = doc.contents === null;
    // Unique keys unless told otherwise, as the package's default is.
    const duplicate = opts.uniqueKeys === false ? undefined : firstDuplicateKey(yaml, doc.contents);
    const e = doc.errors[0];
    if (duplicate !== undefined && (e === undefined || duplicate < e.pos[0])) {
      return { line, empty, error: { message: DUPLICATE_KEY, line: lineOf(duplicate) } };
    }
    if (e !== undefined) {
      return { line, empty, error: { message: e.message, line: lineOf(e.pos[0]) } };
    }
    let value: unknown;
    try {
      value = documentValue(doc);
    } catch (e) {
      if (!(e instanceof YamlValueError)) throw e;
      return { line, empty, valueError: e.message };
    }
    if (!opts.lines) return { line, empty, value };
    return { line, empty, value, lines: lineTree(yaml, doc.contents, lineOf) ?? undefined };
  });
}

/** The package's own text for a key that repeats one before it in its mapping. */
export const DUPLICATE_KEY = "Map keys must be unique";

/**
 * Where the first key that repeats one before it in its mapping starts (a text offset), or
 * undefined when none does: the first in the text, as the package reports them (a key, then
 * its value). Keys are equal as the package's check has them: the same node, or scalars of the
 * same value (`===`: NaN is no duplicate of itself). Linear, and without recursion (a document
 * nested deeper than the stack is the package's to refuse).
 */
export function firstDuplicateKey(
  yaml: Pick<YamlLibrary, "isMap" | "isSeq" | "isScalar">,
  root: unknown,
): number | undefined {
  let first: number | undefined;
  const todo: unknown[] = [root];
  while (todo.length > 0) {
    const node = todo.pop();
    if (yaml.isSeq(node)) {
      for (const item of node.items) todo.push(item);
    } else if (yaml.isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = pair.key;
        const value = yaml.isScalar(key) ? key.value : key;
        if (seen.has(value) && !Number.isNaN(value)) {
          const at = keyOffset(key);
          if (first === undefined || at < first) first = at;
        }
        seen.add(value);
        todo.push(key, pair.value);
      }
    }
  }
  return first;
}

/** Where a key node starts (0 for a key without a range: none the parser makes). */
function keyOffset(key: unknown): number {
  return (key as { range?: number[] } | null)?.range?.[0] ?? 0;
}

/** The {@link LineTree} of `node` (a node of the package's document); null for none. */
function lineTree(
  yaml: YamlLibrary,
  node: unknown,
  lineOf: (offset: number) => number,
): LineTree | null {
  const range = (node as { range?: number[] } | null)?.range;
  if (range === undefined) return null;
  const l = lineOf(range[0]!);
  if (yaml.isMap(node)) {
    const k: Record<string, LineTree> = Object.create(null);
    for (const pair of node.items) {
      const key = yaml.isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const t = lineTree(yaml, pair.value, lineOf);
      if (t !== null) k[key] = t;
    }
    return [l, k];
  }
  if (yaml.isSeq(node)) return [l, node.items.map((n) => lineTree(yaml, n, lineOf))];
  return l;
}

/** The line of the node at `path` in `tree`, if there is one. */
export function lineAt(
  tree: LineTree | undefined,
  path: readonly (string | number)[],
): number | undefined {
  let t: LineTree | null | undefined = tree;
  for (const p of path) {
    if (t == null || typeof t === "number") return undefined;
    const members: Readonly<Record<string, LineTree>> | readonly (LineTree | null)[] = t[1];
    t = Array.isArray(members)
      ? (typeof p === "number" ? members[p] : undefined)
      : Object.hasOwn(members, p)
      ? (members as Readonly<Record<string, LineTree>>)[p]
      : undefined;
  }
  if (t == null) return undefined;
  return typeof t === "number" ? t : t[0];
}

/**
 * The documents of `text`: read here when it is short, else in a worker, which `signal`
 * terminates (the promise then rejects with a `Stopped`).
 */
export async function readYaml(
  text: string,
  opts: YamlOptions,
  signal?: AbortSignal,
): Promise<YamlDocument[]> {
  if (signal?.aborted) throw new Stopped(signal.reason);
  if (text.length <= INLINE_YAML_MAX) {
    return documentsOf(commonJsExports(await import("yaml")), text, opts);
  }
  const reply = await runOnce<YamlReply>(
    "yaml",
    { text, opts } satisfies YamlJob,
    "YAML",
    signal,
    (reason) => new Stopped(reason),
  );
  if ("fault" in reply) throw new RangeError(reply.fault);
  // Rebuilt in slices: one structured clone of it would hold the main thread (engine/pieces.ts).
  return await fromPieces(reply.docs, new Pacer(signal)) as YamlDocument[];
}

/** A request to the YAML worker. */
export interface YamlJob {
  readonly text: string;
  readonly opts: YamlOptions;
}

/**
 * The YAML worker's answer: the documents (`YamlDocument[]`) in pieces, or what the package
 * threw (the stack's end).
 */
export type YamlReply = { readonly docs: Pieces } | { readonly fault: string };
