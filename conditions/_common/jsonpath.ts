/**
 * The `--jsonpath` expression of http and orch (docs/contract.md §5 http):
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
 * This module splits an expression into that grammar; each path is checked
 * and rewritten for `jsonpath-plus` by jsonpath_path.ts, without loading it
 * (pure, for a kind's `parse`). The
 * filters and scripts inside paths are JavaScript-like expressions that the
 * library checks itself (`jsonpath_lib.ts`, in a kind's `validate`), and it
 * evaluates the expressions there too.
 *
 * @module
 */

import { namedGroupsOf, toJsSyntax } from "./captures.ts";
import { closingQuote, cut, matching, normalizePath } from "./jsonpath_path.ts";

/** A comparison operator. */
export type JsonPathOp = "==" | "!=" | ">" | ">=" | "<" | "<=" | "=~";

/** One `PATH [OP LITERAL]`. */
export interface JsonPathLeaf {
  readonly type: "leaf";
  /** The path as typed (for messages). */
  readonly display: string;
  /** The path as given to jsonpath-plus. */
  readonly path: string;
  readonly op?: JsonPathOp;
  readonly value?: unknown;
  /** The literal as shown in messages: `"ok"`, `3`, `/^ok/`. */
  readonly literalText?: string;
  /** The regular expression of `=~`. */
  readonly regex?: { readonly source: string; readonly flags: string };
}

/** `left && right` or `left || right`. */
export interface JsonPathJunction {
  readonly type: "and" | "or";
  readonly left: JsonPathNode;
  readonly right: JsonPathNode;
}

/** A node of a parsed expression. */
export type JsonPathNode = JsonPathLeaf | JsonPathJunction;

/** A parsed expression: plain data, evaluated by `jsonpath_lib.ts`. */
export interface JsonPathExpr {
  /** The expression as the user wrote it. */
  readonly source: string;
  readonly root: JsonPathNode;
}

const OPS: readonly JsonPathOp[] = ["==", "!=", ">=", "<=", "=~", ">", "<"];

/** Parses an expression; throws an `Error` whose message is the usage problem. */
export function parseJsonPathExpr(text: string): JsonPathExpr {
  if (text.trim() === "") {
    throw new Error('expected an expression like $.status == "ok", got nothing');
  }
  return { source: text, root: new ExprParser(text).parse() };
}

/** Every comparison of an expression, left to right. */
export function leavesOf(node: JsonPathNode): JsonPathLeaf[] {
  return node.type === "leaf" ? [node] : [...leavesOf(node.left), ...leavesOf(node.right)];
}

class ExprParser {
  #i = 0;
  constructor(readonly text: string) {}

  parse(): JsonPathNode {
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
    throw new Error(message);
  }

  #ws(): void {
    while (this.#i < this.text.length && /\s/.test(this.text[this.#i]!)) this.#i++;
  }

  #or(): JsonPathNode {
    let left = this.#and();
    for (;;) {
      this.#ws();
      if (!this.text.startsWith("||", this.#i)) return left;
      this.#i += 2;
      left = { type: "or", left, right: this.#and() };
    }
  }

  #and(): JsonPathNode {
    let left = this.#primary();
    for (;;) {
      this.#ws();
      if (!this.text.startsWith("&&", this.#i)) return left;
      this.#i += 2;
      left = { type: "and", left, right: this.#primary() };
    }
  }

  #primary(): JsonPathNode {
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

  #comparison(): JsonPathLeaf {
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

  #scanOp(): JsonPathOp | undefined {
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

  #scanLiteral(
    op: JsonPathOp,
    path: string,
  ): Omit<JsonPathLeaf, "type" | "display" | "path" | "op"> {
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
    try {
      new RegExp(toJsSyntax(source), regexFlags);
    } catch (e) {
      return this.#fail(`invalid regular expression /${source}/: ${regexReason(e)}`);
    }
    const named = namedGroupsOf(source);
    if (named.length > 0) {
      // Only --matches captures groups; a --jsonpath captures the value it compared.
      return this.#fail(
        `named group ${JSON.stringify(named[0])} in /${source}/ is never captured: ` +
          `--jsonpath captures the compared value as "value"; name groups in --matches`,
      );
    }
    return {
      value: source,
      literalText: `/${source}/${regexFlags}`,
      regex: { source, flags: regexFlags },
    };
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
