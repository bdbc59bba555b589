/**
 * Recipes (`--config FILE`, `-f FILE`, `-f -`): waits written in a YAML or
 * JSON file (docs/recipe.md). A recipe is turned into command-line words
 * and goes through the one parser (engine/grammar.ts), so it is validated
 * exactly like a command line; a usage error is then located at the file's
 * line. The YAML library is imported only when a recipe is read.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { GLOBAL_FLAGS } from "./options.ts";
import type { Registry } from "./registry.ts";
import { didYouMean } from "./suggest.ts";
import { lineAt, readYaml, type YamlDocument } from "./yaml.ts";
import { paced, Pacer } from "./pace.ts";
import { MAX_GROUP_DEPTH, TOO_DEEP } from "./plan.ts";

/** Keys of a condition entry. */
const CONDITION_KEYS = [
  "kind",
  "target",
  "label",
  "not",
  "flags",
  "command",
  "attempt-timeout",
  "attempt_timeout",
];
/** Top-level keys besides the global options. */
const SECTION_KEYS = ["conditions", "guards", "then"];
/** Global options a recipe may not set: they only make sense on the command line. */
const CLI_ONLY = new Set(GLOBAL_FLAGS.filter((f) => f.cliOnly).map((f) => f.name));

/** A recipe turned into command-line words, with where each condition came from. */
export interface Expanded {
  /** The whole command line: the recipe's words merged with the rest of the command line's. */
  readonly argv: string[];
  /**
   * Rewrites a usage error from parsing `argv` so it names the file and line
   * (conditions from the command line keep their message).
   */
  locate(e: UsageError): UsageError;
}

/** How many leading words of `argv` are global options and their values. */
function globalPrefix(argv: readonly string[]): number {
  let i = 0;
  while (i < argv.length) {
    const tok = argv[i]!;
    if (!tok.startsWith("-") || tok === "-" || tok === "--") break;
    const spec = GLOBAL_FLAGS.find((f) => `--${f.name}` === tok || `-${f.short}` === tok);
    i += spec && spec.type !== "boolean" ? 2 : 1;
  }
  return Math.min(i, argv.length);
}

/** Splits argv into the `--config`/`-f` value (if any) and the rest, global section only. */
export function takeConfig(argv: readonly string[]): { file: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let file: string | undefined;
  let i = 0;
  for (; i < argv.length; i++) {
    const tok = argv[i]!;
    if (!tok.startsWith("-") || tok === "-" || tok === "--") break;
    const m = /^(?:--config|-f)(?:=(.*))?$/s.exec(tok);
    if (!m) {
      rest.push(tok);
      // A global option's value is the next word (booleans take none).
      const spec = GLOBAL_FLAGS.find((f) => `--${f.name}` === tok || `-${f.short}` === tok);
      if (spec && spec.type !== "boolean" && i + 1 < argv.length) rest.push(argv[++i]!);
      continue;
    }
    if (file !== undefined) throw new UsageError("--config", "given more than once");
    const value = m[1] ?? argv[++i];
    if (value === undefined || value === "") {
      throw new UsageError("--config", "expected a file name (or - for stdin)");
    }
    file = value;
  }
  return { file, rest: [...rest, ...argv.slice(i)] };
}

interface Origin {
  readonly line: number;
  /** Line of each flag key of the entry. */
  readonly flagLines: ReadonlyMap<string, number>;
}

/** A place in the recipe: keys of mappings and indexes of lists. */
type Path = (string | number)[];

/** Throws the usage error for `file` (and `line`, when known). */
function failAt(file: string, line: number | undefined, message: string): never {
  throw new UsageError(line === undefined ? file : `${file}:${line}`, message);
}

/**
 * Turns recipe `text` (read from `file`, as the user named it) and the rest
 * of the command line into one command line. Throws a `UsageError` naming
 * the file and line for what the parser cannot see: a file that is not
 * YAML or JSON, an unknown key, a value of the wrong shape.
 */
export async function expandRecipe(
  text: string,
  file: string,
  cliRest: readonly string[],
  registry: Registry,
  pacer: Pacer = new Pacer(),
): Promise<Expanded> {
  const doc = await readRecipe(text, file, pacer);
  const expansion = new Expansion(file, doc, cliRest, registry);
  const globals = expansion.globals();
  await paced(expansion.sections(), pacer);
  const argv = expansion.argv(globals, expansion.then());
  return { argv, locate: (e) => expansion.locate(e) };
}

/** The recipe's one document, or the usage error saying why there is none to expand. */
async function readRecipe(text: string, file: string, pacer: Pacer): Promise<YamlDocument> {
  const tooDeep = () =>
    failAt(file, undefined, `not valid YAML or JSON: it is nested too deeply (${TOO_DEEP})`);
  let docs: YamlDocument[];
  try {
    // A large recipe is read in a worker that a signal terminates (engine/yaml.ts).
    docs = await readYaml(text, { all: false, uniqueKeys: true, lines: true }, pacer.signal);
  } catch (e) {
    if (e instanceof RangeError) tooDeep();
    throw e;
  }
  const doc = docs[0]!;
  if (doc.error !== undefined) {
    // The YAML parser recurses once per level: a few hundred levels exhaust the stack.
    if (/call stack/i.test(doc.error.message)) tooDeep();
    const first = doc.error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    failAt(file, doc.error.line, `not valid YAML or JSON: ${first}`);
  }
  if (doc.empty) {
    // Nothing but blanks and comments: say so, and for `-` that standard input gave nothing
    // (closed, or read from /dev/null) rather than "expected a mapping".
    failAt(
      file,
      undefined,
      file === "-"
        ? "standard input is empty (closed, or nothing was written to it); write the recipe to it, or give a file"
        : "the file is empty (no options, no conditions)",
    );
  }
  if (doc.valueError !== undefined) {
    failAt(file, undefined, `not valid YAML or JSON: ${doc.valueError}`);
  }
  const root = doc.value;
  if (root === null || typeof root !== "object" || Array.isArray(root)) {
    failAt(file, 1, "expected a mapping of options and conditions (conditions: [...])");
  }
  return doc;
}

/**
 * One recipe being expanded: its top-level mapping, where its nodes stand,
 * the command line's global options, and what the entries have made so far
 * (each condition's words and where it came from).
 */
class Expansion {
  readonly #file: string;
  readonly #lines: YamlDocument["lines"];
  readonly #top: Record<string, unknown>;
  readonly #cliRest: readonly string[];
  readonly #registry: Registry;
  /** The global options the command line sets: they win over the file's. */
  readonly #cliGlobals = new Set<string>();
  /** Where each of the file's conditions came from, in order. */
  readonly #origins: Origin[] = [];
  /** Each of the file's conditions (or groups) as words, in order. */
  readonly #conditions: string[][] = [];

  constructor(file: string, doc: YamlDocument, cliRest: readonly string[], registry: Registry) {
    this.#file = file;
    this.#lines = doc.lines;
    this.#top = doc.value as Record<string, unknown>;
    this.#cliRest = cliRest;
    this.#registry = registry;
    for (const tok of cliRest.slice(0, globalPrefix(cliRest))) {
      const name = tok.replace(/=.*$/s, "");
      const spec = GLOBAL_FLAGS.find((f) => `--${f.name}` === name || `-${f.short}` === name);
      if (spec) this.#cliGlobals.add(spec.name);
    }
  }

  #fail(line: number | undefined, message: string): never {
    return failAt(this.#file, line, message);
  }

  #lineOf(path: readonly (string | number)[]): number | undefined {
    return lineAt(this.#lines, path);
  }

  /** The file's global options as words, less those the command line sets. */
  globals(): string[] {
    const words: string[] = [];
    const globalNames = GLOBAL_FLAGS.map((f) => f.name).filter((n) => !CLI_ONLY.has(n));
    for (const [key, value] of Object.entries(this.#top)) {
      if (SECTION_KEYS.includes(key)) continue;
      const spec = GLOBAL_FLAGS.find((f) => f.name === key && !CLI_ONLY.has(f.name));
      if (!spec) {
        this.#fail(
          this.#lineOf([key]),
          `unknown key ${JSON.stringify(key)}${didYouMean(key, [...globalNames, ...SECTION_KEYS])}`,
        );
      }
      if (this.#cliGlobals.has(key)) continue;
      words.push(...flagWords(key, value, (m) => this.#fail(this.#lineOf([key]), `${key}: ${m}`)));
    }
    return words;
  }

  // Generators that yield once per entry: the words of tens of thousands of conditions are made
  // in slices with turns of the event loop between them (engine/pace.ts).

  /** Expands `conditions:` then `guards:`, an entry at a time. */
  *sections(): Generator<void, void> {
    for (const section of ["conditions", "guards"] as const) {
      const list = this.#top[section];
      if (list === undefined) continue;
      if (!Array.isArray(list)) {
        this.#fail(this.#lineOf([section]), `${section}: expected a list of conditions`);
      }
      for (const [i, entry] of (list as unknown[]).entries()) {
        this.#conditions.push(yield* this.#entryWords(entry, [section, i], section === "guards"));
      }
    }
  }

  /** One entry's words: a condition, or `any [ … ]` / `all [ … ]` of entries. */
  *#entryWords(entry: unknown, path: Path, guard: boolean): Generator<void, string[]> {
    yield;
    const where = whereOf(path);
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      this.#fail(
        this.#lineOf(path),
        `${where}: expected a mapping with kind, target and flags (or any:/all: and a list)`,
      );
    }
    const e = entry as Record<string, unknown>;
    const op = "any" in e ? "any" : "all" in e ? "all" : undefined;
    if (op !== undefined) return yield* this.#groupWords(e, op, path, guard, where);
    return this.#conditionWords(e, path, guard, where);
  }

  /** A condition entry's words (`guard`, `not`, kind, target, its flags, `-- command`). */
  #conditionWords(
    e: Record<string, unknown>,
    path: Path,
    guard: boolean,
    where: string,
  ): string[] {
    const at = this.#lineOf(path);
    for (const key of Object.keys(e)) {
      if (!CONDITION_KEYS.includes(key)) {
        this.#fail(
          this.#lineOf([...path, key]) ?? at,
          `${where}: unknown key ${JSON.stringify(key)}${didYouMean(key, CONDITION_KEYS)}`,
        );
      }
    }
    const words: string[] = [];
    if (guard) words.push("guard");
    if (e.not !== undefined && typeof e.not !== "boolean") {
      this.#fail(this.#lineOf([...path, "not"]), `${where}: not: expected true or false`);
    }
    if (e.not === true) words.push("not");
    words.push(this.#kindWord(e, path, where));
    if (e.target !== undefined) {
      if (typeof e.target !== "string" && typeof e.target !== "number") {
        this.#fail(this.#lineOf([...path, "target"]), `${where}: target: expected a text`);
      }
      words.push(String(e.target));
    }
    const flagLines = new Map<string, number>();
    words.push(...this.#optionWords(e, path, where, flagLines));
    words.push(...this.#commandWords(e, path, where));
    this.#origins.push({ line: at ?? 0, flagLines });
    return words;
  }

  /** The entry's kind, which the registry knows. */
  #kindWord(e: Record<string, unknown>, path: Path, where: string): string {
    const at = this.#lineOf(path);
    if (typeof e.kind !== "string" || e.kind === "") {
      this.#fail(at, `${where}: expected kind: <kind> (a condition kind such as tcp or http)`);
    }
    const kind = e.kind as string;
    if (!this.#registry.lookup(kind)) {
      this.#fail(
        this.#lineOf([...path, "kind"]) ?? at,
        `${where}: unknown kind ${JSON.stringify(kind)}${didYouMean(kind, this.#registry.words)}`,
      );
    }
    return kind;
  }

  /**
   * The entry's label, attempt-timeout and flags as `--name=value` words;
   * notes each flag's line in `flagLines`.
   */
  #optionWords(
    e: Record<string, unknown>,
    path: Path,
    where: string,
    flagLines: Map<string, number>,
  ): string[] {
    const at = this.#lineOf(path);
    const words: string[] = [];
    const add = (name: string, value: unknown, line: number | undefined, prefix: string) => {
      words.push(...flagWords(name, value, (m) => this.#fail(line, `${prefix}${m}`)));
      flagLines.set(name, line ?? at ?? 0);
    };
    if (e.label !== undefined) add("label", e.label, this.#lineOf([...path, "label"]), "");
    // The condition's own --attempt-timeout, as the global key is spelled or with `_`.
    for (const key of ["attempt-timeout", "attempt_timeout"]) {
      if (e[key] === undefined) continue;
      add("attempt-timeout", e[key], this.#lineOf([...path, key]) ?? at, `${where}: ${key}: `);
    }
    if (e.flags !== undefined) {
      if (e.flags === null || typeof e.flags !== "object" || Array.isArray(e.flags)) {
        this.#fail(
          this.#lineOf([...path, "flags"]),
          `${where}: flags: expected a mapping of flag: value`,
        );
      }
      for (const [name, value] of Object.entries(e.flags as Record<string, unknown>)) {
        const line = this.#lineOf([...path, "flags", name]) ?? at;
        add(name.replace(/^--?/, ""), value, line, `${where}: ${name}: `);
      }
    }
    return words;
  }

  /** The entry's `command:` as `-- word…`, or nothing. */
  #commandWords(e: Record<string, unknown>, path: Path, where: string): string[] {
    if (e.command === undefined) return [];
    const cmd = e.command;
    if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((w) => typeof w === "string")) {
      this.#fail(this.#lineOf([...path, "command"]), `${where}: command: expected a list of words`);
    }
    return ["--", ...(cmd as string[])];
  }

  /** `any: [ … ]` / `all: [ … ]` (with an optional label) as a group's words. */
  *#groupWords(
    e: Record<string, unknown>,
    op: "any" | "all",
    path: Path,
    guard: boolean,
    where: string,
  ): Generator<void, string[]> {
    const at = this.#lineOf(path);
    if (guard) {
      this.#fail(at, `${where}: a guard is one condition, not a group: put guards in guards:`);
    }
    // The command line's limit (engine/grammar.ts), said with the line: the words would only
    // meet it after this reader recursed as deep.
    if (path.filter((p) => p === "any" || p === "all").length >= MAX_GROUP_DEPTH) {
      this.#fail(at, `${TOO_DEEP}; flatten the plan`);
    }
    for (const key of Object.keys(e)) {
      if (key !== op && key !== "label") {
        this.#fail(
          this.#lineOf([...path, key]) ?? at,
          `${where}: unknown key ${JSON.stringify(key)} in a group (a group has ${op}: and label:)`,
        );
      }
    }
    const members = e[op];
    if (!Array.isArray(members) || members.length === 0) {
      this.#fail(
        this.#lineOf([...path, op]) ?? at,
        `${where}: ${op}: expected a list of conditions`,
      );
    }
    const words = [op, "["];
    for (const [i, m] of (members as unknown[]).entries()) {
      if (i > 0) words.push("--");
      for (const w of yield* this.#entryWords(m, [...path, op, i], false)) words.push(w);
    }
    words.push("]");
    if (e.label !== undefined) {
      const line = this.#lineOf([...path, "label"]);
      words.push(...flagWords("label", e.label, (m) => this.#fail(line, m)));
    }
    return words;
  }

  /** The file's `then:` as `then word…`, or nothing. */
  then(): string[] {
    const t = this.#top.then;
    if (t === undefined) return [];
    if (typeof t === "string") {
      // `then: npm test` would look for a program named "npm test" (docs/recipe.md).
      const words = t.trim().split(/\s+/).filter(Boolean);
      this.#fail(
        this.#lineOf(["then"]),
        `then: expected a list of words, not one text: then: ${
          JSON.stringify(words.length ? words : ["<command>", "<args...>"])
        }`,
      );
    }
    const ok = Array.isArray(t) && t.length > 0 && t.every((w) => typeof w === "string");
    if (!ok) this.#fail(this.#lineOf(["then"]), "then: expected a command as a list of words");
    return ["then", ...(t as string[])];
  }

  /**
   * The whole command line: its globals, the file's globals, the file's conditions, the
   * command line's conditions (and its `then`, which wins), then the file's `then`.
   */
  argv(globals: readonly string[], then: readonly string[]): string[] {
    const cliRest = this.#cliRest;
    const cut = globalPrefix(cliRest);
    let cliTail = cliRest.slice(cut);
    while (cliTail[0] === "--") cliTail = cliTail.slice(1);
    const cliHasThen = cliTail.some((w, i) => w === "then" && cliTail[i - 1] === "--");
    const argv = [...cliRest.slice(0, cut), ...globals];
    this.#conditions.forEach((words, i) => argv.push(...(i > 0 ? ["--"] : []), ...words));
    if (cliTail.length > 0) argv.push(...(this.#conditions.length > 0 ? ["--"] : []), ...cliTail);
    if (then.length > 0 && !cliHasThen) argv.push("--", ...then);
    return argv;
  }

  /** A usage error from parsing the expanded words, naming the file's line where it can. */
  locate(e: UsageError): UsageError {
    const m = /^condition (\d+)(?: \(([^)]*)\))?(?:: --([\w-]+))?/.exec(e.where);
    if (m) {
      const origin = this.#origins[Number(m[1]) - 1];
      if (!origin) return e; // A condition of the command line.
      const line = (m[3] !== undefined ? origin.flagLines.get(m[3]) : undefined) ?? origin.line;
      return new UsageError(`${this.#file}:${line}: ${e.where}`, e.message, e.helpTopic);
    }
    const g = /^--([\w-]+)$/.exec(e.where);
    if (g && !this.#cliGlobals.has(g[1]!) && g[1]! in this.#top) {
      const line = this.#lineOf([g[1]!]);
      return new UsageError(`${this.#file}:${line}: ${e.where}`, e.message, e.helpTopic);
    }
    return e;
  }
}

/** How an entry at `path` is named in a message: `conditions[0].any[1]`. */
function whereOf(path: Path): string {
  return path.map((p, i) => i === 0 ? p : `[${p}]`).join("").replace(/\]\[(any|all)\]/g, "].$1");
}

/** A flag's recipe value as command-line words (`--name=value`, repeated for a list). */
function flagWords(name: string, value: unknown, fail: (m: string) => never): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => flagWords(name, v, fail));
  if (value === true) return [`--${name}`];
  if (value === false) return [`--${name}=false`];
  if (typeof value === "string" || typeof value === "number") return [`--${name}=${value}`];
  return fail(
    `expected a text, a number, true/false or a list of them, got ${
      value === null ? "null" : typeof value
    }`,
  );
}
