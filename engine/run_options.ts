/**
 * The run's options from the global flags given (docs/contract.md §4): the environment's defaults
 * where a flag is not given, the defaults else, and the checks that need several of them.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { formatDuration } from "./duration.ts";
import {
  type FlagValue,
  parseBackoffFactor,
  parseJitter,
  timeoutValue,
  typedValue,
} from "./flag_values.ts";
import {
  DEFAULT_OPTIONS,
  ENV_DEFAULTS,
  GLOBAL_FLAGS,
  type RunOptions,
  type StartCommand,
} from "./options.ts";
import { splitWords, WordsError } from "./words.ts";
import { quoteMasked } from "./quote.ts";
import { maskWords, redactText, SecretRegistry } from "./secrets.ts";

/** The run's options from the typed values of the global flags given, by flag name. */
export function runOptionsOf(
  values: Map<string, FlagValue>,
  env: Readonly<Record<string, string>>,
  lists: ReadonlyMap<string, readonly string[]> = new Map(),
): RunOptions {
  // Environment defaults: a flag wins; a bad value names the variable.
  for (const [variable, flag] of Object.entries(ENV_DEFAULTS)) {
    const raw = env[variable];
    if (raw === undefined || raw === "" || values.has(flag)) continue;
    const spec = GLOBAL_FLAGS.find((f) => f.name === flag)!;
    values.set(
      flag,
      flag === "timeout" ? timeoutValue(raw, variable) : typedValue(spec, raw, variable, undefined),
    );
  }
  const num = (flag: string) => values.get(flag) as number | undefined;
  const options: RunOptions = {
    timeoutMs: num("timeout") ?? DEFAULT_OPTIONS.timeoutMs,
    intervalMs: num("interval") ?? DEFAULT_OPTIONS.intervalMs,
    backoff: (values.get("backoff") as RunOptions["backoff"] | undefined) ??
      DEFAULT_OPTIONS.backoff,
    maxIntervalMs: num("max-interval") ?? DEFAULT_OPTIONS.maxIntervalMs,
    backoffFactor: values.has("backoff-factor")
      ? parseBackoffFactor(values.get("backoff-factor") as string)
      : DEFAULT_OPTIONS.backoffFactor,
    jitter: values.has("jitter")
      ? parseJitter(values.get("jitter") as string)
      : DEFAULT_OPTIONS.jitter,
    delayMs: num("delay") ?? DEFAULT_OPTIONS.delayMs,
    attemptTimeoutMs: num("attempt-timeout"),
    mode: (values.get("mode") as "all" | "any" | undefined) ?? DEFAULT_OPTIONS.mode,
    successes: num("successes") ?? DEFAULT_OPTIONS.successes,
    stableForMs: num("stable-for") ?? DEFAULT_OPTIONS.stableForMs,
    maxAttempts: num("max-attempts") ?? DEFAULT_OPTIONS.maxAttempts,
    timeoutExitCode: num("timeout-exit-code") ?? DEFAULT_OPTIONS.timeoutExitCode,
    progress: (values.get("progress") as RunOptions["progress"] | undefined) ??
      DEFAULT_OPTIONS.progress,
    output: (values.get("output") as RunOptions["output"] | undefined) ?? DEFAULT_OPTIONS.output,
    quiet: values.get("quiet") === true,
    noColor: values.get("no-color") === true,
    explain: values.get("explain") === true,
    reportFile: values.get("report") as string | undefined,
    start: (lists.get("start") ?? []).map(startCommand),
    startLog: values.get("start-log") as string | undefined,
    stopGraceMs: num("stop-grace") ?? DEFAULT_OPTIONS.stopGraceMs,
  };
  if (options.attemptTimeoutMs !== undefined && options.attemptTimeoutMs <= 0) {
    throw new UsageError("--attempt-timeout", "must be longer than 0");
  }
  if (options.intervalMs <= 0 && options.backoff === "exponential") {
    throw new UsageError("--interval", "must be longer than 0 with --backoff exponential");
  }
  if (values.has("max-interval") && options.maxIntervalMs < options.intervalMs) {
    throw new UsageError(
      "--max-interval",
      `must not be shorter than --interval (${formatDuration(options.intervalMs)}), got ${
        formatDuration(options.maxIntervalMs)
      }`,
    );
  }
  for (const flag of ["max-interval", "backoff-factor"]) {
    if (values.has(flag) && options.backoff !== "exponential") {
      throw new UsageError(`--${flag}`, "only applies with --backoff exponential");
    }
  }
  if (options.reportFile === "") throw new UsageError("--report", "expected a file name");
  if (options.startLog === "") throw new UsageError("--start-log", "expected a file name");
  return options;
}

/** One `--start` value as its words; empty or unclosed text is a usage error naming the flag. */
function startCommand(text: string, i: number): StartCommand {
  const where = `--start (start ${i + 1})`;
  let argv: string[];
  try {
    argv = splitWords(text);
  } catch (e) {
    if (!(e instanceof WordsError)) throw e;
    throw new UsageError(where, `${e.message}: ${text}`);
  }
  if (argv.length === 0) {
    throw new UsageError(where, "expected a command, e.g. --start 'npm run start:api'");
  }
  return { text, argv, shown: startShown(text, argv) };
}

/**
 * A started command as shown (docs/contract.md §9): as written when it holds no secret; else its
 * words quoted with each secret masked where it stands, and the same values masked inside the
 * other words too (`sh -c 'echo --password=x' --password=x`).
 */
function startShown(text: string, argv: readonly string[]): string {
  const m = maskWords(argv);
  if (m.secrets.length === 0) return text;
  return redactText(quoteMasked(argv, m.display), new SecretRegistry(m.secrets));
}
