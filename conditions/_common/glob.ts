/**
 * Bash-style globbing with globstar: `*`, `?`, `[abc]`, `[!a-z]`, `{a,b}`
 * and `**` (zero or more directories). Like bash, wildcards do not match a
 * leading dot, `**` does not descend into dot-directories or symlinked
 * directories (no loops), and a pattern without wildcards matches only an
 * existing path. With `strict`, a directory the pattern must look into that
 * cannot be read (permission denied) is an error instead of no match.
 *
 * @module
 */

const MAGIC = /[*?[]/;

/** The most alternatives a pattern's `{a,b}` groups may expand to. */
export const MAX_ALTERNATIVES = 1024;

/**
 * Expands `{a,b}` alternatives (nested too), as bash does before globbing.
 * Each group multiplies the count, so it throws past `MAX_ALTERNATIVES`
 * (a kind's validation says so as a usage error) rather than grow
 * exponentially in the pattern's length.
 */
export function expandBraces(pattern: string): string[] {
  const out: string[] = [];
  expandInto(pattern, out);
  return out;
}

function expandInto(pattern: string, out: string[]): void {
  let depth = 0;
  let open = -1;
  let hasComma = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{") {
      if (depth === 0) {
        open = i;
        hasComma = false;
      }
      depth++;
    } else if (ch === "," && depth === 1) {
      hasComma = true;
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0 && hasComma) {
        const pre = pattern.slice(0, open);
        const post = pattern.slice(i + 1);
        for (const p of splitTopLevel(pattern.slice(open + 1, i))) expandInto(pre + p + post, out);
        return;
      }
    }
  }
  if (out.length >= MAX_ALTERNATIVES) {
    throw new RangeError(`{a,b} groups expand to more than ${MAX_ALTERNATIVES} patterns`);
  }
  out.push(pattern);
}

function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "\\") i++;
    else if (ch === "{") depth++;
    else if (ch === "}") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** One token of a segment: `*`, or a test of one character. */
type Token = "*" | ((ch: string) => boolean);

/**
 * Compiles one path segment (no `/`) into a matcher for directory entry (or
 * archive member) names. The match is a two-pointer walk that takes time
 * linear in the name times the pattern, whatever the pattern: a regular
 * expression with one `.*` per `*` backtracks in polynomial time of the
 * star count on names that almost match (docs/development.md, linear work),
 * and names come from outside (a directory, an archive).
 */
export function segmentMatcher(seg: string): (name: string) => boolean {
  const tokens = tokenize(seg);
  const dotOk = seg.startsWith(".") || seg.startsWith("\\.");
  return (name) => (dotOk || !name.startsWith(".")) && matchTokens(tokens, Array.from(name));
}

function tokenize(seg: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    if (ch === "\\" && i + 1 < seg.length) {
      const lit = seg[++i]!;
      tokens.push((c) => c === lit);
    } else if (ch === "*") {
      if (tokens.at(-1) !== "*") tokens.push("*");
    } else if (ch === "?") {
      tokens.push(() => true);
    } else if (ch === "[" && seg.indexOf("]", i + 2) >= 0) {
      const close = seg.indexOf("]", i + 2);
      tokens.push(charClass(seg.slice(i + 1, close)));
      i = close;
    } else {
      tokens.push((c) => c === ch);
    }
  }
  return tokens;
}

/** `[abc]`, `[a-z]`, `[!a-z]` or `[^a-z]` (the body between the brackets). */
function charClass(body: string): (ch: string) => boolean {
  const neg = body[0] === "!" || body[0] === "^";
  const chars = Array.from(neg ? body.slice(1) : body);
  const ranges: [number, number][] = [];
  for (let i = 0; i < chars.length; i++) {
    const lo = chars[i]!.codePointAt(0)!;
    if (chars[i + 1] === "-" && i + 2 < chars.length) {
      ranges.push([lo, chars[i + 2]!.codePointAt(0)!]);
      i += 2;
    } else {
      ranges.push([lo, lo]);
    }
  }
  return (ch) => {
    const c = ch.codePointAt(0)!;
    return ranges.some(([lo, hi]) => c >= lo && c <= hi) !== neg;
  };
}

/**
 * Wildcard matching with one backtrack point: on a mismatch, the last `*`
 * takes one more character. Each step moves forward in the name or the
 * pattern, so it ends within (name length x pattern length) steps.
 */
function matchTokens(tokens: readonly Token[], name: readonly string[]): boolean {
  let t = 0;
  let n = 0;
  let starT = -1;
  let starN = 0;
  while (n < name.length) {
    const tok = tokens[t];
    if (tok === "*") {
      starT = t++;
      starN = n;
    } else if (tok !== undefined && tok(name[n]!)) {
      t++;
      n++;
    } else if (starT >= 0) {
      t = starT + 1;
      n = ++starN;
    } else {
      return false;
    }
  }
  while (tokens[t] === "*") t++;
  return t === tokens.length;
}

function unescape(seg: string): string {
  return seg.replace(/\\(.)/g, "$1");
}

function join(dir: string, name: string): string {
  if (dir === "") return name;
  return dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

/**
 * Every existing path matching the pattern, sorted. Relative patterns resolve against `cwd`.
 * `strict`: a directory that cannot be read throws (its error) instead of holding no match,
 * for a caller to whom a missed match would be a false verdict (`--absent`, `--max`).
 */
export async function glob(
  pattern: string,
  opts: { cwd?: string; signal?: AbortSignal; strict?: boolean } = {},
): Promise<string[]> {
  const found = new Set<string>();
  const ctx = { cwd: opts.cwd, signal: opts.signal, strict: opts.strict ?? false };
  for (const p of expandBraces(pattern)) await globOne(p, found, ctx);
  return [...found].sort();
}

async function globOne(
  pattern: string,
  found: Set<string>,
  { cwd, signal, strict }: { cwd?: string; signal?: AbortSignal; strict: boolean },
) {
  /** Whether an error means no match here; else it is thrown (see `glob`). */
  const noMatch = (e: unknown) => absent(e) || !strict;
  const list = async (dir: string): Promise<Deno.DirEntry[]> => {
    try {
      return await Array.fromAsync(Deno.readDir(dir));
    } catch (e) {
      if (noMatch(e)) return [];
      throw e;
    }
  };
  const isDir = async (path: string): Promise<boolean> => {
    try {
      return (await Deno.stat(path)).isDirectory;
    } catch (e) {
      if (noMatch(e)) return false;
      throw e;
    }
  };
  const absolute = pattern.startsWith("/");
  const segs = pattern.split("/").filter((s) => s !== "");
  // Leading literal segments form the base directory: nothing to list there.
  let base = absolute ? "/" : "";
  let i = 0;
  while (i < segs.length - 1 && !MAGIC.test(segs[i]!)) {
    base = join(base, unescape(segs[i]!));
    i++;
  }
  const rest = segs.slice(i);
  const fsPath = (
    p: string,
  ) => (cwd && !p.startsWith("/") ? join(cwd, p === "" ? "." : p) : p === "" ? "." : p);

  const walk = async (dir: string, at: number): Promise<void> => {
    signal?.throwIfAborted();
    if (at === rest.length) {
      found.add(dir);
      return;
    }
    const seg = rest[at]!;
    const last = at === rest.length - 1;
    if (seg === "**") {
      // Zero directories...
      if (last) {
        // `dir/**` matches everything below dir (bash globstar).
      } else {
        await walk(dir, at + 1);
      }
      // ...or one more level, then still inside the `**`.
      for (const e of await list(fsPath(dir))) {
        if (e.name.startsWith(".")) continue;
        const child = join(dir, e.name);
        if (last) found.add(child);
        if (e.isDirectory && !e.isSymlink) await walk(child, at);
      }
      return;
    }
    if (!MAGIC.test(seg)) {
      const child = join(dir, unescape(seg));
      let info: Deno.FileInfo;
      try {
        info = await Deno.stat(fsPath(child));
      } catch (e) {
        if (noMatch(e)) return; // does not exist (yet): no match
        throw e;
      }
      if (last) found.add(child);
      else if (info.isDirectory) await walk(child, at + 1);
      return;
    }
    const match = segmentMatcher(seg);
    for (const e of await list(fsPath(dir))) {
      if (!match(e.name)) continue;
      const child = join(dir, e.name);
      if (last) found.add(child);
      else if (e.isDirectory || (e.isSymlink && await isDir(fsPath(child)))) {
        await walk(child, at + 1);
      }
    }
  };
  if (rest.length === 0) return;
  await walk(base, 0);
}

/** Whether an error says the path is not there (or is not a directory). */
function absent(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory;
}
