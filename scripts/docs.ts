/**
 * `deno task docs`: writes what the docs say of the kinds from the kinds'
 * declarations (each `conditions/<kind>/mod.ts`), so that a kind's prose
 * lives once:
 *
 * - the head of each kind's page, `conditions/<kind>/README.md`: its
 *   heading, aliases, target, readiness rule (the declaration's
 *   description, what `waitcmd help <kind>` prints), flags table and
 *   examples, between {@link HEAD_START} and {@link HEAD_END}; the
 *   hand-written contract below the head is left as it is;
 * - the kinds tables of README.md and docs/contract.md §5;
 * - the list of conditions/mod.ts (`KINDS`: each kind's name, aliases and
 *   loader), so that aliases are written only in the declaration while a
 *   command line still loads only the declarations it names
 *   (docs/performance.md).
 *
 * tests/docs_test.ts fails when any of them is not what this task writes.
 * `deno task docs --overlap` prints, for each kind, the share of its
 * description's word triples that the hand-written part of its page repeats.
 *
 * @module
 */

import type { ConditionKind, FlagSpec } from "../engine/types.ts";

/** The line after a kind page's heading, where the generated head starts. */
export const HEAD_START = "<!-- generated from mod.ts by deno task docs: do not edit -->";
/** The line where the generated head ends and the hand-written contract starts. */
export const HEAD_END = "<!-- end generated -->";

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

/** The registry's list, relative to the repository's root. */
export const KINDS_FILE = "conditions/mod.ts";
/** The line before the generated list in {@link KINDS_FILE}. */
export const KINDS_START = "// generated from each kind's mod.ts by deno task docs: do not edit";
/** The line after it. */
export const KINDS_END = "// end generated";

/** A Markdown table cell: `|` escaped. */
const cell = (s: string) => s.replaceAll("|", "\\|");

/**
 * Plain help text as Markdown: the characters Markdown would read as markup
 * escaped, and flags (`--name`) as code.
 */
export function prose(text: string): string {
  const escaped = text
    .replace(/[\\`*<>[\]]/g, (c) => `\\${c}`)
    .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, "\\_");
  return escaped.replace(/(?<![\w-])--[a-z][a-z0-9-]*/g, (f) => `\`${f}\``);
}

/** How the kinds table shows a kind's target. */
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

/** A table as Markdown lines (unpadded; `deno fmt` aligns it). */
function table(rows: readonly (readonly string[])[]): string[] {
  const [head, ...body] = rows;
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(head!), line(head!.map(() => "---")), ...body.map(line)];
}

/** The kinds table as Markdown lines. */
export function kindsTable(kinds: readonly ConditionKind[], root: string): string[] {
  return table(kindsRows(kinds, root));
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

/** `text` with the lines between the markers `start` and `end` replaced by `lines`. */
function between(text: string, start: string, end: string, lines: readonly string[]): string {
  const all = text.split("\n");
  const from = all.indexOf(start);
  const to = all.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no ${start} ... ${end} block`);
  return [...all.slice(0, from + 1), ...lines, ...all.slice(to)].join("\n");
}

/** `text` with the lines between its kinds table markers replaced by `table`. */
export function withTable(text: string, table: readonly string[]): string {
  return between(text, TABLE_START, TABLE_END, table);
}

/** `text` without its generated table (what is written by hand). */
export function withoutTable(text: string): string {
  return withTable(text, []);
}

// --- A kind's page ---

/** A flag's help split into its text and the default it states (`(default X)`), if any. */
function helpAndDefault(f: FlagSpec): { help: string; default: string } {
  const m = /\s*\(default:? ([^()]*)\)/.exec(f.description);
  if (m === null) return { help: f.description, default: "" };
  return {
    help: f.description.slice(0, m.index) + f.description.slice(m.index + m[0].length),
    default: m[1]!,
  };
}

/** A flag's value as the flags table shows it. */
function valueOf(f: FlagSpec): string {
  if (f.type === "boolean") return "";
  const parts = [`\`${f.placeholder ?? "VALUE"}\``];
  if (f.type === "enum" && f.values && !f.values.every((v) => f.placeholder?.includes(v))) {
    parts.push(f.values.map((v) => `\`${v}\``).join(", "));
  }
  if (f.min !== undefined || f.max !== undefined) parts.push(`${f.min ?? ""}–${f.max ?? ""}`);
  return parts.join(": ");
}

/** The flags table of a kind's page. */
function flagsTable(k: ConditionKind): string[] {
  if (k.flags.length === 0) return ["The kind has no flags of its own."];
  return table([
    ["flag", "value", "help", "default"],
    ...k.flags.map((f) => {
      const { help, default: dflt } = helpAndDefault(f);
      const notes = [f.repeatable ? "repeatable" : "", f.secret ? "secret: never shown" : ""]
        .filter(Boolean);
      return [
        `\`${f.short ? `-${f.short}, ` : ""}--${f.name}\``,
        valueOf(f),
        prose(help + (notes.length ? ` (${notes.join("; ")})` : "")),
        prose(dflt),
      ].map(cell);
    }),
  ]);
}

/** How a kind's page states its target. */
function targetLine(k: ConditionKind): string {
  const what = prose(k.target.description);
  switch (k.target.shape) {
    case "required":
      return `\`${k.target.placeholder}\`: ${what}`;
    case "optional":
      return `\`${k.target.placeholder}\` or none: ${what}`;
    case "none":
      return `none; the condition is selected by its flags${what ? ` (${what})` : ""}`;
    case "command":
      return `the words after the kind's own \`--\`, \`${k.target.placeholder}\`: ${what}`;
  }
}

/** The generated head of a kind's page: its heading up to {@link HEAD_END}. */
export function pageHead(k: ConditionKind): string[] {
  const aliases = k.aliases.length ? k.aliases.map((a) => `\`${a}\``).join(", ") : "none";
  return [
    `# §5 ${k.name}`,
    "",
    HEAD_START,
    "",
    `The \`${k.name}\` kind's part of waitcmd's behaviour contract: ${
      prose(k.summary)
    }. What every`,
    "kind shares (the three outcomes, host names, errors, secrets) is in",
    `[docs/contract.md](../../docs/contract.md). This head is made from the kind's declaration, as`,
    `\`waitcmd help ${k.name}\` is; the contract's details follow it.`,
    "",
    `- **Aliases:** ${aliases}.`,
    `- **Target:** ${targetLine(k)}.`,
    `- **Ready when:** ${prose(k.description)}`,
    "",
    ...flagsTable(k),
    "",
    "Examples:",
    "",
    "```sh",
    ...k.examples.flatMap((e) => [`# ${e.description}`, `waitcmd ${e.args}`]),
    "```",
    "",
    HEAD_END,
  ];
}

/** `page` with its head made from `k`; a page without a head gets one above all its text. */
export function withHead(page: string, k: ConditionKind): string {
  const lines = page.split("\n");
  const end = lines.indexOf(HEAD_END);
  const hand = end >= 0
    ? lines.slice(end + 1)
    : ["", ...lines.slice(lines[0]?.startsWith("# §5 ") ? 1 : 0)];
  return [...pageHead(k), ...hand].join("\n");
}

/** The hand-written part of a kind's page: what follows its generated head. */
export function handPart(page: string): string {
  const end = page.indexOf(HEAD_END);
  return end < 0 ? page : page.slice(end + HEAD_END.length);
}

// --- conditions/mod.ts ---

/** The generated lines of conditions/mod.ts's list, one entry per kind. */
export function kindsLines(kinds: readonly ConditionKind[]): string[] {
  return [
    "/** Every condition kind waitcmd knows, in the order help lists them (new kinds go last). */",
    "export const KINDS: readonly KindEntry[] = [",
    ...kinds.map((k) =>
      `  { name: ${JSON.stringify(k.name)}, aliases: ${
        JSON.stringify(k.aliases)
      }, load: () => import("./${k.name}/mod.ts").then((m) => m.${k.name}) },`
    ),
    "];",
  ];
}

// --- Reading the declarations and writing the files ---

/** The repository's root directory, as a path ending in `/`. */
export const ROOT = new URL("../", import.meta.url).pathname;

/**
 * Every kind's declaration, read from its folder (not through conditions/mod.ts, which this task
 * writes): in the order of conditions/mod.ts's list, kinds it does not list yet last, by name.
 */
export async function declarations(): Promise<ConditionKind[]> {
  const folders: string[] = [];
  for await (const e of Deno.readDir(`${ROOT}conditions`)) {
    if (!e.isDirectory || e.name.startsWith("_")) continue;
    const mod = await Deno.stat(`${ROOT}conditions/${e.name}/mod.ts`).then(() => true, () => false);
    if (mod) folders.push(e.name);
  }
  const listed = [...(await Deno.readTextFile(`${ROOT}${KINDS_FILE}`))
    .matchAll(/^\s*\{?\s*name: "([a-z0-9]+)"/gm)].map((m) => m[1]!);
  const rank = (name: string) => listed.includes(name) ? listed.indexOf(name) : listed.length;
  folders.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return await Promise.all(folders.map(async (name) => {
    const mod = await import(`../conditions/${name}/mod.ts`) as Record<string, ConditionKind>;
    const kind = mod[name];
    if (kind?.name !== name) throw new Error(`conditions/${name}/mod.ts does not export ${name}`);
    return kind;
  }));
}

/** What this task writes: each file's path (from the root) and its whole new text, formatted. */
export async function generated(kinds: readonly ConditionKind[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of TABLE_FILES) {
    const text = await Deno.readTextFile(`${ROOT}${f.path}`);
    out.set(f.path, withTable(text, kindsTable(kinds, f.root)));
  }
  for (const k of kinds) {
    const path = `conditions/${k.name}/README.md`;
    out.set(path, withHead(await Deno.readTextFile(`${ROOT}${path}`), k));
  }
  const mod = await Deno.readTextFile(`${ROOT}${KINDS_FILE}`);
  out.set(KINDS_FILE, between(mod, KINDS_START, KINDS_END, kindsLines(kinds)));
  return await formatted(out);
}

/** `files` as `deno fmt` with the repository's settings writes them. */
async function formatted(files: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-docs-" });
  try {
    const paths = [...files.keys()];
    const temp = paths.map((p, i) => `${dir}/${i}${p.slice(p.lastIndexOf("."))}`);
    await Promise.all(paths.map((p, i) => Deno.writeTextFile(temp[i]!, files.get(p)!)));
    // The settings of deno.json's "fmt", given here since the files are outside the repository.
    const fmt = await new Deno.Command(Deno.execPath(), {
      args: ["fmt", "--quiet", "--no-config", "--line-width", "100", ...temp],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!fmt.success) throw new Error(`deno fmt: ${new TextDecoder().decode(fmt.stderr)}`);
    const texts = await Promise.all(temp.map((t) => Deno.readTextFile(t)));
    return new Map(paths.map((p, i) => [p, texts[i]!]));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The word triples of a text, lower-cased. */
function triples(text: string): Set<string> {
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const out = new Set<string>();
  for (let i = 0; i + 2 < words.length; i++) out.add(words.slice(i, i + 3).join(" "));
  return out;
}

/** The share of the word triples of `kind`'s description that the hand part of `page` repeats. */
export function overlap(kind: ConditionKind, page: string): number {
  const said = triples(kind.description);
  const hand = triples(handPart(page));
  return [...said].filter((t) => hand.has(t)).length / Math.max(1, said.size);
}

if (import.meta.main) {
  const kinds = await declarations();
  if (Deno.args.includes("--overlap")) {
    const rows = await Promise.all(kinds.map(async (k) => {
      const page = await Deno.readTextFile(`${ROOT}conditions/${k.name}/README.md`);
      return { kind: k.name, share: overlap(k, page) };
    }));
    rows.sort((a, b) => a.share - b.share);
    for (const r of rows) console.log(`${r.kind.padEnd(12)} ${(r.share * 100).toFixed(1)}%`);
    const mid = rows.length >> 1;
    const median = rows.length % 2
      ? rows[mid]!.share
      : (rows[mid - 1]!.share + rows[mid]!.share) / 2;
    console.log(`median       ${(median * 100).toFixed(1)}%`);
  } else {
    const files = await generated(kinds);
    let changed = 0;
    for (const [path, text] of files) {
      if (await Deno.readTextFile(`${ROOT}${path}`) === text) continue;
      await Deno.writeTextFile(`${ROOT}${path}`, text);
      changed++;
    }
    console.log(`deno task docs: ${changed} of ${files.size} files rewritten`);
  }
}
