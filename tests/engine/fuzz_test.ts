/**
 * Random argvs built from the grammar's alphabet never raise an uncaught
 * exception, and the exit code is always 0, 1, 2 or 3. CI runs a few hundred;
 * `deno task fuzz` runs 100,000 (WAITCMD_FUZZ_RUNS) and 2,000 through the CLI.
 */
import { assert, assertEquals } from "../_assert.ts";
import { registry } from "../../conditions/all.ts";
import { realClock } from "../../engine/clock.ts";
import { UsageError } from "../../engine/errors.ts";
import { FileReadError } from "../../engine/files.ts";
import { parseArgv } from "../../engine/grammar.ts";
import { preparePlan, validatePlan } from "../../engine/prepare.ts";
import { COMMON_CONDITION_FLAGS, ENV_DEFAULTS, GLOBAL_FLAGS } from "../../engine/options.ts";
import { expandRecipe } from "../../engine/recipe.ts";
import { run } from "../../engine/runner.ts";
import { exitCode, main } from "../../main.ts";

/** Command lines parsed and validated in-process (`deno task fuzz`: 100,000). */
const RUNS = Number(Deno.env.get("WAITCMD_FUZZ_RUNS") ?? "300");
/** Of those, how many are also run for real in-process (briefly): running is slow. */
const RUN_RUNS = Math.min(RUNS, 300);
/** Command lines run through the real CLI (`deno task fuzz`: 2,000). */
const CLI_RUNS = Number(Deno.env.get("WAITCMD_FUZZ_CLI_RUNS") ?? "20");

/** A small deterministic PRNG (mulberry32) so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const flagNames = [
  ...GLOBAL_FLAGS,
  ...COMMON_CONDITION_FLAGS,
  ...registry.kinds.flatMap((k) => k.flags),
].map((f) => `--${f.name}`);
const values = [
  ...["", "0", "1", "-1", "3"],
  ...[
    "200",
    "2xx",
    "abc",
    "30s",
    "1h30m",
    "500ms",
    "10d",
    "1.5",
    "any",
    "all",
    "json",
    "jsonl",
    "text",
    "127.0.0.1:1",
    "[::1]:1",
    "localhost",
    "/nonexistent/x",
    "/tmp",
    "*.none",
    "**/*.x",
    "{a,b}",
    "true",
    "false",
    "waitcmd-no-such-cmd",
    "1-3",
    "5-1",
    "=",
  ],
  ...["-", "--x", "ü→🙂", "a=b"],
];
const words = [
  ...registry.words,
  ...["guard", "then"],
  "--",
  "--",
  ...["--", "help", "completions", "bash", "-h", "--help", "--version", "-q", "not", "not", "-t"],
  ...["-i", "-o", "-f", "-V", "--dry-run", "doctor", "20%", "150%", "none"],
];

/** Random WAITCMD_* defaults: usually none, sometimes good, sometimes bad. */
function randomEnv(next: () => number): Record<string, string> {
  const env: Record<string, string> = {};
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  for (const name of Object.keys(ENV_DEFAULTS)) {
    if (next() < 0.15) env[name] = pick(values);
  }
  return env;
}

function randomArgv(next: () => number): string[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  if (next() < 0.5) {
    // Shaped like a real command line: kind, target, a few of its own flags, maybe a second condition.
    const argv: string[] = [];
    for (let c = 0; c < 1 + Math.floor(next() * 2); c++) {
      if (c > 0) argv.push("--", ...(next() < 0.3 ? ["guard"] : []));
      if (next() < 0.2) argv.push("not");
      const kind = pick(registry.kinds);
      argv.push(pick([kind.name, ...kind.aliases]));
      if (kind.target.shape === "required") argv.push(pick(values));
      for (let f = Math.floor(next() * 3); f > 0 && kind.flags.length; f--) {
        const flag = pick(kind.flags);
        argv.push(`--${flag.name}`);
        if (flag.type !== "boolean") argv.push(flag.values ? pick(flag.values) : pick(values));
      }
      if (kind.target.shape === "command") {
        argv.push("--", pick(["true", "false", "waitcmd-no-such-cmd", "sh"]));
      }
    }
    return argv;
  }
  const n = 1 + Math.floor(next() * 9);
  const argv: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = next();
    if (r < 0.3) argv.push(pick(words));
    else if (r < 0.55) argv.push(pick(flagNames));
    else if (r < 0.65) argv.push(`${pick(flagNames)}=${pick(values)}`);
    else argv.push(pick(values));
  }
  return argv;
}

const silentIo = {
  stdout: () => {},
  stderr: () => {},
  env: {},
  stderrIsTerminal: false,
  columns: () => 80,
  clock: realClock,
  signal: new AbortController().signal,
  // What the real reader (engine/files.ts readBounded) throws for a missing file.
  readText: () => Promise.reject(new FileReadError("no files in the fuzz")),
};

Deno.test(`parseArgv() and run() survive ${RUNS} random argvs with exit codes 0-3`, async () => {
  const seed = Number(Deno.env.get("WAITCMD_FUZZ_SEED") ?? Date.now() % 1_000_000);
  const next = rng(seed);
  const codes = new Map<number, number>();
  for (let i = 0; i < RUNS; i++) {
    const argv = randomArgv(next);
    const where = `seed ${seed}, run ${i}: ${JSON.stringify(argv)}`;
    let code: number;
    try {
      const cmd = parseArgv(argv, registry, randomEnv(next));
      if (cmd.type === "run" && i >= RUN_RUNS) {
        await validatePlan(cmd.plan);
        code = 0;
      } else if (cmd.type === "run") {
        // Probe for real, but briefly: the fuzz is about never crashing, not about waiting.
        const options = {
          ...cmd.plan.options,
          timeoutMs: Math.min(cmd.plan.options.timeoutMs, 60),
          intervalMs: 10,
        };
        await validatePlan(cmd.plan);
        const ready = await preparePlan({ ...cmd.plan, options }, { clock: realClock, env: {} });
        const report = await run(ready, { clock: realClock, graceMs: 500 });
        code = exitCode(report);
      } else {
        code = (await main(argv, silentIo)).code;
      }
    } catch (e) {
      if (!(e instanceof UsageError)) throw new Error(`uncaught ${e} at ${where}`);
      assert(!e.format().includes("\n"), `one line at ${where}`);
      code = 2;
    }
    assert([0, 1, 2, 3].includes(code), `exit ${code} at ${where}`);
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  console.log(`exit codes over ${RUNS} runs (seed ${seed}):`, Object.fromEntries(codes));
  assert((codes.get(2) ?? 0) > 0, "the fuzz reached usage errors");
});

Deno.test(`expandRecipe() and parseArgv() survive ${RUNS} random recipes: usage errors only`, async () => {
  const seed = Number(Deno.env.get("WAITCMD_FUZZ_SEED") ?? Date.now() % 1_000_000);
  const next = rng(seed + 1);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const keys = [
    ...GLOBAL_FLAGS.map((f) => f.name),
    "conditions",
    "guards",
    "then",
    "kind",
    "target",
    "flags",
    "not",
    "command",
    "label",
    "bogus",
  ];
  const scalar = () =>
    pick([
      () => JSON.stringify(pick(values)),
      () => pick(values).replace(/[:#{}\[\],&*!|>'"%@`]/g, "x") || "x",
      () => String(Math.floor(next() * 100)),
      () => pick(["true", "false", "null", "~", "[]", "{}", "- x", "[1, 2", "'"]),
    ])();
  const value = (depth: number): string => {
    const r = next();
    if (depth > 2 || r < 0.5) return scalar();
    if (r < 0.75) {
      return `[${
        Array.from({ length: Math.floor(next() * 3) }, () => value(depth + 1)).join(", ")
      }]`;
    }
    const pairs = Array.from({ length: 1 + Math.floor(next() * 3) }, () => {
      const k = next() < 0.8 ? pick(keys) : pick(registry.kinds).flags[0]?.name ?? "x";
      return `${k}: ${value(depth + 1)}`;
    });
    return `{${pairs.join(", ")}}`;
  };
  const kindEntry = () => {
    const k = pick(registry.kinds);
    const flag = k.flags.length ? pick(k.flags) : undefined;
    const fv = flag ? (flag.values ? pick(flag.values) : pick(values)) : "";
    return `  - {kind: ${pick([k.name, ...k.aliases, "tpc"])}, target: ${
      JSON.stringify(pick(values))
    }${flag ? `, flags: {${flag.name}: ${JSON.stringify(fv)}}` : ""}${
      next() < 0.2 ? ", not: true" : ""
    }}`;
  };
  let parsed = 0;
  for (let i = 0; i < RUNS; i++) {
    const lines: string[] = [];
    for (let j = Math.floor(next() * 4); j > 0; j--) lines.push(`${pick(keys)}: ${value(0)}`);
    if (next() < 0.7) {
      lines.push(pick(["conditions:", "guards:"]));
      for (let j = 1 + Math.floor(next() * 3); j > 0; j--) lines.push(kindEntry());
    }
    if (next() < 0.1) {
      lines.splice(Math.floor(next() * lines.length), 0, pick(["\t- x", "  :", "a: b: c"]));
    }
    const text = next() < 0.1 ? JSON.stringify(JSON.parse("{}")) : lines.join("\n");
    const where = `seed ${seed + 1}, recipe ${i}:\n${text}`;
    try {
      const x = await expandRecipe(text, "fuzz.yaml", [], registry);
      try {
        parseArgv(x.argv, registry, {});
        parsed++;
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        const line = x.locate(e).format();
        assert(!line.includes("\n"), `one line at ${where}`);
      }
    } catch (e) {
      if (!(e instanceof UsageError)) throw new Error(`uncaught ${e} at ${where}`);
      assert(!e.format().includes("\n"), `one line at ${where}: ${e.format()}`);
    }
  }
  console.log(`recipes that parsed: ${parsed}/${RUNS} (seed ${seed + 1})`);
});

/** Failures the fuzz (or a user) ever found: each stays a regression case. */
const CORPUS_FILE = new URL("./fuzz_corpus.json", import.meta.url);

Deno.test("the fuzz corpus: every case that ever failed parses to a usage error or a plan", async () => {
  const corpus = JSON.parse(await Deno.readTextFile(CORPUS_FILE)) as {
    argv: string[];
    env?: Record<string, string>;
    why: string;
  }[];
  assert(corpus.length > 0);
  for (const c of corpus) {
    const where = `${c.why}: ${JSON.stringify(c.argv)}`;
    try {
      const cmd = parseArgv(c.argv, registry, c.env ?? {});
      if (cmd.type === "run") await validatePlan(cmd.plan);
    } catch (e) {
      if (!(e instanceof UsageError)) throw new Error(`uncaught ${e} at ${where}`);
      assert(!e.format().includes("\n"), `one line at ${where}`);
    }
  }
});

Deno.test({
  name:
    `the CLI survives ${CLI_RUNS} random command lines: exits 0-3, one-line usage errors, no stack`,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const seed = Number(Deno.env.get("WAITCMD_FUZZ_SEED") ?? Date.now() % 1_000_000);
    const next = rng(seed + 2);
    const { WAITCMD } = await import("../e2e/_cli.ts");
    const corpus = JSON.parse(await Deno.readTextFile(CORPUS_FILE)) as { argv: string[] }[];
    const cases = [
      ...corpus.map((c) => c.argv),
      ...Array.from({ length: CLI_RUNS }, () => randomArgv(next)),
    ]
      // A case that names its own deadline could wait for days: the fuzz is about crashing. One
      // that starts a command (--start) would run random words, and its log would land anywhere.
      .filter((a) =>
        !a.some((w) =>
          /^(-t|--timeout|--delay|--stable-for|none|then|--start|--start-log)(=|$)/.test(w)
        )
      );
    // In a fresh checkout the first run caches the npm packages and says so on stderr: not a
    // usage error's line. Warm the cache first.
    await new Deno.Command(WAITCMD, { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
    let i = 0;
    const worker = async () => {
      while (i < cases.length) {
        const argv = cases[i++]!;
        const out = await new Deno.Command(WAITCMD, {
          args: argv,
          env: { NO_COLOR: "1", WAITCMD_TIMEOUT: "300ms", WAITCMD_INTERVAL: "50ms" },
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        const where = `seed ${seed + 2}: ${JSON.stringify(argv)}`;
        const err = new TextDecoder().decode(out.stderr);
        const all = new TextDecoder().decode(out.stdout) + err;
        assert([0, 1, 2, 3].includes(out.code), `exit ${out.code} at ${where}\n${err}`);
        assert(!/^\s+at .*:\d+:\d+/m.test(all), `a stack trace at ${where}\n${all}`);
        if (out.code === 2) {
          assertEquals(err.trimEnd().split("\n").length, 1, `one usage-error line at ${where}`);
        }
      }
    };
    await Promise.all([worker(), worker()]);
  },
});
