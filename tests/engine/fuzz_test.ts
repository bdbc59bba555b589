/**
 * Random argvs built from the grammar's alphabet never raise an uncaught
 * exception, and the exit code is always 0, 1, 2 or 3. CI runs a few hundred;
 * `deno task fuzz` runs 10,000 (WAITCMD_FUZZ_RUNS).
 */
import { assert } from "../_assert.ts";
import { registry } from "../../conditions/mod.ts";
import { realClock } from "../../engine/clock.ts";
import { UsageError } from "../../engine/errors.ts";
import { parseArgv } from "../../engine/grammar.ts";
import { COMMON_CONDITION_FLAGS, GLOBAL_FLAGS } from "../../engine/options.ts";
import { run } from "../../engine/runner.ts";
import { exitCode, main } from "../../main.ts";

const RUNS = Number(Deno.env.get("WAITCMD_FUZZ_RUNS") ?? "300");

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
  "",
  "0",
  "1",
  "-1",
  "3",
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
  "-",
  "--x",
  "ü→🙂",
  "a=b",
];
const words = [
  ...registry.words,
  "guard",
  "then",
  "--",
  "--",
  "--",
  "help",
  "completions",
  "bash",
  "-h",
  "--help",
  "--version",
  "-q",
];

function randomArgv(next: () => number): string[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  if (next() < 0.5) {
    // Shaped like a real command line: kind, target, a few of its own flags, maybe a second condition.
    const argv: string[] = [];
    for (let c = 0; c < 1 + Math.floor(next() * 2); c++) {
      if (c > 0) argv.push("--", ...(next() < 0.3 ? ["guard"] : []));
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
      const cmd = parseArgv(argv, registry, {});
      if (cmd.type === "run") {
        // Probe for real, but briefly: the fuzz is about never crashing, not about waiting.
        const options = {
          ...cmd.plan.options,
          timeoutMs: Math.min(cmd.plan.options.timeoutMs, 60),
          intervalMs: 10,
        };
        const report = await run({ ...cmd.plan, options }, { clock: realClock, graceMs: 500 });
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
