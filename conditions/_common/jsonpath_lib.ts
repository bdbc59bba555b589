/**
 * The `--jsonpath` expressions of `jsonpath.ts`, with the library:
 * `jsonpath-plus` checks the filters and scripts of their paths (in a kind's
 * `validate`, docs/contract.md §2) with its own expression parser, and
 * evaluates the paths against documents. The library is imported on first
 * use only, so loading this module costs nothing.
 *
 * @module
 */

import { clip, type SecretRegistry } from "../../engine/masking.ts";
import type { Fail } from "../../engine/types.ts";
import { type JsonPathExpr, type JsonPathLeaf, type JsonPathNode, leavesOf } from "./jsonpath.ts";
import { memoize } from "./memo.ts";
import { compileRegex, re2Problem, testText } from "./regex.ts";

type JsonPathModule = typeof import("jsonpath-plus");
type RunPath = (opts: { path: string; json: unknown; wrap: true }) => unknown[];

/** A node of the AST of jsonpath-plus' expression parser (jsep). */
interface ScriptNode {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** jsonpath-plus' safe script: parsing its code (in the constructor) is the syntax check. */
type SafeScript = new (code: string) => { readonly ast: ScriptNode };

const library = memoize<JsonPathModule>(() => import("jsonpath-plus"));

// ------------------------------------------------------------------ validation

/**
 * A kind's `validate` of its `--jsonpath` expressions: the first whose
 * filters or scripts the library rejects is a usage error at `flag`.
 */
export async function validateJsonPaths(
  exprs: readonly JsonPathExpr[],
  fail: Fail,
  flag = "jsonpath",
): Promise<void> {
  for (const expr of exprs) {
    const problem = await jsonPathProblem(expr);
    if (problem !== undefined) fail(flag, problem);
  }
}

/** What the library finds wrong with an expression's filters and scripts, else undefined. */
export async function jsonPathProblem(expr: JsonPathExpr): Promise<string | undefined> {
  const { JSONPath, JSONPathClass } = await library.get();
  const Script = (JSONPathClass.prototype as unknown as { safeVm: { Script: SafeScript } })
    .safeVm.Script;
  for (const leaf of leavesOf(expr.root)) {
    if (leaf.regex) {
      const why = re2Problem(leaf.regex.source, leaf.regex.flags);
      if (why !== undefined) return `=~ /${leaf.regex.source}/: ${why}`;
    }
    // The library's own split of the path, so what is checked is what it runs.
    for (const segment of JSONPath.toPathArray(leaf.path)) {
      const filter = /^\?\((.*)\)$/s.exec(segment);
      const script = filter ? undefined : /^\((.*)\)$/s.exec(segment);
      const code = filter?.[1] ?? script?.[1];
      // A nested filter (`?(@.a[?(@.b)])`) is matched by the library itself, not parsed.
      if (code === undefined || /\[\??\(/.test(code)) continue;
      const why = scriptProblem(code, Script);
      if (why !== undefined) {
        const what = filter ? "filter" : "script";
        return `bad path ${JSON.stringify(cut(leaf.display))}: bad ${what} (${code}): ${why}`;
      }
    }
  }
  return undefined;
}

/** `@`, `@root`, `@parent`, ... as the library rewrites them before parsing (texts kept). */
const AT_FORMS =
  /('(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")|@(?:(parentProperty|parent|property|root|path)|(?![\w$]))/g;

function asLibraryCode(code: string): string {
  return code.replace(
    AT_FORMS,
    (_m, text: string | undefined, name: string | undefined) => text ?? `_$_${name ?? "v"}`,
  );
}

/** Names a filter may use: `@` (and its forms) and the root `$`. */
const KNOWN_NAMES = /^(_\$_(v|parentProperty|parent|property|root|path)|\$)$/;

/** Parses `code` with the library; undefined when it is a single expression the library evaluates. */
function scriptProblem(code: string, Script: SafeScript): string | undefined {
  let ast: ScriptNode;
  try {
    ast = new Script(asLibraryCode(code)).ast;
  } catch (e) {
    return parseErrorText(e, asLibraryCode(code).length);
  }
  return nodeProblem(ast, code, Script);
}

/** A parse error of jsep as the short reason. */
function parseErrorText(e: unknown, length: number): string {
  const err = e as { description?: unknown; index?: unknown; message?: unknown };
  const what = String(err.description ?? err.message ?? e);
  if (/^Expected expression after/.test(what) && Number(err.index) >= length) {
    return "it ends with an operator";
  }
  if (/^Unclosed \(/.test(what)) return 'unbalanced "("';
  if (/^Unexpected "\)"/.test(what)) return 'unbalanced ")"';
  if (/^Unclosed quote/.test(what)) return "unterminated text";
  const text = what.replace(/_\$_v\b/g, "@").replace(/_\$_(\w+)/g, "@$1");
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** Walks the AST: one expression, over `@`, `$`, literals, operators, members and calls. */
function nodeProblem(node: ScriptNode, code: string, Script: SafeScript): string | undefined {
  switch (node.type) {
    case "Literal":
      return undefined;
    case "Identifier": {
      const name = String(node.name);
      return KNOWN_NAMES.test(name) ? undefined : unknownName(name, code);
    }
    case "ThisExpression":
      return unknownName("this", code);
    case "MemberExpression":
      return nodeProblem(node.object as ScriptNode, code, Script) ??
        (node.computed ? nodeProblem(node.property as ScriptNode, code, Script) : undefined);
    case "CallExpression":
      return nodeProblem(node.callee as ScriptNode, code, Script) ??
        childrenProblem(node.arguments, code, Script);
    case "ArrayExpression":
      return childrenProblem(node.elements, code, Script);
    case "UnaryExpression":
      return nodeProblem(node.argument as ScriptNode, code, Script);
    case "BinaryExpression":
    case "LogicalExpression":
      return childrenProblem([node.left, node.right], code, Script);
    case "ConditionalExpression":
      return childrenProblem([node.test, node.consequent, node.alternate], code, Script);
    default:
      // Two expressions side by side (`@.a ~ 1`, `@.a; @.b`) or an assignment (`@.a = 1`).
      return `expected an operator at ${JSON.stringify(cut(restAfterFirst(code, Script)))}`;
  }
}

function childrenProblem(list: unknown, code: string, Script: SafeScript): string | undefined {
  for (const child of (list ?? []) as (ScriptNode | null)[]) {
    const why = child ? nodeProblem(child, code, Script) : undefined;
    if (why !== undefined) return why;
  }
  return undefined;
}

function unknownName(name: string, code: string): string {
  const at = new RegExp(`(?<![\\w$.@])${name.replace(/\$/g, "\\$")}(?![\\w$])`).exec(code);
  const rest = at ? code.slice(at.index) : code;
  return `expected @.name, a number, a quoted text, true, false or null at ${
    JSON.stringify(cut(rest))
  }`;
}

/** What follows the longest start of `code` that the library reads as one expression. */
function restAfterFirst(code: string, Script: SafeScript): string {
  for (let end = code.length - 1; end > 0; end--) {
    try {
      const { ast } = new Script(asLibraryCode(code.slice(0, end)));
      if (ast.type !== "Compound" && ast.type !== "AssignmentExpression") {
        return code.slice(end).trim();
      }
    } catch {
      // not an expression yet
    }
  }
  return code;
}

function cut(s: string): string {
  return s.length > 40 ? s.slice(0, 39) + "…" : s;
}

// ------------------------------------------------------------------ evaluation

/** What an expression found in a document; `detail` says what was compared and found. */
export interface JsonPathOutcome {
  readonly ok: boolean;
  readonly detail: string;
  /** When it holds: the value that satisfied it (the last comparison's, for `&&`). */
  readonly value?: unknown;
}

/** A signal that never aborts, for callers without one. */
const NEVER = new AbortController().signal;

/**
 * Evaluates an expression against a parsed JSON document; `signal` ends a
 * regular-expression match on a long text (docs/contract.md §9). The values
 * `detail` shows are cut after the run's `secrets` are masked.
 */
export async function evaluateJsonPath(
  expr: JsonPathExpr,
  doc: unknown,
  signal: AbortSignal = NEVER,
  secrets?: SecretRegistry,
): Promise<JsonPathOutcome> {
  const run = (await library.get()).JSONPath as unknown as RunPath;
  const { ok, detail, value } = await evaluateNode(expr.root, doc, { run, signal, secrets });
  return ok ? { ok, detail, value } : { ok, detail };
}

/** What every `--jsonpath` of a condition said of one document. */
export type JsonPathsVerdict =
  | { readonly ok: true; readonly details: readonly string[]; readonly value: unknown }
  | { readonly ok: false; readonly error: string };

/**
 * Evaluates `exprs` in order on `doc`: each one's detail and the last one's
 * value, or at the first that does not hold, the one text every kind gives
 * (`jsonpath not met: DETAIL`).
 */
export async function judgeJsonPaths(
  exprs: readonly JsonPathExpr[],
  doc: unknown,
  signal: AbortSignal = NEVER,
  secrets?: SecretRegistry,
): Promise<JsonPathsVerdict> {
  const details: string[] = [];
  let value: unknown;
  for (const expr of exprs) {
    const r = await evaluateJsonPath(expr, doc, signal, secrets);
    if (!r.ok) return { ok: false, error: `jsonpath not met: ${r.detail}` };
    details.push(r.detail);
    value = r.value;
  }
  return { ok: true, details, value };
}

interface Outcome extends JsonPathOutcome {
  /** What `detail` describes: one comparison, or a junction (for parentheses). */
  readonly shape: "leaf" | "and" | "or";
}

/** What evaluating needs besides the node and the document. */
interface Evaluation {
  readonly run: RunPath;
  readonly signal: AbortSignal;
  readonly secrets: SecretRegistry | undefined;
}

/** Evaluates a node; `detail` describes what decided the outcome. */
async function evaluateNode(
  node: JsonPathNode,
  doc: unknown,
  ev: Evaluation,
): Promise<Outcome> {
  if (node.type === "leaf") return await evaluateLeaf(node, doc, ev);
  const wrap = (o: Outcome) =>
    o.shape !== "leaf" && o.shape !== node.type ? `(${o.detail})` : o.detail;
  const join = (x: Outcome, y: Outcome, ok: boolean): Outcome => ({
    ok,
    detail: `${wrap(x)} ${node.type === "and" ? "&&" : "||"} ${wrap(y)}`,
    shape: node.type,
    value: y.value,
  });
  const a = await evaluateNode(node.left, doc, ev);
  if (node.type === "and") {
    if (!a.ok) return a;
    const b = await evaluateNode(node.right, doc, ev);
    return b.ok ? join(a, b, true) : b;
  }
  if (a.ok) return a;
  const b = await evaluateNode(node.right, doc, ev);
  return b.ok ? b : join(a, b, false);
}

async function evaluateLeaf(
  leaf: JsonPathLeaf,
  doc: unknown,
  { run, signal, secrets }: Evaluation,
): Promise<Outcome> {
  const head = leaf.op === undefined
    ? leaf.display
    : `${leaf.display} ${leaf.op} ${leaf.literalText}`;
  let values: unknown[];
  try {
    values = doc === undefined ? [] : run({ path: leaf.path, json: doc, wrap: true });
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      detail: `${head}: cannot evaluate: ${msg.charAt(0).toLowerCase()}${msg.slice(1)}`,
      shape: "leaf",
    };
  }
  if (!Array.isArray(values)) values = [];
  let hit = -1;
  if (leaf.op === "=~") {
    const regex = compileRegex(leaf.regex!.source, leaf.regex!.flags);
    for (const [i, v] of values.entries()) {
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") continue;
      if (await testText(regex, String(v), signal)) {
        hit = i;
        break;
      }
    }
  } else {
    hit = values.findIndex((v) => holds(leaf, v));
  }
  const detail = `${head} (got ${describeValues(values, secrets)})`;
  return hit < 0
    ? { ok: false, detail, shape: "leaf" }
    : { ok: true, detail, shape: "leaf", value: values[hit] };
}

/** Whether a value holds for a leaf other than `=~`. */
function holds(leaf: JsonPathLeaf, v: unknown): boolean {
  switch (leaf.op) {
    case undefined:
      return truthy(v);
    case "==":
      return looseEqual(v, leaf.value);
    case "!=":
      return !looseEqual(v, leaf.value);
    case "=~":
      return false; // matched by evaluateLeaf, which may need a worker
    default:
      return ordered(v, leaf.value, leaf.op);
  }
}

/**
 * Whether a matched value counts as true for a bare path: everything except
 * null, false, 0, "", "false" (any case), [] and {}.
 */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
  if (typeof v === "string" && v.toLowerCase() === "false") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v as object).length > 0;
  return true;
}

/** Equality where a text and a scalar compare by text (`"3" == 3`), as kubectl does. */
function looseEqual(v: unknown, lit: unknown): boolean {
  if (v === lit) return true;
  if (v !== null && lit !== null && typeof v === "object" && typeof lit === "object") {
    return JSON.stringify(v) === JSON.stringify(lit);
  }
  const scalar = (x: unknown) =>
    x === null || typeof x === "number" || typeof x === "boolean" || typeof x === "string";
  if (scalar(v) && scalar(lit) && (typeof v === "string" || typeof lit === "string")) {
    return String(v) === String(lit);
  }
  return false;
}

function asNumber(x: unknown): number | undefined {
  if (typeof x === "number") return x;
  if (typeof x === "string" && x.trim() !== "" && Number.isFinite(Number(x))) return Number(x);
  return undefined;
}

/** Ordering: numerically when both sides are numbers (or numeric texts), else texts by code unit. */
function ordered(v: unknown, lit: unknown, op: ">" | ">=" | "<" | "<="): boolean {
  const a = asNumber(v);
  const b = asNumber(lit);
  let cmp: number;
  if (a !== undefined && b !== undefined) cmp = a - b;
  else if (typeof v === "string" && typeof lit === "string") cmp = v < lit ? -1 : v > lit ? 1 : 0;
  else return false;
  switch (op) {
    case ">":
      return cmp > 0;
    case ">=":
      return cmp >= 0;
    case "<":
      return cmp < 0;
    default:
      return cmp <= 0;
  }
}

/** Up to 3 values as JSON, each redacted and cut to 60 characters (docs/contract.md §9). */
function describeValues(values: unknown[], secrets: SecretRegistry | undefined): string {
  if (values.length === 0) return "nothing";
  const shown = values.slice(0, 3).map((v) =>
    clip(v === undefined ? "undefined" : JSON.stringify(v), 60, secrets)
  );
  return shown.join(", ") + (values.length > 3 ? `, … (${values.length} values)` : "");
}

/**
 * `JSON.parse`'s reason without the piece of the body V8 quotes and cuts (`Unexpected token
 * 'x', "…secr"... is not valid JSON`): cut before any redaction, it could show the start of a
 * secret (docs/contract.md §9). The position says where instead.
 */
export function jsonSyntaxError(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  const text = msg.replace(/, ".*"(?:\.\.\.)? is not valid JSON$/s, "").replace(/\s+/g, " ");
  return text.charAt(0).toLowerCase() + text.slice(1);
}
