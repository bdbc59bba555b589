/**
 * The one CLI runner of the suite: runs waitcmd as a subprocess, the way
 * users and CI do, and collects its exit code and outputs. Every other test
 * module spawns waitcmd through it (or through {@link WAITCMD}, where a
 * wrapper such as `script`, `unshare` or `time` must run it), so what is
 * under test is chosen in one place: {@link underTest}.
 *
 * `WAITCMD_UNDER_TEST` chooses it:
 * - `source` (the default): `scripts/waitcmd`, the CLI from the sources;
 * - `bundle`: the release artefact, `dist/bundle/waitcmd` (scripts/bundle.ts),
 *   which runs the bundle with the flags and permissions of the compiled
 *   binary. It must have been built from the sources of this tree
 *   (`scripts/deno task bundle`); a missing or stale one fails at once.
 *
 * One spawn ({@link startCli}) serves every way a test needs a run: to
 * completion ({@link runCli}, {@link runJson}, {@link runJsonl}), reacting
 * to its attempts as they come (`onAttempt`, {@link late}), reading its
 * lines while it runs ({@link LiveCli.waitFor}), signalling it (`started`),
 * or on a terminal ({@link runOnTerminal}).
 *
 * @module
 */

import { assertReportSchema } from "../_schema.ts";
import { inTempDir, repoRoot } from "../services/_util.ts";
import { BUNDLE_DIR, bundleState, LAUNCHER } from "../../scripts/bundle_manifest.ts";

/** What the tests run: `source` or `bundle` (WAITCMD_UNDER_TEST). */
export const UNDER_TEST: "source" | "bundle" = await (async () => {
  const v = Deno.env.get("WAITCMD_UNDER_TEST") || "source";
  if (v === "source") return v;
  if (v !== "bundle") {
    throw new Error(`WAITCMD_UNDER_TEST must be "source" or "bundle", not ${JSON.stringify(v)}`);
  }
  const state = await bundleState();
  if (state !== "fresh") {
    throw new Error(
      `WAITCMD_UNDER_TEST=bundle, but ${BUNDLE_DIR} is ${
        state === "missing" ? "missing" : "built from other sources than this tree's"
      }: run scripts/deno task bundle`,
    );
  }
  return v;
})();

/**
 * What the suite runs as waitcmd: the from-source launcher, or the release
 * bundle's ({@link UNDER_TEST}). The one place that chooses it.
 */
function underTest(): string {
  return UNDER_TEST === "bundle" ? `${BUNDLE_DIR}/${LAUNCHER}` : `${repoRoot}/scripts/waitcmd`;
}

/** The executable under test ({@link underTest}); for wrappers that must name it. */
export const WAITCMD: string = underTest();

/** The JSON report as tests read it. */
export interface JsonReportShape {
  status: string;
  elapsed_seconds: number;
  mode?: string;
  timeout_seconds?: number | null;
  conditions: {
    name: string;
    kind?: string;
    target?: string;
    guard?: boolean;
    satisfied: boolean;
    attempts: number;
    detail: string;
    last_error: string;
    hint?: string;
    fatal?: boolean;
  }[];
}

/** An `attempt` event of `--output jsonl`. */
export interface AttemptEvent {
  event: "attempt";
  condition: string;
  attempt: number;
  ok: boolean;
  detail: string;
  error: string;
}

/** What one CLI run produced. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is one JSON document. */
  json: JsonReportShape | undefined;
  /** The attempt events of `--output jsonl`, in order (empty in other modes). */
  attempts: AttemptEvent[];
  /** The report: the JSON document, or the `end` event of `--output jsonl`. */
  report: JsonReportShape | undefined;
  /** `performance.now()` when the exit was noticed. */
  exitedAt: number;
  /** `performance.now()` when the last attempt event was read (0 without any). */
  lastAttemptAt: number;
}

/** Called with each attempt event as it arrives; the calls are chained, the run is not held. */
export type OnAttempt = (
  a: AttemptEvent,
  all: readonly AttemptEvent[],
  child: Deno.ChildProcess,
) => unknown;

/** Options of one run. */
export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Text written to stdin (stdin is closed otherwise). */
  stdin?: string;
  /** Called once the process started (e.g. to create the awaited file, or to signal it). */
  started?: (child: Deno.ChildProcess) => void | Promise<void>;
  /** Runs `wrapper... WAITCMD args` (e.g. `unshare --net --`, `/usr/bin/time -f ...`). */
  wrapper?: string[];
  /** With `--output jsonl`: sees every attempt event (see {@link OnAttempt}). */
  onAttempt?: OnAttempt;
}

/** A running waitcmd process. */
export interface LiveCli {
  readonly child: Deno.ChildProcess;
  /** Lines seen so far on each stream. */
  readonly lines: { readonly stdout: string[]; readonly stderr: string[] };
  /** Resolves with the first line (seen before or later) of `stream` that `match` accepts. */
  waitFor(
    stream: "stdout" | "stderr",
    match: RegExp | ((line: string) => boolean),
    timeoutMs?: number,
  ): Promise<string>;
  /** Waits for the exit and for every `onAttempt` call; the report (if any) is schema-checked. */
  done(): Promise<CliResult>;
}

/**
 * Starts `waitcmd ...args` (under `opts.wrapper`, if any) with NO_COLOR and WAITCMD_CI=off unless
 * `env` sets them (a suite run inside GitHub Actions or GitLab CI must not fold its runs' lines).
 */
export function startCli(args: string[], opts: CliOptions = {}): LiveCli {
  const wrapper = opts.wrapper ?? [];
  const child = new Deno.Command(wrapper[0] ?? WAITCMD, {
    args: wrapper.length > 0 ? [...wrapper.slice(1), WAITCMD, ...args] : args,
    cwd: opts.cwd,
    env: { NO_COLOR: "1", WAITCMD_CI: "off", ...opts.env },
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const raw = { stdout: "", stderr: "" };
  const waiters = new Set<() => void>();
  const attempts: AttemptEvent[] = [];
  let end: JsonReportShape | undefined;
  let lastAttemptAt = 0;
  let chain: Promise<unknown> = Promise.resolve();
  const onLine = (name: "stdout" | "stderr", line: string) => {
    lines[name].push(line);
    if (name !== "stdout" || !line.startsWith('{"event"')) return;
    const ev = JSON.parse(line) as { event: string };
    if (ev.event === "attempt") {
      const a = ev as AttemptEvent;
      attempts.push(a);
      lastAttemptAt = performance.now();
      const seen = [...attempts];
      if (opts.onAttempt) {
        chain = chain.then(() => opts.onAttempt!(a, seen, child));
        // Seen by done(); handled here so a failing hook is not an unhandled rejection meanwhile.
        chain.catch(() => {});
      }
    } else if (ev.event === "end") {
      const { event: _, ...report } = ev;
      end = report as unknown as JsonReportShape;
    }
  };
  const pump = async (name: "stdout" | "stderr", stream: ReadableStream<Uint8Array>) => {
    let rest = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      raw[name] += text;
      rest += text;
      const parts = rest.split("\n");
      rest = parts.pop()!;
      for (const l of parts) onLine(name, l);
      for (const w of [...waiters]) w();
    }
    if (rest) onLine(name, rest);
  };
  let exitedAt = 0;
  const status = child.status.then((s) => {
    exitedAt = performance.now();
    return s;
  });
  const pumps = Promise.all([pump("stdout", child.stdout), pump("stderr", child.stderr)]);
  /** Set once the process exited and all its output was read. */
  let finished = false;
  Promise.all([status, pumps]).then(() => {
    finished = true;
    for (const w of [...waiters]) w();
  });
  const fed = (async () => {
    if (opts.stdin === undefined) return;
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  })();
  const hooked = Promise.resolve(opts.started?.(child));
  fed.catch(() => {});
  hooked.catch(() => {});

  return {
    child,
    lines,
    waitFor(stream, match, timeoutMs = 20_000) {
      const test = typeof match === "function" ? match : (l: string) => match.test(l);
      return new Promise<string>((resolve, reject) => {
        let timer: ReturnType<typeof setTimeout> | undefined = undefined;
        const check = () => {
          const hit = lines[stream].find(test);
          if (hit !== undefined || finished) {
            waiters.delete(check);
            clearTimeout(timer);
            if (hit !== undefined) resolve(hit);
            else {
              reject(
                new Error(
                  `waitcmd exited before a line matching ${match} on ${stream}:\n${raw[stream]}`,
                ),
              );
            }
          }
        };
        timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no line matching ${match} on ${stream} within ${timeoutMs} ms:\n${raw[stream]}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async done() {
      const [s] = await Promise.all([status, pumps, fed, hooked]);
      await chain;
      let json: JsonReportShape | undefined;
      try {
        json = JSON.parse(raw.stdout);
      } catch {
        json = undefined;
      }
      const isReport = typeof json === "object" && json !== null && "status" in json;
      const report = isReport ? json : end;
      // Every report a test reads must match the published schema (docs/report.schema.json).
      if (report !== undefined) await assertReportSchema(report);
      return {
        code: s.code,
        stdout: raw.stdout,
        stderr: raw.stderr,
        json,
        attempts,
        report,
        exitedAt,
        lastAttemptAt,
      };
    },
  };
}

/** Runs `waitcmd ...args` to completion. */
export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return startCli(args, opts).done();
}

/** Runs the CLI with `--output json` and returns the result, failing loudly if stdout is not one report. */
export async function runJson(
  globalsAndArgs: string[],
  opts: CliOptions = {},
): Promise<CliResult & { json: JsonReportShape; report: JsonReportShape }> {
  const r = await runCli(["--output", "json", ...globalsAndArgs], opts);
  if (!r.json) {
    throw new Error(
      `expected a JSON report on stdout, got:\n${r.stdout}\n--- stderr ---\n${r.stderr}`,
    );
  }
  return r as CliResult & { json: JsonReportShape; report: JsonReportShape };
}

/**
 * The global flags most runs of a test begin with: `--timeout TIMEOUT --interval INTERVAL`, and
 * `--attempt-timeout ATTEMPT` where one is given.
 */
export function timing(timeout: string, interval: string, attempt?: string): string[] {
  const flags = ["--timeout", timeout, "--interval", interval];
  return attempt === undefined ? flags : [...flags, "--attempt-timeout", attempt];
}

/**
 * Asserts that each row's run (`KIND ...args` under `globals`) times out with the row's text as
 * its last error, tried at least twice: a TLS failure is retried, never fatal.
 */
export async function assertTlsRetried(
  kind: string,
  rows: readonly (readonly [args: string[], error: string])[],
  globals: string[] = timing("1s", "200ms"),
): Promise<void> {
  for (const [args, error] of rows) {
    const r = await runJson([...globals, kind, ...args]);
    assertOutcome(r, { code: 1, status: "timeout", error }, args.join(" "));
    if (r.report!.conditions[0]!.attempts < 2) {
      throw new Error(`${args.join(" ")}: TLS failures are retried, yet one attempt:\n${r.stderr}`);
    }
  }
}

/** Writes a recipe `name` into `dir` (`text`, or its lines joined by newlines); returns its path. */
export async function writeRecipe(
  dir: string,
  text: string | readonly string[],
  name = "waits.yaml",
): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, typeof text === "string" ? text : text.join("\n"));
  return path;
}

/**
 * Declares a test with a log `app.log` holding `text`, in a temporary directory of its own
 * (removed after): `fn` gets the log's path and the directory.
 */
export function logTest(
  name: string,
  text: string,
  fn: (log: string, dir: string) => Promise<void>,
): void {
  Deno.test(name, () =>
    inTempDir("waitcmd-log-")(async (dir) => {
      const log = `${dir}/app.log`;
      await Deno.writeTextFile(log, text);
      await fn(log, dir);
    }));
}

/** Declares a test that runs the CLI and servers of its own (resource and op sanitizers off). */
export function cliTest(name: string, fn: (t: Deno.TestContext) => Promise<void>): void {
  Deno.test({ name, sanitizeResources: false, sanitizeOps: false, fn });
}

/** What a run must have ended with (see {@link assertOutcome}). */
export interface Outcome {
  /** The exit code: 0 satisfied, 1 timeout, 3 fatal (docs/contract.md). */
  code: number;
  /** The report's `status`. */
  status?: string;
  /** The first condition's `detail`: the same text, or text a RegExp matches. */
  detail?: string | RegExp;
  /** The first condition's `last_error`: the same text, or text a RegExp matches. */
  error?: string | RegExp;
  /** What the run printed on stderr, exactly. */
  stderr?: string;
  /** The error of the run's first attempt (a run that was pending before it held). */
  firstError?: string | RegExp;
}

/**
 * Asserts a run's exit code and, where `want` names them, its report's status and its first
 * condition's detail and last_error; a failure shows everything the run printed.
 */
export function assertOutcome(r: CliResult, want: Outcome, msg = ""): void {
  const first = r.report?.conditions[0];
  const same = (got: string | undefined, w: string | RegExp | undefined) =>
    w === undefined || (typeof w === "string" ? got === w : got !== undefined && w.test(got));
  const wrong = [
    r.code === want.code ? "" : `exit ${r.code}, want ${want.code}`,
    same(r.report?.status, want.status) ? "" : `status ${r.report?.status}, want ${want.status}`,
    same(first?.detail, want.detail) ? "" : `detail ${first?.detail}, want ${want.detail}`,
    same(first?.last_error, want.error)
      ? ""
      : `last_error ${first?.last_error}, want ${want.error}`,
    same(r.stderr, want.stderr)
      ? ""
      : `stderr ${JSON.stringify(r.stderr)}, want ${JSON.stringify(want.stderr)}`,
    same(r.attempts[0]?.error, want.firstError)
      ? ""
      : `first attempt's error ${r.attempts[0]?.error}, want ${want.firstError}`,
  ].filter((w) => w !== "");
  if (wrong.length > 0) {
    throw new Error(
      `${msg ? msg + ": " : ""}${wrong.join("; ")}\nstdout: ${r.stdout}\nstderr: ${r.stderr}` +
        `\nattempts: ${JSON.stringify(r.attempts)}`,
    );
  }
}

/** Runs `waitcmd --output json ...args` ({@link runJson}) and asserts its {@link Outcome}. */
export async function expectJson(
  globalsAndArgs: string[],
  want: Outcome,
  opts: CliOptions = {},
): Promise<CliResult & { json: JsonReportShape; report: JsonReportShape }> {
  const r = await runJson(globalsAndArgs, opts);
  assertOutcome(r, want);
  return r;
}

/**
 * Runs the CLI with `--output jsonl` (attempt events to `opts.onAttempt`), failing loudly
 * without an `end` event. The `end` event carries the same fields as the JSON report.
 */
export async function runJsonl(
  globalsAndArgs: string[],
  opts: CliOptions = {},
): Promise<CliResult & { report: JsonReportShape }> {
  const r = await runCli(["--output", "jsonl", ...globalsAndArgs], opts);
  if (!r.report) throw new Error(`no end event; stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return r as CliResult & { report: JsonReportShape };
}

/**
 * An `onAttempt` that runs `change` once, at the first failed attempt: the
 * way to test "the target appears later" without guessing how long waitcmd
 * takes to start.
 */
export function late(change: (child: Deno.ChildProcess) => unknown): OnAttempt {
  let changed = false;
  return (a, _all, child) => {
    if (a.ok || changed) return;
    changed = true;
    return change(child);
  };
}

/**
 * Runs `waitcmd --output jsonl ...args` and runs `change()` once the first attempt failed
 * (a shorthand of {@link runJsonl} with {@link late}).
 */
export function runLate(
  args: string[],
  change: () => unknown,
  env: Record<string, string> = {},
): Promise<CliResult & { report: JsonReportShape }> {
  return runJsonl(args, { env, onAttempt: late(change) });
}

/** Asserts a usage error: exit 2, nothing on stdout, exactly one stderr line containing `fragment`. */
export function usageErrorLine(r: CliResult): string {
  const lines = r.stderr.trimEnd().split("\n");
  if (r.code !== 2 || r.stdout !== "" || lines.length !== 1 || !lines[0]!.startsWith("waitcmd: ")) {
    throw new Error(
      `expected one usage-error line and exit 2, got exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
    );
  }
  return lines[0]!;
}

/**
 * Runs each case (four at a time): its words must be a usage error ({@link usageErrorLine})
 * whose line is `want` (`exact`), includes it, or matches it (a RegExp), and that holds none of
 * `secrets`.
 */
export async function assertUsageErrors(
  cases: readonly (readonly [args: string[], want: string | RegExp])[],
  opts: { env?: Record<string, string>; secrets?: readonly string[]; exact?: boolean } = {},
): Promise<void> {
  const failures: string[] = [];
  const queue = [...cases];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const [args, want] = c;
      try {
        const line = usageErrorLine(await runCli(args, { env: opts.env }));
        const ok = typeof want !== "string"
          ? want.test(line)
          : opts.exact
          ? line === want
          : line.includes(want);
        if (!ok) failures.push(`${args.join(" ")}\n  got:  ${line}\n  want: ${want}`);
        for (const secret of opts.secrets ?? []) {
          if (line.includes(secret)) failures.push(`${args.join(" ")}: shows a secret: ${line}`);
        }
      } catch (e) {
        failures.push(`${args.join(" ")}: ${(e as Error).message}`);
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  if (failures.length > 0) throw new Error(`usage errors:\n${failures.join("\n")}`);
}

/**
 * A kind's usage errors ({@link assertUsageErrors}): each case's line must begin
 * `waitcmd: FRAGMENT` and end with the pointer to the kind's help.
 */
export function assertUsageFragments(
  kind: string,
  cases: readonly (readonly [args: string[], fragment: string])[],
): Promise<void> {
  return assertUsageErrors(cases.map(([args, fragment]) => [
    args,
    new RegExp(`^waitcmd: ${literal(fragment)}.*\\(see: waitcmd help ${kind}\\)$`),
  ]));
}

/**
 * A kind's usage errors ({@link assertUsageErrors}): each row's words (its condition first, under
 * the name it is given, with `env` if the row has one, after `opts.globals`) must print exactly
 * `waitcmd: condition 1 (<name>): <text> (see: waitcmd help <kind>)`.
 */
export async function assertKindUsageErrors(
  kind: string,
  rows: readonly (readonly [args: string[], text: string, env?: Record<string, string>])[],
  opts: { env?: Record<string, string>; secrets?: readonly string[]; globals?: string[] } = {},
): Promise<void> {
  const line = (args: string[], text: string) =>
    `waitcmd: condition 1 (${args[0]}): ${text} (see: waitcmd help ${kind})`;
  const byEnv = new Map<Record<string, string> | undefined, [string[], string][]>();
  for (const [args, text, env] of rows) {
    const cases = [...(byEnv.get(env) ?? []), [[...opts.globals ?? [], ...args], line(args, text)]];
    byEnv.set(env, cases as [string[], string][]);
  }
  for (const [env, cases] of byEnv) {
    await assertUsageErrors(cases, { ...opts, env: env ?? opts.env, exact: true });
  }
}

/** What `runOnTerminal` saw. */
export interface TerminalRun {
  code: number;
  /** Everything written to the terminal, escapes included. */
  readonly raw: string;
  /** Each line the live view drew (after an erase-line escape), escapes removed. */
  readonly drawn: string[];
}

/** Removes ANSI escape sequences. */
export function stripAnsi(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
}

/** `text` as a RegExp that matches it literally. */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `args` quoted for a POSIX shell, WAITCMD first. */
export function shellCommand(args: string[]): string {
  return [WAITCMD, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
}

/**
 * Runs `waitcmd ...args` under a pseudo-terminal (util-linux `script`) of
 * `columns` columns and `rows` rows (default 160×40), so stderr is a terminal and the live view
 * draws. NO_COLOR is unset unless `env` sets it.
 */
export async function runOnTerminal(
  args: string[],
  opts: { columns?: number; rows?: number; env?: Record<string, string> } = {},
): Promise<TerminalRun> {
  const env = opts.env ?? {};
  const cmd = `stty cols ${opts.columns ?? 160} rows ${opts.rows ?? 40}; ${
    "NO_COLOR" in env ? "" : "env -u NO_COLOR "
  }${shellCommand(args)}`;
  const out = await new Deno.Command("script", {
    args: ["-qefc", cmd, "/dev/null"],
    env: { TERM: "xterm", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const raw = new TextDecoder().decode(out.stdout);
  const drawn = raw.split("\x1b[2K").slice(1).map((seg) =>
    stripAnsi(seg.split("\n")[0]!).replace(/\r$/, "")
  );
  return { code: out.code, raw, drawn };
}
