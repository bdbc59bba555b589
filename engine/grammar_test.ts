import { assert, assertEquals, assertStringIncludes } from "../tests/_assert.ts";
import { UsageError } from "./errors.ts";
import { type Command, parseArgv } from "./grammar.ts";
import type { Plan, PlanNode } from "./plan.ts";
import { createRegistry } from "./registry.ts";
import { type ConditionKind, defineKind } from "./types.ts";
import { exec } from "../conditions/exec/mod.ts";
import { file } from "../conditions/file/mod.ts";
import { glob } from "../conditions/glob/mod.ts";
import { ports } from "../conditions/ports/mod.ts";
import { process } from "../conditions/process/mod.ts";
import { tcp } from "../conditions/tcp/mod.ts";
import { unix } from "../conditions/unix/mod.ts";

// The local kinds, plus a kind with an alias and a secret flag, exercise every grammar rule.
const secretKind: ConditionKind = defineKind<undefined>({
  name: "vault",
  aliases: ["vlt"],
  summary: "",
  description: "",
  target: { shape: "required", placeholder: "NAME", description: "" },
  flags: [
    { name: "password", type: "string", secret: true, description: "" },
    { name: "level", type: "enum", values: ["low", "high"], description: "" },
    { name: "file", short: "f", type: "string", description: "" },
  ],
  examples: [],
  parse: (input) => ({ target: input.target!, options: undefined }),
  load: () => Promise.reject(new Error("not used")),
});
const registry = createRegistry([tcp, unix, ports, file, glob, exec, process, secretKind]);

function parse(argv: string[]): Command {
  return parseArgv(argv, registry, {});
}

function planOf(argv: string[]): Plan {
  const c = parse(argv);
  if (c.type !== "run") throw new Error(`expected a run, got ${c.type}`);
  return c.plan;
}

function usageError(argv: string[]): string {
  try {
    parse(argv);
  } catch (e) {
    if (e instanceof UsageError) return e.format();
    throw e;
  }
  throw new Error(`expected a usage error for ${JSON.stringify(argv)}`);
}

type Check = (p: Plan) => void;

const accepted: [string[], Check][] = [
  [["tcp", "db:5432"], (p) => assertEquals(p.conditions.map((c) => c.name), ["tcp db:5432"])],
  [["--timeout", "30s", "tcp", "a:1"], (p) => assertEquals(p.options.timeoutMs, 30_000)],
  [["--timeout=2m", "tcp", "a:1"], (p) => assertEquals(p.options.timeoutMs, 120_000)],
  [["--timeout", "90", "tcp", "a:1"], (p) => assertEquals(p.options.timeoutMs, 90_000)],
  [["--timeout", "1h30m", "tcp", "a:1"], (p) => assertEquals(p.options.timeoutMs, 5_400_000)],
  [["--interval", "500ms", "tcp", "a:1"], (p) => assertEquals(p.options.intervalMs, 500)],
  [
    ["--attempt-timeout", "1.5", "tcp", "a:1"],
    (p) => assertEquals(p.options.attemptTimeoutMs, 1500),
  ],
  [
    ["--attempt-timeout", "5s", "tcp", "a:1", "--attempt-timeout", "1s", "--", "tcp", "b:2"],
    (p) =>
      assertEquals(
        [p.options.attemptTimeoutMs, ...p.conditions.map((c) => c.attemptTimeoutMs)],
        [5000, 1000, undefined],
      ),
  ],
  [["--mode", "any", "tcp", "a:1"], (p) => assertEquals(p.options.mode, "any")],
  [["--mode=all", "tcp", "a:1"], (p) => assertEquals(p.options.mode, "all")],
  [["--successes", "3", "tcp", "a:1"], (p) => assertEquals(p.options.successes, 3)],
  [
    ["--stable-for", "30d", "tcp", "a:1"],
    (p) => assertEquals(p.options.stableForMs, 30 * 86_400_000),
  ],
  [["--output", "json", "tcp", "a:1"], (p) => assertEquals(p.options.output, "json")],
  [["--output=jsonl", "tcp", "a:1"], (p) => assertEquals(p.options.output, "jsonl")],
  [["--quiet", "tcp", "a:1"], (p) => assertEquals(p.options.quiet, true)],
  [["--timeout", "0", "tcp", "a:1"], (p) => assertEquals(p.options.timeoutMs, Infinity)],
  [["--timeout", "none", "tcp", "a:1"], (p) => assertEquals(p.options.timeoutMs, Infinity)],
  [["-t", "30s", "-i", "1s", "-o", "json", "-q", "tcp", "a:1"], (p) => {
    assertEquals(
      [p.options.timeoutMs, p.options.intervalMs, p.options.output, p.options.quiet],
      [30_000, 1000, "json", true],
    );
  }],
  [["-t=2m", "tcp", "a:1"], (p) => assertEquals(p.options.timeoutMs, 120_000)],
  [["--dry-run", "tcp", "a:1"], (p) => assertEquals(p.options.explain, true)],
  [
    ["--report", "/tmp/r.json", "tcp", "a:1"],
    (p) => assertEquals(p.options.reportFile, "/tmp/r.json"),
  ],
  [
    [
      "--start",
      "npm run 'start:api'",
      "--start=./srv --token abc123",
      "--stop-grace",
      "1s",
      "tcp",
      "a:1",
    ],
    (p) => {
      assertEquals(p.options.start, [
        {
          text: "npm run 'start:api'",
          argv: ["npm", "run", "start:api"],
          shown: "npm run 'start:api'",
        },
        {
          text: "./srv --token abc123",
          argv: ["./srv", "--token", "abc123"],
          shown: "./srv --token ***",
        },
      ]);
      assertEquals([p.options.stopGraceMs, p.options.startLog], [1000, undefined]);
      assert(p.secrets.includes("abc123"), "a started command's token is a secret");
    },
  ],
  [["tcp", "a:1"], (p) => assertEquals([p.options.start, p.options.stopGraceMs], [[], 5000])],
  [
    [
      ...["--backoff", "exponential", "--max-interval", "1m", "--jitter", "20%", "--delay", "3s"],
      ...["tcp", "a:1"],
    ],
    (p) => {
      assertEquals(
        [p.options.backoff, p.options.maxIntervalMs, p.options.jitter, p.options.delayMs],
        ["exponential", 60_000, 0.2, 3000],
      );
    },
  ],
  [["--jitter", "0.25", "tcp", "a:1"], (p) => assertEquals(p.options.jitter, 0.25)],
  [["tcp", "a:1"], (p) => assertEquals(p.options.backoffFactor, 2)],
  ...["1", "1.5", "3", " 2.25 "].map((f): [string[], Check] => [
    ["--backoff", "exponential", "--backoff-factor", f, "tcp", "a:1"],
    (p) => assertEquals(p.options.backoffFactor, Number(f)),
  ]),
  [["not", "tcp", "a:1"], (p) => {
    assertEquals(p.conditions[0]!.name, "not tcp a:1");
    assertEquals(p.conditions[0]!.negate, true);
  }],
  [["tcp", "a:1", "--", "guard", "not", "tcp", "b:2"], (p) => {
    const c = p.conditions[1]!;
    assertEquals([c.name, c.guard, c.negate], ["not tcp b:2", true, true]);
  }],
  [
    ["not", "tcp", "a:1", "--label", "db down"],
    (p) => assertEquals(p.conditions[0]!.name, "db down"),
  ],
  [["-q", "tcp", "a:1"], (p) => assertEquals(p.options.quiet, true)],
  [["--no-color", "tcp", "a:1"], (p) => assertEquals(p.options.noColor, true)],
  [["tcp", "a:1"], (p) => {
    assertEquals(p.options.timeoutMs, 300_000);
    assertEquals(p.options.intervalMs, 2000);
    assertEquals(p.options.attemptTimeoutMs, undefined);
    assertEquals([p.options.mode, p.options.successes, p.options.stableForMs], ["all", 1, 0]);
  }],
  [
    ["tcp", "a:1", "--", "tcp", "b:2"],
    (p) => assertEquals(p.conditions.map((c) => c.target), ["a:1", "b:2"]),
  ],
  [
    ["tcp", "a:1", "--", "guard", "file", "/x"],
    (p) => assertEquals(p.conditions.map((c) => c.guard), [false, true]),
  ],
  [
    ["guard", "file", "/x", "--", "tcp", "a:1"],
    (p) => assertEquals(p.conditions.map((c) => c.guard), [true, false]),
  ],
  [["--", "tcp", "a:1"], (p) => assertEquals(p.conditions.length, 1)],
  [["file", "--nonempty", "/x"], (p) => assertEquals(p.conditions[0]!.target, "/x")],
  [["file", "/x", "--contains", "--"], (p) => assertEquals(p.conditions.length, 1)],
  [
    ["file", "/x", "--contains", "--", "--", "tcp", "a:1"],
    (p) => assertEquals(p.conditions.length, 2),
  ],
  [["file", "/x", "--contains=a=b"], (p) => assertEquals(p.conditions[0]!.name, "file /x")],
  [["file", "/x", "--exists=false", "--nonempty"], (p) => assertEquals(p.conditions.length, 1)],
  [["exec", "--", "echo", "hi"], (p) => assertEquals(p.conditions[0]!.name, "exec echo hi")],
  [
    ["exec", "--output-contains", "x", "--", "sh", "-c", "exit 0"],
    (p) => assertEquals(p.conditions[0]!.target, "sh -c 'exit 0'"),
  ],
  [
    ["exec", "--", "echo", "--", "tcp", "a:1"],
    (p) => assertEquals(p.conditions.map((c) => c.name), ["exec echo", "tcp a:1"]),
  ],
  [["exec", "--", "echo", "--", "not-a-kind"], (p) => assertEquals(p.conditions.length, 1)],
  [
    ["exec", "--", "tcp", "--version"],
    (p) => assertEquals(p.conditions[0]!.name, "exec tcp --version"),
  ],
  [
    ["exec", "--", "true", "--", "guard", "exec", "--", "false"],
    (p) => assertEquals(p.conditions.map((c) => c.guard), [false, true]),
  ],
  [["tcp", "a:1", "--", "then", "echo", "ok"], (p) => assertEquals(p.then, ["echo", "ok"])],
  [["tcp", "a:1", "--", "then", "sh", "-c", "x", "--", "tcp", "b:2"], (p) => {
    assertEquals(p.then, ["sh", "-c", "x", "--", "tcp", "b:2"]);
    assertEquals(p.conditions.length, 1);
  }],
  [["tcp", "[::1]:80"], (p) => assertEquals(p.conditions[0]!.name, "tcp [::1]:80")],
  [["process", "--name", "pg"], (p) => assertEquals(p.conditions[0]!.name, "process --name pg")],
  [
    ["process", "--pid=42", "--stopped"],
    (p) => assertEquals(p.conditions[0]!.name, "process --pid 42"),
  ],
  [
    ["ports", "h", "--range", "1-3,8", "--any"],
    (p) => assertEquals(p.conditions[0]!.name, "ports h"),
  ],
  [["glob", "*.x", "--min-count", "0"], (p) => assertEquals(p.conditions[0]!.target, "*.x")],
  [["tcp", "a:1", "--label", "database"], (p) => assertEquals(p.conditions[0]!.name, "database")],
  [["vlt", "x", "--password", "hunter22"], (p) => {
    assertEquals(p.conditions[0]!.name, "vlt x");
    assertEquals(p.conditions[0]!.kind.name, "vault");
    assertEquals(p.secrets, ["hunter22"]);
  }],
  [["unix", "/run/x.sock"], (p) => assertEquals(p.conditions[0]!.name, "unix /run/x.sock")],
];

const rejected: [string[], string][] = [
  [["--start", "", "tcp", "a:1"], "--start (start 1): expected a command"],
  [["--start", 'a "b', "tcp", "a:1"], "--start (start 1): unclosed double quote"],
  [["--start-log", "x", "--start-log", "y", "tcp", "a:1"], "--start-log: given more than once"],
  [
    [],
    "waitcmd: no condition given; name a kind and its target, e.g. waitcmd <kind> <target> (see: waitcmd --help)",
  ],
  [["--timeout", "5s"], "no condition given"],
  [
    ["--timeout", "abc", "tcp", "a:1"],
    `waitcmd: --timeout: expected a duration like 30s, 2m or 1h30m, got "abc" (see: waitcmd --help)`,
  ],
  [["--jitter", "150%", "tcp", "a:1"], `--jitter: expected a share from 0% to 100%`],
  [["--jitter", "-0.1", "tcp", "a:1"], `--jitter: expected a share from 0% to 100%`],
  [
    ["--backoff", "exponential", "--interval", "5s", "--max-interval", "1s", "tcp", "a:1"],
    "--max-interval: must not be shorter than --interval (5s), got 1s",
  ],
  [
    ["--max-interval", "1m", "tcp", "a:1"],
    "--max-interval: only applies with --backoff exponential",
  ],
  [["--backoff", "linear", "tcp", "a:1"], `--backoff: expected one of constant, exponential`],
  [
    ["--backoff-factor", "1.5", "tcp", "a:1"],
    "waitcmd: --backoff-factor: only applies with --backoff exponential (see: waitcmd --help)",
  ],
  ...["0.5", "0", "-2", "x", "", "Infinity", "1e400", "NaN", "2x"].map((f): [string[], string] => [
    ["--backoff", "exponential", "--backoff-factor", f, "tcp", "a:1"],
    `waitcmd: --backoff-factor: expected a number of at least 1 (like 1.5 or 2), got ${
      JSON.stringify(f)
    } (see: waitcmd --help)`,
  ]),
  [["-x", "tcp", "a:1"], "unknown global option -x; short options are -t -i -o -f -q"],
  [["tcp", "a:1", "not"], `unexpected argument "not"; separate conditions with "--"`],
  [["tcp", "a:1", "tcp", "b:2"], `unexpected argument "tcp"; separate conditions with "--"`],
  [
    ["tcp", "a:1", "then", "x"],
    `unexpected argument "then"; run a command after the wait with: -- then <command>`,
  ],
  [["not"], "condition 1: not must be followed by a condition kind"],
  [["not", "not", "tcp", "a:1"], "condition 1: not must be followed by a condition kind"],
  [["not", "guard", "tcp", "a:1"], "condition 1: write guard before not: -- guard not <kind> ..."],
  [
    ["tcp", "a:1", "--", "not", "then", "x"],
    "condition 2: not must be followed by a condition kind",
  ],
  [["--timeout", "-5s", "tcp", "a:1"], `--timeout: expected a duration`],
  [["--timeout"], "--timeout: missing value"],
  [
    ["--interval", "5x", "tcp", "a:1"],
    `--interval: expected a duration like 30s, 2m or 1h30m, got "5x"`,
  ],
  [["--attempt-timeout", "0s", "tcp", "a:1"], "--attempt-timeout: must be longer than 0"],
  [
    ["tcp", "a:1", "--attempt-timeout", "0"],
    "condition 1 (tcp): --attempt-timeout: must be longer than 0",
  ],
  [
    ["tcp", "a:1", "--attempt-timeout", "soon"],
    `condition 1 (tcp): --attempt-timeout: expected a duration like 30s, 2m or 1h30m, got "soon"`,
  ],
  [["--mode", "some", "tcp", "a:1"], `--mode: expected one of all, any, got "some"`],
  [["--mode", "al", "tcp", "a:1"], "(did you mean all?)"],
  [
    ["--successes", "0", "tcp", "a:1"],
    `--successes: expected a whole number of at least 1, got "0"`,
  ],
  [["--successes", "1.5", "tcp", "a:1"], `expected a whole number of at least 1, got "1.5"`],
  [["--output", "xml", "tcp", "a:1"], `--output: expected one of text, json, jsonl, got "xml"`],
  [["--quiet=yes", "tcp", "a:1"], `--quiet: expected true or false, got "yes"`],
  [["--timeot", "5s", "tcp", "a:1"], "unknown global option --timeot (did you mean --timeout?)"],
  [
    ["--contains", "x", "file", "/x"],
    "unknown global option --contains; flags of a condition go after its kind",
  ],
  [["--timeout", "1s", "--timeout", "2s", "tcp", "a:1"], "--timeout: given more than once"],
  [
    ["tpc", "a:1"],
    `waitcmd: condition 1: unknown kind "tpc" (did you mean tcp?) (see: waitcmd --help)`,
  ],
  [["nonsense"], `unknown kind "nonsense"`],
  [["tcp"], "waitcmd: condition 1 (tcp): missing target HOST:PORT (see: waitcmd help tcp)"],
  [["tcp", "a"], `condition 1 (tcp): expected HOST:PORT or [IPv6]:PORT, got "a"`],
  [["tcp", "a:99999"], `port must be from 1 to 65535, got "99999"`],
  [["tcp", "a:0"], `port must be from 1 to 65535, got "0"`],
  [["tcp", "::1:80"], "expected HOST:PORT or [IPv6]:PORT"],
  [["tcp", "a:1", "b:2"], `condition 1 (tcp): unexpected argument "b:2" after the target "a:1"`],
  [["tcp", "a:1", "--stauts"], "condition 1 (tcp): unknown flag --stauts"],
  [["file", "/x", "--contians", "y"], "unknown flag --contians (did you mean --contains?)"],
  [
    ["tcp", "a:1", "--timeout", "5s"],
    "global options such as --timeout go before the first condition",
  ],
  [["tcp", "a:1", "-x"], "unknown flag -x; flags are written --name"],
  [
    ["tcp", "a:1", "-t", "5s"],
    "unknown flag -t; global options such as -t (--timeout) go before the first condition",
  ],
  [["tcp", "a:1", "-q"], "global options such as -q (--quiet) go before the first condition"],
  [["vault", "x", "-l", "low"], "unknown flag -l; flags are written --name"],
  [["tcp", "a:1", "--"], `nothing after "--"; expected a condition kind`],
  [
    ["tcp", "a:1", "--", "bogus"],
    `unexpected "--" before "bogus": a new condition starts with a kind`,
  ],
  [
    ["tcp", "a:1", "--", "tcpp", "x:1"],
    `unexpected "--" before "tcpp": a new condition starts with a kind (did you mean tcp?)`,
  ],
  [["tcp", "a:1", "--", "file"], "condition 2 (file): missing target PATH"],
  [["guard", "tcp", "a:1"], "nothing to wait for: every condition is a guard"],
  [["guard", "tcp", "a:1", "--", "guard", "file", "/x"], "nothing to wait for"],
  [["guard"], "condition 1: guard must be followed by a condition kind"],
  [["guard", "tpc", "a:1"], `unknown kind "tpc" (did you mean tcp?)`],
  [["exec"], "condition 1 (exec): missing command: exec [flags] -- <command> [args...]"],
  [["exec", "--"], "condition 1 (exec): missing command"],
  [["exec", "echo"], `unexpected argument "echo"; the command goes after "--": exec -- echo ...`],
  [["exec", "--", "true", "--", "exec"], "condition 2 (exec): missing command"],
  [
    ["exec", "--exit-code", "300", "--", "true"],
    `--exit-code: expected a whole number from 0 to 255, got "300"`,
  ],
  [["exec", "--output-contains"], "--output-contains: missing value TEXT"],
  [
    ["file", "/x", "--deleted", "--exists"],
    "condition 1 (file): --deleted: cannot be combined with --exists",
  ],
  [["file", "/x", "--contains", "a", "--deleted"], "--deleted: cannot be combined with --contains"],
  [
    ["file", "/x", "--contains"],
    "waitcmd: condition 1 (file): --contains: missing value TEXT (see: waitcmd help file)",
  ],
  [
    ["tcp", "a:1", "--", "file", "/x", "--contains"],
    "waitcmd: condition 2 (file): --contains: missing value TEXT (see: waitcmd help file)",
  ],
  [["file", "/x", "--contains", ""], "--contains: expected a text, got an empty string"],
  [["file", "/x", "--exists=maybe"], `--exists: expected true or false, got "maybe"`],
  [["file", "/x", "--contains", "a", "--contains", "b"], "--contains: given more than once"],
  [["file", ""], "expected a path, got an empty string"],
  [["process"], "condition 1 (process): --name: process needs --name NAME or --pid PID"],
  [["process", "--name", "a", "--pid", "1"], "--pid: cannot be combined with --name"],
  [["process", "--pid", "abc"], `--pid: expected a whole number of at least 1, got "abc"`],
  [["process", "--pid", "0"], `--pid: expected a whole number of at least 1, got "0"`],
  [["process", "foo"], `unexpected argument "foo"; process takes no target, only flags`],
  [
    ["process", "--name", "x", "--running", "--stopped"],
    "--stopped: cannot be combined with --running",
  ],
  [["ports", "h"], "--range: is required: the ports to probe, e.g. --range 8000-8010"],
  [["ports", "h", "--range", "5-1"], `the range "5-1" runs backwards`],
  [["ports", "h", "--range", "1-70000"], `ports must be from 1 to 65535`],
  [
    ["ports", "h", "--range", "x"],
    `expected a range like 8000-8010 or a list like 80,443, got "x"`,
  ],
  [["ports", "h", "--range", "1-3", "--any", "--all"], "--any: cannot be combined with --all"],
  [
    ["glob", "*.x", "--absent", "--min-count", "1"],
    "--absent: cannot be combined with --min-count",
  ],
  [
    ["glob", "*.x", "--min-count", "5", "--max-count", "2"],
    "--min-count: 5 is more than --max-count 2",
  ],
  [
    ["glob", "*.x", "--min-count", "-1"],
    `--min-count: expected a whole number of at least 0, got "-1"`,
  ],
  [["tcp", "a:1", "--label"], "--label: missing value TEXT"],
  [
    ["vault", "x", "--level", "hihg"],
    `--level: expected one of low, high, got "hihg" (did you mean high?)`,
  ],
  [["then", "echo"], "then: needs a condition to wait for before it"],
  [["tcp", "a:1", "--", "then"], "then: expected a command: -- then <command> [args...]"],
  [["help", "tpc"], `help: unknown kind or topic "tpc" (did you mean tcp?)`],
  [
    ["completions", "powershell"],
    `completions: expected a shell: bash, zsh, fish, got "powershell"`,
  ],
  [["completions"], "completions: expected a shell: bash, zsh, fish, got nothing"],
];

Deno.test("parseArgv() accepts the documented grammar", async (t) => {
  for (const [argv, check] of accepted) {
    await t.step(JSON.stringify(argv), () => check(planOf(argv)));
  }
});

Deno.test("parseArgv() rejects every class of usage error with one located line", async (t) => {
  for (const [argv, expected] of rejected) {
    await t.step(JSON.stringify(argv), () => {
      const line = usageError(argv);
      assertStringIncludes(line, expected);
      assert(line.startsWith("waitcmd: "), line);
      assert(!line.includes("\n"), "one line");
      assert(/\(see: waitcmd (help \w+|--help)\)$/.test(line), `ends with a help hint: ${line}`);
    });
  }
});

Deno.test("parseArgv() covers at least 60 argv cases", () => {
  assert(accepted.length + rejected.length >= 60);
});

Deno.test("parseArgv() returns help, version and completions commands", () => {
  assertEquals(parse(["--help"]), { type: "help", topic: undefined });
  assertEquals(parse(["-h"]), { type: "help", topic: undefined });
  assertEquals(parse(["help"]), { type: "help", topic: undefined });
  assertEquals(parse(["help", "vlt"]), { type: "help", topic: "vault" });
  assertEquals(parse(["tcp", "--help"]), { type: "help", topic: "tcp" });
  assertEquals(parse(["--timeout", "5s", "file", "/x", "-h"]), { type: "help", topic: "file" });
  assertEquals(parse(["--version"]), { type: "version" });
  assertEquals(parse(["version"]), { type: "version" });
  assertEquals(parse(["completions", "fish"]), { type: "completions", shell: "fish" });
});

Deno.test("parseArgv() hands kinds the environment and their typed flags", () => {
  let seen: Record<string, string> | undefined;
  const envKind: ConditionKind = {
    ...secretKind,
    name: "envy",
    aliases: [],
    parse(input) {
      seen = { ...input.env };
      input.secret(input.env.TOKEN ?? "");
      return { target: input.target!, options: undefined };
    },
  };
  const c = parseArgv(["envy", "x"], createRegistry([envKind]), { TOKEN: "tok-123456" });
  assert(c.type === "run");
  assertEquals(seen, { TOKEN: "tok-123456" });
  assertEquals(c.plan.secrets, ["tok-123456"]);
});

Deno.test("createRegistry() refuses duplicate names and aliases", () => {
  let err: unknown;
  try {
    createRegistry([tcp, { ...unix, aliases: ["tcp"] }]);
  } catch (e) {
    err = e;
  }
  assert(err instanceof Error && err.message.includes("'tcp' is already taken"));
  try {
    createRegistry([{ ...tcp, name: "guard" }]);
    err = undefined;
  } catch (e) {
    err = e;
  }
  assert(err instanceof Error && err.message.includes("'guard'"));
});

Deno.test("parseArgv() takes global defaults from WAITCMD_* variables; a flag wins", () => {
  const env = {
    WAITCMD_TIMEOUT: "10m",
    WAITCMD_INTERVAL: "500ms",
    WAITCMD_ATTEMPT_TIMEOUT: "3s",
    WAITCMD_OUTPUT: "json",
    WAITCMD_MODE: "any",
  };
  const c = parseArgv(["--interval", "1s", "tcp", "a:1"], registry, env);
  assert(c.type === "run");
  const o = c.plan.options;
  assertEquals(
    [o.timeoutMs, o.intervalMs, o.attemptTimeoutMs, o.output, o.mode],
    [600_000, 1000, 3000, "json", "any"],
  );
  const none = parseArgv(["tcp", "a:1"], registry, { WAITCMD_TIMEOUT: "none" });
  assert(none.type === "run");
  assertEquals(none.plan.options.timeoutMs, Infinity);
});

Deno.test("parseArgv() names the variable of a bad WAITCMD_* value", async (t) => {
  const rows: [Record<string, string>, string][] = [
    [{ WAITCMD_TIMEOUT: "soon" }, `waitcmd: WAITCMD_TIMEOUT: expected a duration`],
    [{ WAITCMD_INTERVAL: "x" }, `waitcmd: WAITCMD_INTERVAL: expected a duration`],
    [{ WAITCMD_OUTPUT: "xml" }, `waitcmd: WAITCMD_OUTPUT: expected one of text, json, jsonl`],
    [{ WAITCMD_MODE: "some" }, `waitcmd: WAITCMD_MODE: expected one of all, any`],
    [{ WAITCMD_ATTEMPT_TIMEOUT: "-1" }, `waitcmd: WAITCMD_ATTEMPT_TIMEOUT: expected a duration`],
  ];
  for (const [env, fragment] of rows) {
    await t.step(Object.keys(env)[0]!, () => {
      try {
        parseArgv(["tcp", "a:1"], registry, env);
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        assertStringIncludes(e.format(), fragment);
        return;
      }
      throw new Error(`expected a usage error for ${JSON.stringify(env)}`);
    });
  }
});

Deno.test("parseArgv() takes enum values case-insensitively and gives them canonically", () => {
  assertEquals(planOf(["--mode", "ANY", "tcp", "a:1"]).options.mode, "any");
});

Deno.test("parseArgv() takes a kind's one-letter flag after its kind", () => {
  const p = planOf(["vault", "x", "-f", "a.yaml", "--", "vault", "y", "-f=b.yaml"]);
  assertEquals(p.conditions.length, 2);
  assertEquals(
    usageError(["vault", "x", "-f"]),
    "waitcmd: condition 1 (vault): --file: missing value (see: waitcmd help vault)",
  );
});

/** The plan's tree as nested arrays: a leaf is its name, a group `[name, path, ...members]`. */
function shape(p: Plan): unknown[] {
  const walk = (n: PlanNode): unknown =>
    n.type === "leaf" ? n.condition.name : [n.name, n.path, ...n.children.map(walk)];
  return p.root.children.map(walk);
}

Deno.test("parseArgv() nests any [ … ] and all [ … ] groups, with paths and names", () => {
  const p = planOf([
    ...["tcp", "db:5432"],
    ...["--", "any", "[", "tcp", "a:1"],
    ...["--", "all", "[", "file", "/x"],
    ...["--", "not", "tcp", "b:2", "]", "--label", "pair", "]"],
    ...["--", "file", "/y"],
  ]);
  assertEquals(shape(p), [
    "tcp db:5432",
    ["any[tcp a:1, pair]", "2.any", "tcp a:1", ["pair", "2.any.2.all", "file /x", "not tcp b:2"]],
    "file /y",
  ]);
  assertEquals(p.conditions.map((c) => [c.index, c.group]), [
    [1, undefined],
    [2, "2.any"],
    [3, "2.any.2.all"],
    [4, "2.any.2.all"],
    [5, undefined],
  ]);
  assertEquals(p.root.op, "all");
});

Deno.test("parseArgv() ends a group's last member at its ], an exec command's words too", () => {
  const p = planOf(["all", "[", "exec", "--", "echo", "]", "--", "tcp", "a:1"]);
  assertEquals(shape(p), [["all[exec echo]", "1.all", "exec echo"], "tcp a:1"]);
  const g = planOf([
    ...["any", "[", "guard", "file", "/x"],
    ...["--", "tcp", "a:1"],
    ...["--", "]", "--label", "g"],
  ]);
  assertEquals(shape(g), [["g", "1.any", "file /x", "tcp a:1"]]);
  assertEquals(g.conditions[0]!.guard, true);
});

Deno.test("parseArgv() rejects malformed groups with one located line", () => {
  const rows: [string[], string][] = [
    [
      ["any", "[", "]"],
      "waitcmd: group 1.any: empty group: put at least one condition between [ and ]",
    ],
    [["any", "[", "tcp", "a:1"], `group 1.any: missing "]"`],
    [["tcp", "a:1", "]"], `condition 1 (tcp): unexpected "]": no group is open`],
    [["]"], `unexpected "]": no group is open`],
    [
      ["any", "tcp", "a:1"],
      "group 1.any: any must be followed by [: any [ <condition> -- <condition> ... ]",
    ],
    [["any", "[tcp", "a:1", "]"], "write [ and ] as words of their own: any [ tcp … ]"],
    [
      ["not", "any", "[", "tcp", "a:1", "--", "tcp", "b:1", "]"],
      "group 1: not applies to one condition, not to a group: not any [ A -- B ] is all [ not A -- not B ]",
    ],
    [
      ["tcp", "a:1", "--", "not", "all", "[", "tcp", "b:1", "]"],
      "not all [ A -- B ] is any [ not A -- not B ]",
    ],
    [["guard", "any", "[", "tcp", "a:1", "]"], "guard applies to one condition, not to a group"],
    [
      ["any", "[", "--mode", "all", "tcp", "a:1", "]"],
      "group 1.any: --mode applies to the whole run, before the first condition",
    ],
    [["any", "[", "tcp", "a:1", "--mode", "all", "]"], "global options such as --mode go before"],
    [["tcp", "b:1", "--", "any", "[", "guard", "tcp", "a:1", "]"], "every member is a guard"],
    [["any", "[", "tcp", "a:1", "]", "tcp", "b:1"], `unexpected "tcp" after the group's "]"`],
    [
      ["any", "[", "tcp", "a:1", "--", "then", "echo", "]"],
      "then goes after the last condition, outside every group",
    ],
  ];
  for (const [argv, want] of rows) assertStringIncludes(usageError(argv), want);
});

Deno.test("parseArgv() takes then after a group, and --mode any as the run's op", () => {
  const p = planOf(["--mode", "any", "any", "[", "tcp", "a:1", "]", "--", "then", "echo", "hi"]);
  assertEquals(p.root.op, "any");
  assertEquals(p.then, ["echo", "hi"]);
});
