/**
 * The run's options from the global flags given (docs/contract.md §4): the environment's defaults
 * where a flag is not given, the defaults else, and the checks that need several of them.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { formatDuration } from "./duration.ts";
import { type FlagValue, timeoutValue, typedValue } from "./flag_values.ts";
import { RUN_FLAGS, type RunOptions } from "./options.ts";

/** The run's options from the typed values of the global flags given, by flag name. */
export function runOptionsOf(
  values: Map<string, FlagValue>,
  env: Readonly<Record<string, string>>,
  lists: ReadonlyMap<string, readonly string[]> = new Map(),
): RunOptions {
  // Environment defaults: a flag wins; a bad value names the variable.
  for (const spec of RUN_FLAGS) {
    const raw = spec.env === undefined ? undefined : env[spec.env];
    if (raw === undefined || raw === "" || values.has(spec.name)) continue;
    values.set(
      spec.name,
      spec.name === "timeout"
        ? timeoutValue(raw, spec.env!)
        : typedValue(spec, raw, spec.env!, undefined),
    );
  }
  // Each declared option: what its flag (or variable) gave, read as declared, else its default.
  const built: Record<string, unknown> = {};
  for (const spec of RUN_FLAGS) {
    if (spec.option === undefined) continue;
    const given = spec.repeatable ? lists.get(spec.name) : values.get(spec.name);
    built[spec.option] = given === undefined ? spec.default : spec.read ? spec.read(given) : given;
  }
  const options = built as unknown as RunOptions;
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
