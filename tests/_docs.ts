/**
 * The kinds tables of README.md and docs/contract.md §5, made from the kinds'
 * declarations (name, aliases, target, summary; each kind's semantics are its
 * folder's README.md). tests/docs_test.ts checks that both files hold them;
 * run this module to write them:
 *
 * ```sh
 * scripts/deno run --allow-read --allow-write --allow-run tests/_docs.ts
 * ```
 *
 * @module
 */

import type { ConditionKind } from "../engine/types.ts";

/** The line before a generated kinds table. */
export const TABLE_START =
  "<!-- kinds table: generated from each kind's declaration; tests/docs_test.ts checks it -->";
/** The line after it. */
export const TABLE_END = "<!-- end of kinds table -->";

/** The files that hold a kinds table, and the path from each to the repository's root. */
export const TABLE_FILES: readonly { readonly path: string; readonly root: string }[] = [
  { path: "README.md", root: "" },
  { path: "docs/contract.md", root: "../" },
];

/** A Markdown table cell: `|` escaped. */
const cell = (s: string) => s.replaceAll("|", "\\|");

/** How the table shows a kind's target. */
function targetCell(k: ConditionKind): string {
  switch (k.target.shape) {
    case "required":
      return `\`${k.target.placeholder}\``;
    case "optional":
      return `\`${k.target.placeholder}\` or none`;
    case "none":
      return "none: flags";
    case "command":
      return `\`-- ${k.target.placeholder}\``;
  }
}

/** The rows of the kinds table (cells as Markdown), header first, for a file at `root`. */
export function kindsRows(kinds: readonly ConditionKind[], root: string): string[][] {
  return [
    ["kind", "aliases", "target", "waits until"],
    ...kinds.map((k) => [
      `[\`${k.name}\`](${root}conditions/${k.name}/README.md)`,
      k.aliases.map((a) => `\`${a}\``).join(", "),
      cell(targetCell(k)),
      cell(k.summary),
    ]),
  ];
}

/** The table as Markdown lines (unpadded; `deno fmt` aligns it). */
export function kindsTable(kinds: readonly ConditionKind[], root: string): string[] {
  const [head, ...rows] = kindsRows(kinds, root);
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(head!), line(head!.map(() => "---")), ...rows.map(line)];
}

/** The cells of the table between the markers of `text` (header included), or undefined. */
export function tableIn(text: string): string[][] | undefined {
  const lines = text.split("\n");
  const start = lines.indexOf(TABLE_START);
  const end = lines.indexOf(TABLE_END);
  if (start < 0 || end < start) return undefined;
  return lines.slice(start + 1, end)
    .filter((l) => l.startsWith("|") && !/^\|[\s|:-]+\|$/.test(l))
    .map((l) => l.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim()));
}

/** `text` with the lines between its markers replaced by `table`. */
export function withTable(text: string, table: readonly string[]): string {
  const lines = text.split("\n");
  const start = lines.indexOf(TABLE_START);
  const end = lines.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`no ${TABLE_START} ... ${TABLE_END} block`);
  return [...lines.slice(0, start + 1), ...table, ...lines.slice(end)].join("\n");
}

/** `text` without its generated table (what is written by hand). */
export function withoutTable(text: string): string {
  return withTable(text, []);
}

if (import.meta.main) {
  const { registry } = await import("../conditions/all.ts");
  const root = new URL("../", import.meta.url);
  const paths: string[] = [];
  for (const f of TABLE_FILES) {
    const path = new URL(f.path, root).pathname;
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, withTable(text, kindsTable(registry.kinds, f.root)));
    paths.push(path);
  }
  const fmt = await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", ...paths] })
    .output();
  if (!fmt.success) throw new Error(`deno fmt failed: ${new TextDecoder().decode(fmt.stderr)}`);
  console.log(`wrote the kinds tables of ${TABLE_FILES.map((f) => f.path).join(" and ")}`);
}
