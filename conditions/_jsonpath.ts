/**
 * The `--jsonpath` expression of http and orch (DECISIONS §8.3):
 *
 * ```
 * expr       = or
 * or         = and ("||" and)*
 * and        = primary ("&&" primary)*
 * primary    = "(" or ")" | comparison
 * comparison = PATH [OP LITERAL]
 * ```
 *
 * PATH is JSONPath (`$.a.b[0]`, `.a.b`, kubectl's `{.a.b}`, filters such as
 * `$.conditions[?(@.type=="Ready")].status`, `\.` escapes a dot in a name);
 * OP is `==` (or `=`, as kubectl writes it), `!=`, `>`, `>=`, `<`, `<=`,
 * `=~`; LITERAL is a JSON literal, a single-quoted text, a `/regex/flags` (for
 * `=~`) or a bare word taken as a text. Without OP the path must match a
 * truthy value. A path matching several values holds when any value does; a
 * path matching nothing never holds.
 *
 * The syntax is checked here without loading `jsonpath-plus`; evaluation
 * imports it lazily, so kinds that never evaluate an expression never load it.
 *
 * @module
 */

/** A parsed expression, ready to evaluate against documents. */
export interface JsonPathExpr {
  /** The expression as the user wrote it. */
  readonly source: string;
  /** Evaluates against a parsed JSON document; `detail` says what was compared and found. */
  evaluate(doc: unknown): Promise<{ ok: boolean; detail: string }>;
}

type Op = "==" | "!=" | ">" | ">=" | "<" | "<=" | "=~";

interface Leaf {
  readonly type: "leaf";
  /** The path as typed (for messages). */
  readonly display: string;
  /** The path as given to jsonpath-plus. */
  readonly path: string;
  readonly op?: Op;
  readonly value?: unknown;
  /** The literal as shown in messages: `"ok"`, `3`, `/^ok/`. */
  readonly literalText?: string;
  readonly regex?: RegExp;
}

interface Junction {
  readonly type: "and" | "or";
  readonly left: Node;
  readonly right: Node;
}

type Node = Leaf | Junction;

type JsonPathFn = (opts: { path: string; json: unknown; wrap: true }) => unknown[];

class SyntaxProblem extends Error {}

const OPS: readonly Op[] = ["==", "!=", ">=", "<=", "=~", ">", "<"];
const QUOTES = new Set(["'", '"']);

/** Parses an expression; returns the usage-error message when the syntax is bad. */
export function parseJsonPathExpr(text: string): JsonPathExpr | string {
  if (text.trim() === "") return 'expected an expression like $.status == "ok", got nothing';
  let root: Node;
  try {
    root = new ExprParser(text).parse();
  } catch (e) {
    if (e instanceof SyntaxProblem) return e.message;
    throw e;
  }
  return {
    source: text,
    async evaluate(doc) {
      const mod = await import("jsonpath-plus");
      const run = mod.JSONPath as unknown as JsonPathFn;
      const { ok, detail } = evaluateNode(root, doc, run);
      return { ok, detail };
    },
  };
}

class ExprParser {
  #i = 0;
  constructor(readonly text: string) {}

  parse(): Node {
    const node = this.#or();
    this.#ws();
    if (this.#i < this.text.length) {
      const rest = this.text.slice(this.#i);
      if (rest.startsWith(")")) this.#fail(`unbalanced ")" at position ${this.#i + 1}`);
      this.#fail(
        `expected && or || at position ${this.#i + 1}, got ${JSON.stringify(cut(rest))}`,
      );
    }
    return node;
  }

  #fail(message: string): never {
    throw new SyntaxProblem(message);
  }

  #ws(): void {
    while (this.#i < this.text.length && /\s/.test(this.text[this.#i]!)) this.#i++;
  }

  #or(): Node {
    let left = this.#and();
    for (;;) {
      this.#ws();
      if (!this.text.startsWith("||", this.#i)) return left;
      this.#i += 2;
      left = { type: "or", left, right: this.#and() };
    }
  }

  #and(): Node {
    let left = this.#primary();
    for (;;) {
      this.#ws();
      if (!this.text.startsWith("&&", this.#i)) return left;
      this.#i += 2;
      left = { type: "and", left, right: this.#primary() };
    }
  }

  #primary(): Node {
    this.#ws();
    if (this.text[this.#i] === "(") {
      const open = this.#i;
      this.#i++;
      const inner = this.#or();
      this.#ws();
      if (this.text[this.#i] !== ")") this.#fail(`unbalanced "(" at position ${open + 1}`);
      this.#i++;
      return inner;
    }
    return this.#comparison();
  }

  #comparison(): Leaf {
    const start = this.#i;
    if (start >= this.text.length) {
      this.#fail(`expected a path like $.status after ${JSON.stringify(cut(this.text))}`);
    }
    const raw = this.#scanPath();
    if (raw === "") {
      this.#fail(
        `expected a path like $.status at position ${start + 1}, got ${
          JSON.stringify(cut(this.text.slice(start)))
        }`,
      );
    }
    const path = normalizePath(raw);
    if (typeof path !== "string") this.#fail(path.error);
    this.#ws();
    const op = this.#scanOp();
    if (op === undefined) return { type: "leaf", display: raw, path };
    this.#ws();
    const lit = this.#scanLiteral(op, raw);
    return { type: "leaf", display: raw, path, op, ...lit };
  }

  /** Reads a path up to whitespace or an operator outside brackets. */
  #scanPath(): string {
    const start = this.#i;
    const t = this.text;
    if (t[this.#i] === "{") {
      const end = matching(t, this.#i, "{", "}");
      if (end < 0) this.#fail(`unbalanced "{" in ${JSON.stringify(cut(t.slice(start)))}`);
      this.#i = end + 1;
      return t.slice(start, this.#i);
    }
    while (this.#i < t.length) {
      const c = t[this.#i]!;
      if (c === "\\") {
        this.#i += 2;
        continue;
      }
      if (c === "[") {
        const end = matching(t, this.#i, "[", "]");
        if (end < 0) this.#fail(`unbalanced "[" in ${JSON.stringify(cut(t.slice(start)))}`);
        this.#i = end + 1;
        continue;
      }
      if (/\s/.test(c) || "=!<>&|()".includes(c)) break;
      this.#i++;
    }
    return t.slice(start, Math.min(this.#i, t.length));
  }

  #scanOp(): Op | undefined {
    const t = this.text;
    for (const op of OPS) {
      if (t.startsWith(op, this.#i)) {
        this.#i += op.length;
        return op;
      }
    }
    // kubectl writes `{.status.phase}=Running`.
    if (t[this.#i] === "=") {
      this.#i++;
      return "==";
    }
    if (t[this.#i] === "!" || t[this.#i] === "=") {
      this.#fail(`unknown operator at position ${this.#i + 1}; use ==, !=, >, >=, <, <= or =~`);
    }
    return undefined;
  }

  #scanLiteral(op: Op, path: string): Omit<Leaf, "type" | "display" | "path" | "op"> {
    const t = this.text;
    const start = this.#i;
    const c = t[this.#i];
    if (
      c === undefined || (c === "&" && t[start + 1] === "&") ||
      (c === "|" && t[start + 1] === "|") || c === ")"
    ) {
      this.#fail(`expected a value after ${path} ${op}`);
    }
    let value: unknown;
    let literalText: string;
    let regexSource: string | undefined;
    let regexFlags = "";
    if (c === '"') {
      const end = closingQuote(t, start);
      if (end < 0) this.#fail(`unterminated text starting at position ${start + 1}`);
      try {
        value = JSON.parse(t.slice(start, end + 1));
      } catch (e) {
        this.#fail(`bad text at position ${start + 1}: ${(e as Error).message}`);
      }
      this.#i = end + 1;
      literalText = JSON.stringify(value);
    } else if (c === "'") {
      const end = closingQuote(t, start);
      if (end < 0) this.#fail(`unterminated text starting at position ${start + 1}`);
      value = t.slice(start + 1, end).replace(/\\(.)/g, "$1");
      this.#i = end + 1;
      literalText = JSON.stringify(value);
    } else if (c === "/" && op === "=~") {
      const m = /^\/((?:\\.|[^\\/])+)\/([a-z]*)/.exec(t.slice(start));
      if (!m) this.#fail(`unterminated regular expression at position ${start + 1}`);
      regexSource = m[1]!;
      regexFlags = m[2]!;
      value = regexSource;
      literalText = m[0];
      this.#i += m[0].length;
    } else {
      const word = this.#scanWord();
      if (word === "true") value = true;
      else if (word === "false") value = false;
      else if (word === "null") value = null;
      else if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(word)) value = Number(word);
      else value = word;
      literalText = typeof value === "string" ? JSON.stringify(value) : word;
      if (op === "=~") regexSource = word;
    }
    if (op !== "=~") return { value, literalText };
    const source = regexSource ?? String(value);
    let regex: RegExp;
    try {
      regex = new RegExp(source, regexFlags);
    } catch (e) {
      return this.#fail(`invalid regular expression /${source}/: ${regexReason(e)}`);
    }
    return { value: source, literalText: `/${source}/${regexFlags}`, regex };
  }

  /** A bare word: up to whitespace, `&&`, `||` or a `)` that closes an outer group. */
  #scanWord(): string {
    const t = this.text;
    const start = this.#i;
    let depth = 0;
    while (this.#i < t.length) {
      const c = t[this.#i]!;
      if (/\s/.test(c)) break;
      if (t.startsWith("&&", this.#i) || t.startsWith("||", this.#i)) break;
      if (c === "(") depth++;
      if (c === ")") {
        if (depth === 0) break;
        depth--;
      }
      this.#i++;
    }
    return t.slice(start, this.#i);
  }
}

function regexReason(e: unknown): string {
  const m = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, "");
  return m.charAt(0).toLowerCase() + m.slice(1);
}

function cut(s: string): string {
  return s.length > 40 ? s.slice(0, 39) + "…" : s;
}

/** Index of the quote closing the one at `start` (backslash escapes), or -1. */
function closingQuote(t: string, start: number): number {
  const q = t[start];
  for (let i = start + 1; i < t.length; i++) {
    if (t[i] === "\\") i++;
    else if (t[i] === q) return i;
  }
  return -1;
}

/** Index of the bracket closing the one at `start`, skipping quoted texts and nesting, or -1. */
function matching(t: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < t.length; i++) {
    const c = t[i]!;
    if (QUOTES.has(c)) {
      const end = closingQuote(t, i);
      if (end < 0) return -1;
      i = end;
    } else if (c === "\\") i++;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return i;
  }
  return -1;
}

/**
 * Checks a path and rewrites it for jsonpath-plus: `.a` and `{.a}` get the
 * `$` root, names with `\.` escapes become `['a.b']`.
 */
export function normalizePath(raw: string): string | { error: string } {
  let body = raw;
  if (body.startsWith("{")) {
    if (!body.endsWith("}")) return { error: `unbalanced "{" in ${JSON.stringify(raw)}` };
    body = body.slice(1, -1).trim();
  }
  if (body.startsWith(".") || body.startsWith("[")) body = "$" + body;
  if (!body.startsWith("$")) {
    return {
      error: `expected a path like $.status, .status or {.status}, got ${JSON.stringify(cut(raw))}`,
    };
  }
  const bad = (why: string) => ({ error: `bad path ${JSON.stringify(cut(raw))}: ${why}` });
  let out = "$";
  let i = 1;
  while (i < body.length) {
    const c = body[i]!;
    if (c === ".") {
      let recursive = false;
      i++;
      if (body[i] === ".") {
        recursive = true;
        i++;
      }
      if (body[i] === "[" && recursive) {
        out += "..";
        continue;
      }
      if (body[i] === "*") {
        out += recursive ? "..*" : ".*";
        i++;
        continue;
      }
      let name = "";
      let escaped = false;
      while (i < body.length && body[i] !== "." && body[i] !== "[") {
        if (body[i] === "\\") {
          if (i + 1 >= body.length) return bad("a trailing \\");
          escaped = true;
          name += body[i + 1];
          i += 2;
          continue;
        }
        if (QUOTES.has(body[i]!) || body[i] === "]" || /\s/.test(body[i]!)) {
          return bad(`unexpected ${JSON.stringify(body[i])}`);
        }
        name += body[i];
        i++;
      }
      if (name === "") return bad(`a name is missing after "${recursive ? ".." : "."}"`);
      const part = escaped ? `['${name.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}']` : name;
      out += recursive ? ".." + part : escaped ? part : "." + part;
      continue;
    }
    if (c === "[") {
      const end = matching(body, i, "[", "]");
      if (end < 0) return bad(`unbalanced "["`);
      const inner = body.slice(i + 1, end).trim();
      const err = checkBracket(inner);
      if (err) return bad(err);
      out += `[${inner}]`;
      i = end + 1;
      continue;
    }
    return bad(`unexpected ${JSON.stringify(c)}; names follow "." or go in brackets`);
  }
  return out;
}

/** Validates the inside of `[...]`; returns an error text or undefined. */
function checkBracket(inner: string): string | undefined {
  if (inner === "") return "empty brackets []";
  if (inner === "*") return undefined;
  if (inner.startsWith("?(")) {
    if (!inner.endsWith(")")) return `a filter is written [?(...)], got [${inner}]`;
    return checkScript(inner.slice(2, -1), "filter");
  }
  if (inner.startsWith("(")) {
    if (!inner.endsWith(")")) return `a script is written [(...)], got [${inner}]`;
    return checkScript(inner.slice(1, -1), "script");
  }
  const SLICE = /^(-?\d+)?:(-?\d+)?(:(-?\d+)?)?$/;
  for (const item of splitTop(inner)) {
    const s = item.trim();
    if (/^-?\d+$/.test(s) || SLICE.test(s) || s === "*") continue;
    if ((s.startsWith("'") || s.startsWith('"')) && closingQuote(s, 0) === s.length - 1) continue;
    return `expected an index, a slice, a quoted name or a filter in brackets, got [${inner}]`;
  }
  return undefined;
}

/** Splits on commas outside quotes. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    if (QUOTES.has(s[i]!)) {
      const end = closingQuote(s, i);
      if (end < 0) return [s];
      i = end;
    } else if (s[i] === ",") {
      parts.push(s.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(s.slice(from));
  return parts;
}

const FILTER_BINARY = [
  "===",
  "!==",
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "<",
  ">",
  "+",
  "-",
  "*",
  "/",
  "%",
];
const FILTER_WORDS = new Set(["true", "false", "null", "undefined"]);

/**
 * A light check of a filter's JavaScript-like expression: operands (`@`/`$`
 * paths with member access and calls, numbers, texts, regexes, true, false,
 * null) alternate with operators, and parentheses balance. jsonpath-plus
 * evaluates it with its safe evaluator.
 */
function checkScript(src: string, what: string): string | undefined {
  let i = 0;
  let depth = 0;
  let wantOperand = true;
  const problem = (why: string) => `bad ${what} (${src}): ${why}`;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (wantOperand) {
      if (c === "!" || c === "-" || c === "+") {
        i++;
        continue;
      }
      if (c === "(") {
        depth++;
        i++;
        continue;
      }
      if (c === "@" || c === "$") {
        i++;
        while (i < src.length) {
          const d = src[i]!;
          if (/[\w$]/.test(d) || d === ".") {
            i++;
          } else if (d === "[" || d === "(") {
            const end = matching(src, i, d, d === "[" ? "]" : ")");
            if (end < 0) return problem(`unbalanced ${JSON.stringify(d)}`);
            i = end + 1;
          } else break;
        }
        wantOperand = false;
        continue;
      }
      if (QUOTES.has(c)) {
        const end = closingQuote(src, i);
        if (end < 0) return problem("unterminated text");
        i = end + 1;
        wantOperand = false;
        continue;
      }
      if (c === "/") {
        const m = /^\/((?:\\.|[^\\/])+)\/[a-z]*/.exec(src.slice(i));
        if (!m) return problem("unterminated regular expression");
        i += m[0].length;
        wantOperand = false;
        continue;
      }
      const num = /^\d+(\.\d+)?([eE][+-]?\d+)?/.exec(src.slice(i));
      if (num) {
        i += num[0].length;
        wantOperand = false;
        continue;
      }
      const word = /^[A-Za-z_]\w*/.exec(src.slice(i));
      if (word && FILTER_WORDS.has(word[0])) {
        i += word[0].length;
        wantOperand = false;
        continue;
      }
      return problem(
        `expected @.name, a number, a quoted text, true, false or null at ${
          JSON.stringify(cut(src.slice(i)))
        }`,
      );
    }
    if (c === ")") {
      if (depth === 0) return problem(`unbalanced ")"`);
      depth--;
      i++;
      continue;
    }
    const op = FILTER_BINARY.find((o) => src.startsWith(o, i));
    if (!op) return problem(`expected an operator at ${JSON.stringify(cut(src.slice(i)))}`);
    i += op.length;
    wantOperand = true;
  }
  if (src.trim() === "") return problem("it is empty");
  if (wantOperand) return problem("it ends with an operator");
  if (depth > 0) return problem(`unbalanced "("`);
  return undefined;
}

interface Outcome {
  ok: boolean;
  detail: string;
  /** What `detail` describes: one comparison, or a junction (for parentheses). */
  shape: "leaf" | "and" | "or";
}

/** Evaluates a node; `detail` describes what decided the outcome. */
function evaluateNode(node: Node, doc: unknown, run: JsonPathFn): Outcome {
  if (node.type === "leaf") return evaluateLeaf(node, doc, run);
  const wrap = (o: Outcome) =>
    o.shape !== "leaf" && o.shape !== node.type ? `(${o.detail})` : o.detail;
  const join = (x: Outcome, y: Outcome, ok: boolean): Outcome => ({
    ok,
    detail: `${wrap(x)} ${node.type === "and" ? "&&" : "||"} ${wrap(y)}`,
    shape: node.type,
  });
  const a = evaluateNode(node.left, doc, run);
  if (node.type === "and") {
    if (!a.ok) return a;
    const b = evaluateNode(node.right, doc, run);
    return b.ok ? join(a, b, true) : b;
  }
  if (a.ok) return a;
  const b = evaluateNode(node.right, doc, run);
  return b.ok ? b : join(a, b, false);
}

function evaluateLeaf(leaf: Leaf, doc: unknown, run: JsonPathFn): Outcome {
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
  const ok = values.some((v) => holds(leaf, v));
  return { ok, detail: `${head} (got ${describeValues(values)})`, shape: "leaf" };
}

function holds(leaf: Leaf, v: unknown): boolean {
  switch (leaf.op) {
    case undefined:
      return truthy(v);
    case "==":
      return looseEqual(v, leaf.value);
    case "!=":
      return !looseEqual(v, leaf.value);
    case "=~":
      return (typeof v === "string" || typeof v === "number" || typeof v === "boolean") &&
        leaf.regex!.test(String(v));
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
function ordered(v: unknown, lit: unknown, op: Op): boolean {
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

function describeValues(values: unknown[]): string {
  if (values.length === 0) return "nothing";
  const shown = values.slice(0, 3).map((v) => {
    const s = v === undefined ? "undefined" : JSON.stringify(v);
    return s.length > 60 ? s.slice(0, 59) + "…" : s;
  });
  return shown.join(", ") + (values.length > 3 ? `, … (${values.length} values)` : "");
}
