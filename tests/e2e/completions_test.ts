/**
 * `waitcmd completions bash|zsh|fish`, run in the real shells: each case is
 * a command line typed so far (its last word is the one being completed),
 * and the replies are what the shell's completion would offer.
 *
 * bash: COMP_WORDS/COMP_CWORD as readline sets them (it splits `--flag=value`
 * at `=`), then the completion function. zsh: the script loaded after
 * compinit, then bashcompinit's `_bash_complete` with `words`/`CURRENT`
 * set and `compadd` standing in to print the matches (zsh matches them
 * against the typed prefix afterwards, as the test does). fish:
 * `complete -C`.
 *
 * @module
 */

import { assert, assertEquals } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { runCli } from "./_cli.ts";

type Shell = "bash" | "zsh" | "fish";

/** One command line and what its completion must (or must not) offer. */
interface Case {
  /** The words after `waitcmd`; the last one is being completed (may be empty). */
  readonly line: readonly string[];
  /** The exact replies (order ignored). */
  readonly exactly?: readonly string[];
  readonly includes?: readonly string[];
  readonly excludes?: readonly string[];
}

const KINDS_SAMPLE = ["http", "tcp", "k8s", "docker", "exec"];
const DOCKER_STATES = [
  "created",
  "running",
  "paused",
  "restarting",
  "removing",
  "exited",
  "dead",
  "any",
];

const CASES: readonly Case[] = [
  // A flag name shared by kinds: its values come from the current condition's kind.
  { line: ["http", "http://x/", "--status", ""], exactly: [] },
  { line: ["docker", "web", "--status", ""], exactly: DOCKER_STATES },
  {
    line: ["docker", "web", "--health", ""],
    exactly: ["healthy", "unhealthy", "starting", "none"],
  },
  {
    line: ["tcp", "db:5432", "--", "docker", "web", "--status", "r"],
    exactly: ["running", "restarting", "removing"],
  },
  { line: ["docker", "web", "--", "http", "http://x/", "--status", ""], exactly: [] },
  // Shells, durations.
  { line: ["completions", ""], exactly: ["bash", "zsh", "fish"] },
  { line: ["completions", "z"], exactly: ["zsh"] },
  { line: ["--timeout", ""], exactly: [] },
  { line: ["-t", ""], exactly: [] },
  { line: ["--interval", "5s", "--attempt-timeout", ""], exactly: [] },
  // A flag's value is not a kind: `file` here is log's --contains text.
  {
    line: ["log", "app.log", "--contains", "file", "--"],
    includes: ["--min-matches", "--from-start", "--label", "--"],
    excludes: ["--nonempty", "--exists", "--deleted"],
  },
  {
    line: ["--output", "json", "log", "app.log", "--contains", "tcp", "--m"],
    exactly: ["--matches", "--min-matches"],
  },
  // A value-taking global option's value is not a kind either.
  { line: ["--report", "http", ""], includes: KINDS_SAMPLE, excludes: ["--status"] },
  // First word: kinds, reserved words, global options long and short.
  {
    line: [""],
    includes: [
      ...KINDS_SAMPLE,
      ...["guard", "not", "doctor", "help", "completions", "--timeout", "-t", "-i", "-o", "-q"],
      ...["-f", "--backoff", "--jitter", "--delay", "--max-interval", "--report", "--explain"],
    ],
  },
  { line: ["-"], includes: ["-t", "-o", "--timeout", "--no-color"], excludes: ["tcp"] },
  {
    line: ["--timeout", "5s", ""],
    includes: [...KINDS_SAMPLE, "not", "guard"],
    excludes: ["doctor"],
  },
  { line: ["--backoff", ""], exactly: ["constant", "exponential"] },
  { line: ["--progress", ""], exactly: ["attempts", "changes"] },
  { line: ["--max-"], exactly: ["--max-attempts", "--max-interval"] },
  { line: ["--timeout-"], exactly: ["--timeout-exit-code"] },
  { line: ["docker", "web", "--listening", "8080", "--ex"], exactly: ["--exit-code"] },
  { line: ["--output", ""], exactly: ["text", "json", "jsonl"] },
  { line: ["-o", ""], exactly: ["text", "json", "jsonl"] },
  { line: ["--output=j"], exactly: ["json", "jsonl"] },
  { line: ["--mode", ""], exactly: ["all", "any"] },
  // Separators, guard and not.
  { line: ["tcp", "db:5432", "--", ""], includes: [...KINDS_SAMPLE, "guard", "not", "then"] },
  { line: ["guard", ""], includes: [...KINDS_SAMPLE, "not"], excludes: ["then", "guard"] },
  { line: ["not", ""], includes: KINDS_SAMPLE, excludes: ["then", "not"] },
  { line: ["tcp", "db:5432", "--", "not", "ht"], exactly: ["http"] },
  { line: ["not", "docker", "web", "--status", "e"], exactly: ["exited"] },
  { line: ["tcp", "db:5432", "--", "then", "ech"], includes: ["echo"] },
  // An alias opens its kind's condition.
  { line: ["k8s", "deployment/web", "--for", ""], includes: ["rollout", "ready", "exists"] },
  { line: ["dns", "example.com", "--type", "AA"], exactly: ["AAAA"] },
  { line: ["file", "/x", "--exists="], exactly: ["true", "false"] },
  { line: ["file", "/x", "--exists", "--"], includes: ["--nonempty", "--contains", "--"] },
  // doctor's options.
  { line: ["doctor", ""], exactly: ["--output", "-o", "--require"] },
  { line: ["doctor", "-o", ""], exactly: ["text", "json"] },
  { line: ["doctor", "--require", "ht"], exactly: ["http"] },
  // exec's command, and a condition after it.
  { line: ["exec", "--", "ech"], includes: ["echo"] },
  { line: ["exec", "--", "ls", "--", ""], includes: [...KINDS_SAMPLE, "then"] },
  { line: ["exec", "--", "ls", "--", "tcp", "db:5432", "--l"], exactly: ["--label"] },
  // Groups: any/all, their [, members inside, the ], --label after it.
  { line: ["any", ""], exactly: ["["] },
  { line: ["tcp", "db:5432", "--", "al"], exactly: ["all"] },
  {
    line: ["any", "[", ""],
    includes: [...KINDS_SAMPLE, "guard", "not", "any", "all"],
    excludes: ["then", "]", "--timeout"],
  },
  {
    line: ["all", "[", "tcp", "db:5432", "--", "any", "[", "docker", "web", "--status", "e"],
    exactly: ["exited"],
  },
  { line: ["any", "[", "tcp", "db:5432", "--", ""], excludes: ["then"] },
  { line: ["any", "[", "tcp", "db:5432", "--l"], exactly: ["--label"] },
  { line: ["any", "[", "tcp", "db:5432", "]"], exactly: ["]"] },
  { line: ["any", "[", "tcp", "db:5432", "]", ""], exactly: ["--", "--label"] },
  {
    line: ["all", "[", "any", "[", "tcp", "db:5432", "]", ""],
    exactly: ["--", "--label", "]"],
  },
  { line: ["any", "[", "tcp", "db:5432", "]", "--label", "up", "--", ""], includes: ["then"] },
  { line: ["any", "[", "exec", "--", "ls", "]", "--", "th"], exactly: ["then"] },
  { line: ["tcp", "db:5432", ""], includes: ["--", "--label"], excludes: ["]"] },
  // A kind's short flag, and its value.
  { line: ["orch", "-"], includes: ["-f", "--file", "--for", "--label"] },
  { line: ["orch", "-f", "sub/a"], exactly: ["sub/a.txt"] },
  { line: ["any", "[", "k8s", "-f", "sub/b"], exactly: ["sub/b.log"] },
  // help: the kinds and the topics.
  { line: ["help", ""], includes: [...KINDS_SAMPLE, "groups", "captures", "then", "recipe"] },
  { line: ["help", "gr"], exactly: ["groups", "grpc"] },
  { line: ["guard", "not", "h"], exactly: ["http"] },
  // Files where a kind's target is a path.
  { line: ["file", "sub/"], exactly: ["sub/a.txt", "sub/b.log"] },
  { line: ["log", "sub/b"], exactly: ["sub/b.log"] },
  { line: ["--report", "sub/a"], exactly: ["sub/a.txt"] },
];

/** bash's COMP_WORDS splits `--flag=value` into `--flag`, `=`, `value`. */
function bashWords(line: readonly string[]): string[] {
  return line.flatMap((w) => {
    const m = /^(-[^=]+)=(.*)$/s.exec(w);
    if (!m) return [w];
    return m[2] === "" ? [m[1]!, "="] : [m[1]!, "=", m[2]!];
  });
}

const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The harness script that prints one `<case>\t<reply>` line per reply. */
function harness(shell: Shell, scriptPath: string): string {
  switch (shell) {
    case "bash":
      return [
        `source ${sq(scriptPath)}`,
        ...CASES.map((c, i) => {
          const words = ["waitcmd", ...bashWords(c.line)];
          return `COMP_WORDS=(${words.map(sq).join(" ")}); COMP_CWORD=${
            words.length - 1
          }; COMPREPLY=(); _waitcmd; for r in "\${COMPREPLY[@]}"; do printf '${i}\\t%s\\n' "$r"; done`;
        }),
      ].join("\n");
    case "zsh":
      return [
        "autoload -U compinit && compinit -u -D",
        `source ${sq(scriptPath)}`,
        // Outside a completion widget compadd cannot run: print the matches it is given instead.
        'compadd() { local -a a; a=("$@"); print -rl -- "${(@)a[${a[(i)-]}+1,-1]}"; }',
        ...CASES.map((c, i) => {
          const words = ["waitcmd", ...c.line];
          return `words=(${words.map(sq).join(" ")}); CURRENT=${words.length}; PREFIX=${
            sq(words.at(-1)!)
          }; _bash_complete -F _waitcmd | while IFS= read -r r; do printf '${i}\\t%s\\n' "$r"; done`;
        }),
      ].join("\n");
    case "fish":
      return [
        `source ${sq(scriptPath)}`,
        ...CASES.map((c, i) =>
          `for r in (complete -C ${
            sq(["waitcmd", ...c.line].join(" "))
          }); printf '${i}\\t%s\\n' (string replace -r '\\t.*' '' -- $r); end`
        ),
      ].join("\n");
  }
}

/** Runs every case in `shell`; returns the replies of each case. */
async function complete(shell: Shell): Promise<string[][]> {
  const r = await runCli(["completions", shell]);
  assertEquals(r.code, 0, r.stderr);
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-completions-" });
  try {
    await Deno.mkdir(`${dir}/sub`);
    await Deno.writeTextFile(`${dir}/sub/a.txt`, "");
    await Deno.writeTextFile(`${dir}/sub/b.log`, "");
    const scriptPath = `${dir}/waitcmd.${shell}`;
    await Deno.writeTextFile(scriptPath, r.stdout);
    const harnessPath = `${dir}/harness.${shell}`;
    await Deno.writeTextFile(harnessPath, harness(shell, scriptPath) + "\n");
    const out = await new Deno.Command(shell, {
      args: shell === "zsh" ? ["-f", harnessPath] : [harnessPath],
      cwd: dir,
      env: { HOME: dir, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", TERM: "dumb" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert(out.success, `${shell} harness failed:\n${stderr}`);
    assertEquals(stderr, "", `${shell} printed errors`);
    const replies: string[][] = CASES.map(() => []);
    for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
      const tab = line.indexOf("\t");
      if (tab < 0) continue;
      replies[Number(line.slice(0, tab))]!.push(line.slice(tab + 1));
    }
    return replies;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** What the user would be offered: zsh matches against the typed word itself; a `--flag=` prefix is dropped. */
function offered(shell: Shell, c: Case, replies: readonly string[]): string[] {
  const cur = c.line.at(-1)!;
  const eq = /^(-[^=]+=)(.*)$/s.exec(cur);
  const typed = eq ? eq[2]! : cur;
  let out = replies.map((r) => (eq && r.startsWith(eq[1]!) ? r.slice(eq[1]!.length) : r));
  if (shell === "zsh") out = out.filter((r) => r.startsWith(typed));
  return [...new Set(out.map((r) => r.trimEnd()).filter((r) => r !== ""))];
}

async function available(tool: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(tool, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return out.success ? undefined : `${tool} --version failed`;
  } catch {
    return `${tool} is not installed (scripts/install-test-deps.sh)`;
  }
}

for (const shell of ["bash", "zsh", "fish"] as const) {
  const missing = await available(shell);
  Deno.test({
    name: `waitcmd completions ${shell}: offers what fits where the cursor is`,
    ignore: ignoreWithout(shell, missing),
    fn: async () => {
      const replies = await complete(shell);
      const failures: string[] = [];
      CASES.forEach((c, i) => {
        const got = offered(shell, c, replies[i]!);
        const where = `waitcmd ${c.line.join(" ")}<TAB> offered [${got.join(" ")}]`;
        if (c.exactly && [...got].sort().join(" ") !== [...c.exactly].sort().join(" ")) {
          failures.push(`${where}, expected exactly [${c.exactly.join(" ")}]`);
        }
        for (const w of c.includes ?? []) {
          // fish does not offer the word that is already typed in full.
          if (shell === "fish" && w === c.line.at(-1)) continue;
          if (!got.includes(w)) failures.push(`${where}, lacks ${w}`);
        }
        for (const w of c.excludes ?? []) {
          if (got.includes(w)) failures.push(`${where}, should not offer ${w}`);
        }
      });
      assertEquals(failures, []);
    },
  });
}

/** How each script is checked without running it: each shell's own parser, and shellcheck. */
const CHECKERS: readonly { tool: string; shell: Shell; args: readonly string[] }[] = [
  { tool: "bash", shell: "bash", args: ["-n"] },
  { tool: "zsh", shell: "zsh", args: ["-n"] },
  { tool: "fish", shell: "fish", args: ["--no-execute"] },
  { tool: "shellcheck", shell: "bash", args: ["--shell=bash", "--severity=style"] },
];

for (const { tool, shell, args } of CHECKERS) {
  const missing = await available(tool);
  Deno.test({
    name: `waitcmd completions ${shell}: ends with one newline, and ${tool} ${
      args.join(" ")
    } finds nothing`,
    ignore: ignoreWithout(tool, missing),
    fn: async () => {
      const r = await runCli(["completions", shell]);
      assertEquals(r.code, 0, r.stderr);
      assert(r.stdout.endsWith("\n") && !r.stdout.endsWith("\n\n"), "one trailing newline");
      const dir = await Deno.makeTempDir({ prefix: "waitcmd-completions-" });
      try {
        const path = `${dir}/waitcmd.${shell}`;
        await Deno.writeTextFile(path, r.stdout);
        const out = await new Deno.Command(tool, {
          args: [...args, path],
          env: { HOME: dir, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        assertEquals(said, "", `${tool} on the ${shell} script`);
        assert(out.success, `${tool} exited ${out.code}`);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
