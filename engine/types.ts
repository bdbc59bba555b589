/**
 * The contract between the engine and the condition kinds.
 *
 * A kind is one object (`ConditionKind`) that declares its target shape and
 * flags and turns a command-line segment into plain options; its probe module,
 * loaded only when it runs, turns the options into a `Probe`. The engine
 * owns everything generic (grammar, typed flag values, timeouts, streaks,
 * output); a kind owns only what its condition means.
 *
 * @module
 */

import type { Clock } from "./clock.ts";
import type { SecretRegistry } from "./masking.ts";

/** What one attempt found. A target that is down is data, not an exception. */
export type ProbeResult =
  /**
   * The condition holds; `detail` is a short outcome text (for log: the matched line).
   * `summary`, when given, replaces `detail` in the human lines only (JSON keeps `detail`).
   */
  | {
    readonly status: "satisfied";
    readonly detail: string;
    readonly summary?: string;
    /**
     * What the condition matched, by group name or number (docs/contract.md §7, captures):
     * a `--matches` regex's groups, a `--jsonpath`'s compared value as `value`.
     */
    readonly captures?: Readonly<Record<string, string>>;
  }
  /**
   * Not yet; `error` says why (`connection refused`, `1/3 matches`) and is worth retrying.
   * `hint`, when a common cause is known, says what is likely wrong and how to fix it
   * (docs/contract.md §6, hints).
   */
  | { readonly status: "pending"; readonly error: string; readonly hint?: string }
  /**
   * No retry can fix this (a job failed, credentials refused): the run ends with exit 3.
   * Whatever returns a `ProbeResult` says fatal this way, never by throwing `FatalError`
   * (docs/development.md, the one fatal rule).
   */
  | { readonly status: "fatal"; readonly error: string; readonly hint?: string };

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
 * A ready-to-run check, made by a kind's probe module from the options its
 * `parse` returned. It may keep state between attempts (a log reader's
 * offset); one probe serves one condition of one run.
 *
 * Error rule (docs/contract.md §8): `check` returns a `ProbeResult` for
 * everything the target does, fatal verdicts included. What it throws is
 * reported by the engine as well: a `FatalError` (engine/errors.ts), thrown
 * only by helpers that return something else (docs/development.md, the one
 * fatal rule), ends the run with exit 3; any other thrown value is a pending
 * attempt whose `last_error` is the error's text.
 */
export interface Probe {
  /** One attempt. Honours `ctx.signal`. */
  check(ctx: AttemptContext): Promise<ProbeResult>;
  /**
   * Optional change notifications: each yielded value asks the runner for an
   * attempt now instead of after the interval (event-driven waiting).
   */
  watch?(ctx: WatchContext): AsyncIterable<unknown>;
  /**
   * Change notifications pushed rather than yielded, used instead of `watch` when given: calls
   * `onChange` for each change (perhaps before it returns), never after `ctx.signal` aborted;
   * what it returns settles when the watcher ends (at once when `ctx.signal` aborts), rejected
   * when it failed. Nothing of it waits while no change comes: no suspended generator per
   * condition, which a manifest of tens of thousands of objects pays for on both threads
   * (docs/reliability.md, large manifests). engine/follow.ts runs either form.
   */
  listen?(ctx: WatchContext, onChange: () => void): Promise<void>;
  /**
   * Takes the probe's starting point now (a `log`'s end of file), before `--start` starts
   * anything, so that what a started command writes counts as new (docs/contract.md §4).
   * Errors are left to the first attempt.
   */
  baseline?(signal: AbortSignal): Promise<void>;
  /** Releases what the probe holds across attempts (open files, clients). Idempotent. */
  close?(): void | Promise<void>;
}

/** What a probe module gets besides its options: the run's clock, environment and secrets. */
export interface ProbeEnv {
  /** The engine's clock; kinds never read time or sleep on their own. */
  readonly clock: Clock;
  /** The process environment, for documented fallbacks read at run time. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * The run's secrets (docs/contract.md §9), shared with the output: a kind cuts a text from
   * outside with `clip(text, max, env.secrets)`, and registers what it finds at run time (a
   * password file's content) with `env.secrets.add`. Absent outside a run (tests).
   */
  readonly secrets?: SecretRegistry;
}

/**
 * A kind's probe module: `conditions/<kind>/probe.ts` exports one as `create`.
 * It returns a promise when the options need an npm library that the module
 * imports lazily: the library is imported there, before the run's clock
 * starts (docs/contract.md §2).
 */
export type ProbeFactory<O> = (options: O, env: ProbeEnv) => Probe | Promise<Probe>;

/** How a flag's value is typed; the engine validates it before `parse` sees it. */
export type FlagType = "boolean" | "string" | "integer" | "duration" | "enum";

/** One flag of a kind, declared once: parsing, help and completions derive from it. */
export interface FlagSpec {
  /** Name without the leading `--`. */
  readonly name: string;
  /** One-letter form, written `-x`. */
  readonly short?: string;
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
  /** `integer` values within min..max that are refused anyway, each with why. */
  readonly reserved?: Readonly<Record<number, string>>;
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
   * `required`: one positional target; `optional`: one or none (the kind's
   * `parse` decides when it is missing); `none`: no positional (selected by
   * flags); `command`: the words after the kind's own `--`.
   */
  readonly shape: "required" | "optional" | "none" | "command";
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

/** What a kind's `parse` returns: the display target and plain typed options. */
export interface Parsed<O> {
  /** The target as shown in the condition's display name (secrets already removed). */
  readonly target: string;
  /** Everything the probe needs, validated; plain data (no I/O handles, no closures). */
  readonly options: O;
  /**
   * The named groups this condition can capture (a `--matches` regex's `(?P<name>…)`), for
   * `then`'s environment; two conditions that can capture one name are a usage error.
   */
  readonly captures?: readonly string[];
}

/** What a kind's `expand` may use: reading the files its options name, and failing. */
export interface ExpandContext {
  /** The text of a file (`-`: standard input), bounded in size (docs/contract.md §9). */
  readText(path: string): Promise<string>;
  /** The names of a directory's entries (files and directories), sorted. */
  readDir(
    path: string,
  ): Promise<readonly { name: string; isFile: boolean; isDirectory: boolean }[]>;
  /** Whether a path is a directory (false when it does not exist or is something else). */
  isDirectory(path: string): Promise<boolean>;
  /** Raises a usage error at this condition's flag (exit 2, nothing probed). */
  readonly fail: Fail;
  /** Aborted by a signal: long reading (a large manifest's YAML) stops (docs/contract.md §3). */
  readonly signal?: AbortSignal;
}

/** Raises a usage error at a condition's flag (or its target when `flag` is undefined). */
export type Fail = (flag: string | undefined, message: string) => never;

/**
 * A condition kind: its declaration (conditions/<kind>/mod.ts). The registry
 * (conditions/mod.ts) lists them; the probe module is loaded only when a
 * condition of the kind runs.
 */
export interface ConditionKind<O = unknown> {
  readonly name: string;
  readonly aliases: readonly string[];
  /** One line for `waitcmd --help`. */
  readonly summary: string;
  /** A paragraph for `waitcmd help <kind>`: what "satisfied" means. */
  readonly description: string;
  readonly target: TargetSpec;
  readonly flags: readonly FlagSpec[];
  readonly examples: readonly Example[];
  /** Validates everything it can without I/O, synchronously; fails via `input.fail`. */
  parse(input: KindInput): Parsed<O>;
  /**
   * Validation that needs a library (a JSONPath grammar), run after every
   * condition parsed and before the first probe; fails via `fail` (exit 2).
   */
  validate?(options: O, fail: Fail): Promise<void>;
  /**
   * For a condition that stands for several (`orch -f manifests/`): reads what its options name
   * and returns one entry per leaf condition, in order; they replace it before the first probe
   * (docs/contract.md §1). Undefined: the condition stands for itself.
   */
  expand?(options: O, ctx: ExpandContext): Promise<readonly Parsed<O>[] | undefined>;
  /** Loads the probe module: a literal `import("./probe.ts")`, so `deno compile` embeds it. */
  load(): Promise<ProbeFactory<O>>;
  /**
   * The probes run a third-party protocol or parser (a driver, an SDK, a decompressor): they
   * run in a worker of the kind's own, off the main thread that keeps the clock and the
   * signals (engine/isolate.ts, docs/contract.md §2). The worker imports the probe module
   * and its libraries itself, so the options must be structured-clonable plain data (they
   * are by contract) and the probes may use only what `ProbeEnv` gives them.
   */
  readonly isolate?: true;
  /**
   * With `isolate`: the most bytes one socket of the kind's worker may read from its server;
   * past it the socket is destroyed and the attempt is pending, naming the cap
   * (engine/socket_cap.ts, docs/reliability.md). Undefined: no cap (a watch stream, an object
   * body read to a cap of the kind's own).
   */
  readonly socketReadMax?: number;
  /**
   * For a first word that names no kind: when the word looks like this
   * kind's target (a URL for http, `host:port` for tcp, wait-on's `tcp:…`
   * form), the condition it was meant as (`tcp localhost:8080`); the usage
   * error suggests it. Pure; undefined when the word is not this kind's.
   */
  claims?(word: string): string | undefined;
  /**
   * For `waitcmd doctor`: undefined when the kind can work on this machine,
   * else the reason (no Docker socket, no kubeconfig). Absent: nothing to check.
   */
  doctor?(env: Readonly<Record<string, string>>): Promise<string | undefined>;
}

/**
 * Declares a kind. The registry holds kinds of different option types side
 * by side; each kind's options only ever flow from its own `parse` to its
 * own probe, which this erasure keeps true by construction.
 */
export function defineKind<O>(kind: ConditionKind<O>): ConditionKind {
  return kind as unknown as ConditionKind;
}
