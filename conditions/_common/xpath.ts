/**
 * `--xpath EXPR` (http's): XPath 1.0 expressions (the `xpath` library) on a
 * document parsed as HTML or XML (`xdom.ts`). An expression holds when it
 * gives a non-empty node set or `true` (docs/contract.md §5 http). Each is
 * checked in the kind's `validate`: a syntax error, an unknown function, a
 * variable, or a result that is a number or a string (never a node set nor
 * `true`) is a usage error before any request. A large document is parsed
 * and searched in a worker (`xpath_worker.ts`), ended when the attempt is,
 * so that the deadline and signals are never held by it (docs/contract.md
 * §9). The library and the parsers are imported on first use only.
 *
 * @module
 */

import { clip, type SecretRegistry } from "../../engine/masking.ts";
import type { Fail } from "../../engine/types.ts";
import { runOnce } from "../../engine/workers.ts";
import { memoize } from "./memo.ts";
import { parseBody, XDocument, XmlSyntaxError, type XNode } from "./xdom.ts";

/** Most characters of a node's text a detail shows. */
const SHOWN = 60;

/** A value of the `xpath` library: one of its node-set, boolean, number and string classes. */
interface XValue {
  toArray(): XNode[];
  booleanValue(): boolean;
}

/** What an evaluation is given. */
interface EvalOptions {
  node: XNode;
  isHtml?: boolean;
  allowAnyNamespaceForNoPrefix?: boolean;
  namespaces?: (prefix: string) => string | undefined;
}

/** The part of the `xpath` library used here (its typings leave `parse` out). */
interface XPathLib {
  parse(expr: string): { evaluate(options: EvalOptions): XValue; expression: unknown };
}

/** XPath 1.0's functions and how many arguments each takes (at least, at most). */
const FUNCTIONS: ReadonlyMap<string, readonly [number, number]> = new Map([
  ["last", [0, 0]],
  ["position", [0, 0]],
  ["count", [1, 1]],
  ["id", [1, 1]],
  ["local-name", [0, 1]],
  ["namespace-uri", [0, 1]],
  ["name", [0, 1]],
  ["string", [0, 1]],
  ["concat", [2, Infinity]],
  ["starts-with", [2, 2]],
  ["contains", [2, 2]],
  ["substring-before", [2, 2]],
  ["substring-after", [2, 2]],
  ["substring", [2, 3]],
  ["string-length", [0, 1]],
  ["normalize-space", [0, 1]],
  ["translate", [3, 3]],
  ["boolean", [1, 1]],
  ["not", [1, 1]],
  ["true", [0, 0]],
  ["false", [0, 0]],
  ["lang", [1, 1]],
  ["number", [0, 1]],
  ["sum", [1, 1]],
  ["floor", [1, 1]],
  ["ceiling", [1, 1]],
  ["round", [1, 1]],
]);

/**
 * What the parsed tree holds that no document can make work: a variable (there is no way to
 * give one), a function XPath 1.0 does not have, a call with the wrong number of arguments.
 * A predicate is only evaluated on nodes, so evaluating on an empty document cannot find them.
 */
function treeProblem(tree: unknown): string | undefined {
  const seen = new Set<unknown>();
  const stack: unknown[] = [tree];
  while (stack.length > 0) {
    const n = stack.pop();
    if (typeof n !== "object" || n === null || seen.has(n)) continue;
    seen.add(n);
    const node = n as { variable?: unknown; functionName?: unknown; arguments?: unknown };
    if (typeof node.variable === "string") return `variables are not supported ($${node.variable})`;
    if (typeof node.functionName === "string") {
      const arity = FUNCTIONS.get(node.functionName);
      if (arity === undefined) return `unknown function ${node.functionName}()`;
      const given = Array.isArray(node.arguments) ? node.arguments.length : 0;
      if (given < arity[0] || given > arity[1]) {
        const want = arity[0] === arity[1]
          ? `${arity[0]}`
          : arity[1] === Infinity
          ? `at least ${arity[0]}`
          : `${arity[0]} to ${arity[1]}`;
        return `${node.functionName}() takes ${want} argument${
          want === "1" ? "" : "s"
        }, got ${given}`;
      }
    }
    for (const v of Object.values(n)) stack.push(v);
  }
  return undefined;
}

/** The result types of XPath 1.0. */
type XType = "node set" | "boolean" | "number" | "string";

/** The library and the prototype of each of its result classes (names do not survive minifying). */
interface Loaded {
  readonly lib: XPathLib;
  readonly protos: ReadonlyMap<unknown, XType>;
}

const library = memoize<Loaded>(async () => {
  const lib = (await import("./xpath_lib.js")).default as XPathLib;
  const empty = new XDocument("XML");
  const proto = (e: string) => Object.getPrototypeOf(lib.parse(e).evaluate({ node: empty }));
  linearNodeSets(proto("/"));
  return {
    lib,
    protos: new Map<unknown, XType>([
      [proto("/"), "node set"],
      [proto("true()"), "boolean"],
      [proto("1"), "number"],
      [proto("'a'"), "string"],
    ]),
  };
});

/** The fields of the library's node set that its `add` uses. */
interface NodeSetFields {
  tree: unknown;
  nodes: XNode[];
  size: number;
}

/**
 * Makes the library's node sets add a node in constant time. Its own `add` looks for the node
 * in the whole set first, which makes every location step quadratic in the nodes it selects:
 * `//div` on a page of 100,000 elements took seconds of the main thread, where the timeout runs
 * too. The same rule (a node is in a set once, in the order added) with a `Set` beside the
 * array; the set's other methods read only the array.
 */
function linearNodeSets(nodeSet: { add: (n: XNode) => void }): void {
  const members = new WeakMap<NodeSetFields, Set<XNode>>();
  nodeSet.add = function (this: NodeSetFields, n: XNode) {
    let seen = members.get(this);
    if (seen === undefined) {
      seen = new Set(this.nodes);
      members.set(this, seen);
    }
    if (seen.has(n)) return;
    seen.add(n);
    this.tree = null;
    this.nodes.push(n);
    this.size += 1;
  };
}

/** The type of `value`. */
function typeOf(loaded: Loaded, value: XValue): XType {
  return loaded.protos.get(Object.getPrototypeOf(value)) ?? "string";
}

/** The library's message for why `expr` failed, in words for the user. */
function reason(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  if (e instanceof RangeError) return "the document is nested too deeply to evaluate it";
  const qname = /^Cannot resolve QName (.+)$/.exec(text);
  if (qname) return `the namespace prefix ${qname[1]} is not declared`;
  return text;
}

// ------------------------------------------------------------------ validation

/**
 * What is wrong with `expr` as an `--xpath`, else undefined: its syntax,
 * its functions and variables, and its result type, found by evaluating it
 * on an empty document (XPath 1.0's result type does not depend on the
 * document).
 */
export async function xpathProblem(expr: string): Promise<string | undefined> {
  const loaded = await library.get();
  let value: XValue;
  try {
    const parsed = loaded.lib.parse(expr);
    const problem = treeProblem(parsed.expression);
    if (problem !== undefined) {
      return `invalid XPath 1.0 expression ${JSON.stringify(expr)}: ${problem}`;
    }
    value = parsed.evaluate({
      node: new XDocument("XML"),
      allowAnyNamespaceForNoPrefix: true,
    });
  } catch (e) {
    return `invalid XPath 1.0 expression ${JSON.stringify(expr)}: ${reason(e)}`;
  }
  const type = typeOf(loaded, value);
  if (type === "number") {
    return `${
      JSON.stringify(expr)
    } gives a number, never a node set or true: compare it, like count(//li) > 2`;
  }
  if (type === "string") {
    return `${
      JSON.stringify(expr)
    } gives a string, never a node set or true: compare it, like string(//title) = 'Ready'`;
  }
  return undefined;
}

/** A kind's `validate` of its `--xpath` expressions: the first problem is a usage error. */
export async function validateXPaths(
  exprs: readonly string[],
  fail: Fail,
  flag = "xpath",
): Promise<void> {
  for (const expr of exprs) {
    const problem = await xpathProblem(expr);
    if (problem !== undefined) fail(flag, problem);
  }
}

// ------------------------------------------------------------------ evaluation

/** What one expression found: how many nodes and the first one's text; `count` -1 for `true`. */
export interface XPathFound {
  readonly expr: string;
  readonly count: number;
  readonly first: string;
}

/** The outcome of the expressions on one document, as plain data (it crosses to a worker). */
export type XPathRaw =
  | { readonly ok: true; readonly found: readonly XPathFound[] }
  | { readonly ok: false; readonly error: string };

/** The outcome of the `--xpath` checks on one body, in the words of `detail`. */
export type XPathOutcome =
  | { readonly ok: true; readonly details: string[]; readonly value: string }
  | { readonly ok: false; readonly error: string };

/** Most characters of a body parsed and searched on the main thread; a longer one goes to a worker. */
export const INLINE_TEXT = 64 << 10;

/** A node's XPath string value: an element's or the document's text, an attribute's value. */
export function stringValue(node: XNode): string {
  if (node.nodeType !== 1 && node.nodeType !== 9) return node.nodeValue ?? "";
  let out = "";
  // Iterative: a deeply nested document must not overflow the stack here.
  const stack: XNode[] = [...node.childNodes].reverse();
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    if (n.nodeType === 3) out += n.nodeValue ?? "";
    else if (n.nodeType === 1) {
      for (let i = n.childNodes.length - 1; i >= 0; i--) stack.push(n.childNodes[i]!);
    }
  }
  return out;
}

/**
 * Parses `text` as the Content-Type says (`xdom.ts`) and evaluates every
 * expression on it, on this thread. All must hold; the first that does not
 * is the error (`where` ends it: the status line and the body's size).
 */
export async function evaluateXPaths(
  exprs: readonly string[],
  text: string,
  contentType: string | undefined,
  where: string,
): Promise<XPathRaw> {
  const loaded = await library.get();
  let doc: XDocument;
  try {
    doc = await parseBody(text, contentType);
  } catch (e) {
    if (e instanceof XmlSyntaxError) {
      return { ok: false, error: `body is not well-formed XML: ${e.message} (${where})` };
    }
    throw e;
  }
  const options: EvalOptions = {
    node: doc,
    // HTML: names in any case, any namespace (browsers' HTML DOM); XML: an unprefixed name
    // matches in the default namespace too, a prefix is the document's (docs/contract.md §5).
    isHtml: doc.format === "HTML",
    allowAnyNamespaceForNoPrefix: true,
    namespaces: (prefix) => doc.prefixes.get(prefix),
  };
  const found: XPathFound[] = [];
  for (const expr of exprs) {
    let result: XValue;
    try {
      result = loaded.lib.parse(expr).evaluate(options);
    } catch (e) {
      return { ok: false, error: `xpath ${expr} failed on the ${doc.format} body: ${reason(e)}` };
    }
    if (typeOf(loaded, result) === "node set") {
      const nodes = result.toArray();
      if (nodes.length === 0) {
        return {
          ok: false,
          error: `xpath ${expr} found no node in the ${doc.format} body (${where})`,
        };
      }
      found.push({ expr, count: nodes.length, first: stringValue(nodes[0]!) });
    } else if (result.booleanValue()) {
      found.push({ expr, count: -1, first: "true" });
    } else {
      return { ok: false, error: `xpath ${expr} is false on the ${doc.format} body (${where})` };
    }
  }
  return { ok: true, found };
}

/** The same in a worker, ended when `signal` aborts. */
async function inWorker(
  job: { exprs: readonly string[]; text: string; contentType: string | undefined; where: string },
  signal: AbortSignal,
): Promise<XPathRaw> {
  const reply = await runOnce<XPathRaw | { readonly failed: string }>(
    "xpath",
    job,
    "xpath",
    signal,
  );
  if ("failed" in reply) throw new Error(reply.failed);
  return reply;
}

/**
 * Evaluates every expression on `text` (at most http's body budget,
 * already cut): on this thread when it is short, else in a worker. The
 * details show each node set's size and its first node's text (cut, secrets
 * masked); the value is the text of the last expression's first node, or
 * `true`.
 */
export async function judgeXPaths(
  exprs: readonly string[],
  text: string,
  contentType: string | undefined,
  where: string,
  signal: AbortSignal,
  secrets?: SecretRegistry,
): Promise<XPathOutcome> {
  const raw = text.length <= INLINE_TEXT
    ? await evaluateXPaths(exprs, text, contentType, where)
    : await inWorker({ exprs, text, contentType, where }, signal);
  if (!raw.ok) return raw;
  const details = raw.found.map((f) => {
    if (f.count < 0) return `xpath ${f.expr} is true`;
    const shown = JSON.stringify(clip(f.first.trim(), SHOWN, secrets));
    return `xpath ${f.expr} found ${f.count} node${f.count === 1 ? "" : "s"} (first: ${shown})`;
  });
  return { ok: true, details, value: raw.found.at(-1)?.first ?? "true" };
}
