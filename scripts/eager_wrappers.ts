/**
 * The bundled libraries' module wrappers, compiled with their chunk, so that
 * V8's code cache holds them (docs/performance.md, "Where the time to a
 * verdict goes"; used by scripts/bundle.ts).
 *
 * Deno's bundler wraps each CommonJS module of a library in an arrow
 * function that runs at its first `require` (`var X=H(e=>{…})`, or
 * `H((e,t)=>{…})`, and `H(()=>{…})` for an ES module that must start late).
 * V8 compiles a function at its first call unless it looks called at once,
 * as a function in parentheses does; and Deno writes a module's code cache
 * when it compiles the module, so what compiles later is compiled again at
 * every start: the wrappers, which hold the modules' top-level code, were
 * most of what a kind's library compiled at each start (one client library
 * is 478 such modules). In parentheses (`H((e=>{…}))`) they compile with the chunk
 * and come from the cache; parentheses around an expression change nothing
 * else.
 *
 * @module
 */

/** Words after which a `/` begins a regular expression, not a division. */
const BEFORE_REGEX = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

function isWordChar(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) ||
    code === 36 || code === 95 || code > 127;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** An opening bracket's closing one and how deep it stands (0: the module's top level). */
export interface Bracket {
  readonly close: number;
  readonly depth: number;
}

/**
 * Every bracket of a JavaScript module's text (`(`, `[`, `{`, and `${` in a template) by its
 * offset, skipping strings, templates, regular expressions and comments. Throws on text it
 * cannot read to the end (an unclosed string, bracket or template).
 */
export function brackets(src: string): Map<number, Bracket> {
  const out = new Map<number, Bracket>();
  const stack: number[] = [];
  /** The bracket depth at each open `${` of a template. */
  const templates: number[] = [];
  /** What came last: nothing, a value (a `/` after it divides), or an operator. */
  let prev: "start" | "value" | "op" = "start";
  let i = 0;
  const n = src.length;
  const fail = (what: string): never => {
    throw new Error(`${what} at offset ${i}`);
  };
  /** Reads a template's text from `from` to its end or to its next `${`. */
  const templateText = (from: number) => {
    for (let j = from; j < n; j++) {
      const c = src[j];
      if (c === "\\") j++;
      else if (c === "`") return (i = j + 1, prev = "value");
      else if (c === "$" && src[j + 1] === "{") {
        templates.push(stack.length);
        stack.push(j);
        return (i = j + 2, prev = "op");
      }
    }
    fail("an unclosed template");
  };
  while (i < n) {
    const c = src[i]!;
    const code = src.charCodeAt(i);
    if (c === " " || c === "\n" || c === "\t" || c === "\r") {
      i++;
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      if (end < 0) fail("an unclosed comment");
      i = end + 2;
    } else if (c === "/" && src[i + 1] === "/") {
      const end = src.indexOf("\n", i);
      i = end < 0 ? n : end + 1;
    } else if (c === `"` || c === "'") {
      let j = i + 1;
      while (j < n && src[j] !== c) j += src[j] === "\\" ? 2 : 1;
      if (j >= n) fail("an unclosed string");
      i = j + 1;
      prev = "value";
    } else if (c === "`") {
      templateText(i + 1);
    } else if (c === "}" && templates.at(-1) === stack.length - 1) {
      templates.pop();
      const open = stack.pop()!;
      out.set(open, { close: i, depth: stack.length });
      templateText(i + 1);
    } else if (c === "/" && prev !== "value") {
      let j = i + 1;
      let inClass = false;
      for (; j < n; j++) {
        const d = src[j];
        if (d === "\\") j++;
        else if (d === "[") inClass = true;
        else if (d === "]") inClass = false;
        else if (d === "/" && !inClass) break;
        else if (d === "\n") fail("a line break in a regular expression");
      }
      if (j >= n) fail("an unclosed regular expression");
      i = j + 1;
      while (i < n && isWordChar(src.charCodeAt(i))) i++;
      prev = "value";
    } else if (isDigit(code) || (c === "." && isDigit(src.charCodeAt(i + 1)))) {
      i++;
      while (i < n && (isWordChar(src.charCodeAt(i)) || src[i] === ".")) i++;
      prev = "value";
    } else if (isWordChar(code)) {
      const start = i;
      while (i < n && isWordChar(src.charCodeAt(i))) i++;
      const property = start > 0 && src[start - 1] === "." && src[start - 2] !== ".";
      prev = !property && BEFORE_REGEX.has(src.slice(start, i)) ? "op" : "value";
    } else if (c === "(" || c === "[" || c === "{") {
      stack.push(i++);
      prev = "op";
    } else if (c === ")" || c === "]" || c === "}") {
      const open = stack.pop();
      if (open === undefined) fail(`an unopened ${c}`);
      out.set(open!, { close: i, depth: stack.length });
      i++;
      // After `}` a `/` begins a statement's regular expression far more often than it divides.
      prev = c === "}" ? "op" : "value";
    } else {
      i++;
      prev = "op";
    }
  }
  if (stack.length > 0) {
    i = stack.at(-1)!;
    fail("an unclosed bracket");
  }
  return out;
}

/**
 * `H(e=>{`, `H((e,t)=>{` or `H(()=>{` after `=` or `,`: a module wrapper when `H(` stands at the
 * top level and the arrow is its only argument.
 */
const WRAPPER = /(?<=[=,])[\w$]{1,3}(\()((?:[\w$]+|\([\w$]*(?:,[\w$]+)*\))=>\{)/dg;

/**
 * `src` with each top-level module wrapper in parentheses (see the module's comment), and how
 * many. Throws when the text cannot be read ({@link brackets}).
 */
export function eagerWrappers(src: string): { text: string; wrappers: number } {
  const found = brackets(src);
  const at: [number, string][] = [];
  for (const m of src.matchAll(WRAPPER)) {
    const call = m.indices![1]![0];
    const arrow = m.indices![2]![0];
    const body = m.indices![2]![1] - 1;
    const outer = found.get(call);
    const inner = found.get(body);
    if (outer?.depth !== 0 || inner === undefined || outer.close !== inner.close + 1) continue;
    at.push([arrow, "("], [inner.close + 1, ")"]);
  }
  if (at.length === 0) return { text: src, wrappers: 0 };
  const parts: string[] = [];
  let from = 0;
  for (const [pos, paren] of at.sort((a, b) => a[0] - b[0])) {
    parts.push(src.slice(from, pos), paren);
    from = pos;
  }
  parts.push(src.slice(from));
  return { text: parts.join(""), wrappers: at.length / 2 };
}
