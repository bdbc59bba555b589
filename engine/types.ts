/**
 * The contract between the engine and the condition kinds.
 *
 * A kind is one object (`ConditionKind`) that declares its target shape and
 * flags, and turns a parsed command-line segment into a `Probe`. The engine
 * owns everything generic (grammar, typed flag values, timeouts, streaks,
 * output); a kind owns only what its condition means.
 *
 * @module
 */

/** What one attempt found. A target that is down is data, not an exception. */
export type ProbeResult =
  /**
   * The condition holds; `detail` is a short outcome text (for log: the matched line).
   * `summary`, when given, replaces `detail` in the human lines only (JSON keeps `detail`).
   */
  | { readonly status: "satisfied"; readonly detail: string; readonly summary?: string }
  /** Not yet; `error` says why (`connection refused`, `1/3 matches`) and is worth retrying. */
  | { readonly status: "pending"; readonly error: string }
  /** No retry can fix this (a job failed, a command does not exist): the run ends with exit 3. */
  | { readonly status: "fatal"; readonly error: string };

/** What a probe gets for one attempt. */
export interface AttemptContext {
  /** Aborted when the attempt times out or the run ends; probes must stop promptly. */
  readonly signal: AbortSignal;
  /** 1-based attempt number of this condition. */
  readonly attempt: number;
}

/** What a probe's watcher gets. */
export interface WatchContext {
  /** Aborted when the run ends; the watcher must then finish and release its resources. */
  readonly signal: AbortSignal;
  /** Tells the user something once (human mode only), e.g. that watching fell back to polling. */
  notice(message: string): void;
}

/**
 * A ready-to-run check produced by `ConditionKind.parse`. It may keep state
 * between attempts (a log reader's offset); one probe serves one condition of
 * one run.
 */
export interface Probe {
  /** The target as shown in the condition's display name (secrets already removed). */
  readonly target: string;
  /** One attempt. Honours `ctx.signal`; throws only on bugs. */
  check(ctx: AttemptContext): Promise<ProbeResult>;
  /**
   * Optional change notifications: each yielded value asks the runner for an
   * attempt now instead of after the interval (event-driven waiting).
   */
  watch?(ctx: WatchContext): AsyncIterable<unknown>;
  /** Releases what the probe holds across attempts (open files, clients). */
  close?(): void | Promise<void>;
}

/** How a flag's value is typed; the engine validates it before `parse` sees it. */
export type FlagType = "boolean" | "string" | "integer" | "duration" | "enum";

/** One flag of a kind, declared once: parsing, help and completions derive from it. */
export interface FlagSpec {
  /** Name without the leading `--`. */
  readonly name: string;
  readonly type: FlagType;
  /** One line for help. */
  readonly description: string;
  /** Value placeholder in help (`CODES`, `TEXT`). */
  readonly placeholder?: string;
  /** Accepted values of an `enum` flag (also offered by completions). */
  readonly values?: readonly string[];
  /** Lowest accepted `integer`. */
  readonly min?: number;
  /** Highest accepted `integer`. */
  readonly max?: number;
  /** May be given several times; `KindInput.strings` returns every value. */
  readonly repeatable?: boolean;
  /** The value is a secret: it is redacted from every output. */
  readonly secret?: boolean;
  /** Shell completion hint for the value. */
  readonly complete?: "file" | "directory";
}

/** What a kind takes as its positional argument. */
export interface TargetSpec {
  /**
   * `required`: one positional target; `none`: no positional (selected by
   * flags); `command`: the words after the kind's own `--`.
   */
  readonly shape: "required" | "none" | "command";
  /** Placeholder in help (`URL`, `HOST:PORT`). */
  readonly placeholder: string;
  readonly description: string;
  readonly complete?: "file" | "directory";
}

/** A usage example shown by `waitcmd help <kind>`. */
export interface Example {
  /** The arguments after `waitcmd`. */
  readonly args: string;
  readonly description: string;
}

/**
 * One condition segment after the engine's generic parsing: flag values are
 * already typed and range-checked. `fail` raises a usage error located at this
 * condition and flag.
 */
export interface KindInput {
  /** The kind word as typed (`s3`, `objstore`). */
  readonly kindWord: string;
  /** The positional target, if the kind takes one. */
  readonly target: string | undefined;
  /** The command words, for kinds whose target shape is `command`. */
  readonly command: readonly string[];
  /** The environment, for kinds with documented environment fallbacks. */
  readonly env: Readonly<Record<string, string>>;
  /** Whether the flag was given. */
  has(flag: string): boolean;
  /** Value of a string or enum flag (the last one given). */
  string(flag: string): string | undefined;
  /** Every value of a repeatable flag, in order. */
  strings(flag: string): string[];
  bool(flag: string): boolean;
  integer(flag: string): number | undefined;
  /** Value of a duration flag, in milliseconds. */
  duration(flag: string): number | undefined;
  /** Throws a usage error naming this condition and `flag` (or the target when `flag` is undefined). */
  fail(flag: string | undefined, message: string): never;
  /** Registers a secret obtained other than through a `secret` flag (e.g. read from an env var). */
  secret(value: string): void;
}

/** A condition kind: its declaration and its parser. See conditions/mod.ts for the registry. */
export interface ConditionKind {
  readonly name: string;
  readonly aliases: readonly string[];
  /** One line for `waitcmd --help`. */
  readonly summary: string;
  /** A paragraph for `waitcmd help <kind>`: what "satisfied" means. */
  readonly description: string;
  readonly target: TargetSpec;
  readonly flags: readonly FlagSpec[];
  readonly examples: readonly Example[];
  /** Validates everything (no I/O) and returns the probe; throws via `input.fail`. */
  parse(input: KindInput): Probe;
}
