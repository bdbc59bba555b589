/**
 * The bundled libraries' module wrappers, compiled with their chunk, so that
 * V8's code cache holds them (docs/performance.md, "Where the time to a
 * verdict goes"; used by scripts/bundle_fixups.ts).
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
 * else. The module is read with acorn, a maintained JavaScript parser.
 *
 * @module
 */

import { type Expression, parse, type Program } from "acorn";

/** A call at a module's top level whose one argument is a wrapper: `H(e=>{…})`. */
function wrapperOf(node: Expression | null | undefined): Expression | undefined {
  if (node?.type !== "CallExpression" || node.callee.type !== "Identifier") return undefined;
  const [arg, ...more] = node.arguments;
  if (more.length > 0 || arg?.type !== "ArrowFunctionExpression") return undefined;
  if (arg.body.type !== "BlockStatement" || arg.async) return undefined;
  return arg.params.every((p) => p.type === "Identifier") ? arg : undefined;
}

/**
 * The values a top-level statement assigns: `var a=X,b=Y`, `a=X,b=Y` and `export var a=X`.
 */
function assignedValues(statement: Program["body"][number]): (Expression | null | undefined)[] {
  const declaration = statement.type === "ExportNamedDeclaration"
    ? statement.declaration
    : statement;
  if (declaration?.type === "VariableDeclaration") {
    return declaration.declarations.map((d) => d.init);
  }
  if (declaration?.type !== "ExpressionStatement") return [];
  const e = declaration.expression;
  const all = e.type === "SequenceExpression" ? e.expressions : [e];
  return all.map((x) => x.type === "AssignmentExpression" ? x.right : undefined);
}

/**
 * `src` with each top-level module wrapper in parentheses (see the module's comment), and how
 * many. Throws when acorn cannot parse `src`.
 */
export function eagerWrappers(src: string): { text: string; wrappers: number } {
  const program = parse(src, { ecmaVersion: "latest", sourceType: "module" });
  const at: [number, number][] = [];
  for (const statement of program.body) {
    for (const value of assignedValues(statement)) {
      const arrow = wrapperOf(value);
      if (arrow !== undefined) at.push([arrow.start, arrow.end]);
    }
  }
  if (at.length === 0) return { text: src, wrappers: 0 };
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of at.sort((a, b) => a[0] - b[0])) {
    parts.push(src.slice(from, start), "(", src.slice(start, end), ")");
    from = end;
  }
  parts.push(src.slice(from));
  return { text: parts.join(""), wrappers: at.length };
}
