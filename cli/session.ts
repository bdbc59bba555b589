/**
 * One run of a plan, from the CLI's side (docs/contract.md §3, §6, §7):
 * the checks before the wait (`then`, `--report`), `--explain`, the loading
 * of the kinds' probes, the renderers `--output` and the terminal ask for
 * (cli/listener.ts), the run itself, the report file, and what `then` is
 * handed. A signal before the wait started ends it at once too.
 *
 * @module
 */

import type { Clock } from "../engine/clock.ts";
import { describeError, UsageError } from "../engine/errors.ts";
import {
  checkThen,
  type Handover,
  signalExitCode,
  thenEnvironment,
  thenRefusal,
} from "../engine/handover.ts";
import type { Plan } from "../engine/plan.ts";
import { mark } from "../engine/trace.ts";
import { preparePlan, type ReadyPlan } from "../engine/prepare.ts";
import type { Report, RunStatus } from "../engine/report.ts";
import { run, type RunContext } from "../engine/runner.ts";
import type { StartedSet } from "../engine/started.ts";
import { maskArgvText, maskWords } from "../engine/typed_secrets.ts";
import { ownWords, redactText, SecretRegistry } from "../engine/masking.ts";
import { turn } from "../engine/timers.ts";
import { Pacer, Stopped } from "../engine/pace.ts";
import { lineRedactor, makeRedactor } from "../output/redact.ts";
import { listener } from "./listener.ts";

/** What a session needs from the process. */
export interface SessionIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly env: Readonly<Record<string, string>>;
  readonly stderrIsTerminal: boolean;
  /** The terminal's width in columns; 0 when unknown (a terminal that reports 0×0). */
  columns(): number;
  readonly clock: Clock;
  /** The wall clock, ms since the epoch (GitLab's section markers; default `Date.now`). */
  wallClock?(): number;
  /** Aborted with "SIGINT", "SIGTERM", "SIGHUP" or "SIGQUIT" to cancel the run. */
  readonly signal: AbortSignal;
  /**
   * Hears the cancelling signals on a thread of their own too, until the returned function is
   * called: asked for a run of {@link OFF_THREAD_FROM} conditions or more (main.ts).
   */
  hearOffThread?(): Promise<() => void>;
}

/**
 * From how many conditions a run hears its signals off the main thread as well (a worker: about
 * 20 ms and a few MB): the runtime was seen to call the main thread's listener late with 30,000
 * socket conditions, never with 10,000 or fewer (docs/reliability.md, "Signals in large runs").
 */
export const OFF_THREAD_FROM = 2_000;

/** How the session ended: its report (none for --explain), and `then` when it is due. */
export interface SessionEnd {
  readonly report?: Report;
  /** The exit code of a session that ended before a report (usage error, --explain). */
  readonly code?: number;
  readonly handover?: Handover;
  /** Stops what `--start` started, once `then` has ended (docs/contract.md §4). */
  readonly stopStarted?: () => Promise<void>;
}

/**
 * Runs `plan` to its end. A usage error found here (a `then` that cannot run) is exit 2.
 * `kindWords`: every kind's name and aliases, for the warning about `then`'s words.
 */
export async function runSession(
  plan: Plan,
  io: SessionIo,
  kindWords: ReadonlySet<string> = new Set(),
): Promise<SessionEnd> {
  // One registry for the run: what probes register while it runs is masked from output too.
  const secrets = new SecretRegistry(plan.secrets);
  // waitcmd's own words are never masked by value, a password equal to one included (§9).
  // In slices: four words a condition, tens of thousands of conditions hold no signal (§3).
  const pacer = new Pacer();
  for (const c of plan.conditions) {
    secrets.keep(ownWords([c.kindWord, c.kind.name, c.name, c.target]));
    await pacer.step();
  }
  const redact = makeRedactor(secrets);
  const line = lineRedactor(redact, false);
  const o = plan.options;
  try {
    if (plan.then) checkThen(plan.then[0]!, io.env);
    if (o.reportFile !== undefined) {
      await (await import("../output/report_file.ts")).checkReportFile(o.reportFile);
    }
    if (o.startLog !== undefined && o.start.length > 0) await checkStartLog(o.startLog);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // It may quote then's words: their secrets masked where they stand (docs/contract.md §9).
    io.stderr(line(maskArgvText(e.format(), plan.then ?? [], new Set())) + "\n");
    return { code: 2 };
  }
  if (o.explain) {
    const { explainObject, explainText } = await import("../output/explain.ts");
    // A signal is answered here too: 130 or 143, not the explanation and 0 (docs/contract.md §3).
    if (io.signal.aborted) return cancelledBefore(io);
    // In slices: a large plan takes a while to explain, and a signal meanwhile is answered.
    const pacer = new Pacer(io.signal);
    let text: string;
    try {
      text = o.output === "text"
        ? await explainText(plan, redact, pacer)
        : JSON.stringify(await explainObject(plan, redact, pacer), null, 2) + "\n";
    } catch (e) {
      if (e instanceof Stopped) return cancelledBefore(io);
      throw e;
    }
    // A large plan takes a while to explain: a signal meanwhile is answered, not printed over.
    await turn();
    if (io.signal.aborted) return cancelledBefore(io);
    io.stdout(text);
    return { code: 0 };
  }
  // JSON output keeps stderr empty (docs/contract.md §7).
  if (o.output === "text" && !o.quiet) {
    for (const w of thenWarnings(plan, kindWords)) io.stderr(line(w) + "\n");
  }
  const stopHearing = plan.conditions.length >= OFF_THREAD_FROM
    ? await io.hearOffThread?.()
    : undefined;
  const ready = await loadProbes(plan, io, secrets);
  mark("probes");
  // Only the renderers this run writes with (start-up cost, docs/performance.md).
  const [json, onEvent] = await Promise.all([
    o.output !== "text" || o.reportFile !== undefined ? import("../output/json.ts") : undefined,
    listener(plan, io, redact),
  ]);
  mark("renderers");
  const starting = ready === undefined || o.start.length === 0 ? undefined : await startCommands(
    ready,
    io,
    (text) => line(redactText(text, secrets)),
    onEvent?.print ?? ((l) => io.stderr(l + "\n")),
  );
  const report = ready === undefined
    ? cancelledBeforeStart(plan, io.signal.reason)
    : await run(ready, {
      clock: io.clock,
      signal: io.signal,
      onEvent,
      secrets,
      ...starting?.context,
    });
  stopHearing?.();
  mark("run-end");
  if (ready === undefined) onEvent?.({ type: "end", report });
  if (o.output === "json") io.stdout(json!.renderJsonReport(report, redact));
  if (o.reportFile !== undefined) {
    try {
      const { writeReportFile } = await import("../output/report_file.ts");
      await writeReportFile(o.reportFile, json!.renderJsonReport(report, redact));
    } catch (e) {
      // The verdict stands (docs/contract.md §3); the failure is said once.
      io.stderr(line(`waitcmd: --report ${o.reportFile}: ${describeError(e)}`) + "\n");
    }
  }
  if (io.env.GITHUB_STEP_SUMMARY) {
    const ci = await import("../output/ci.ts");
    try {
      await ci.writeStepSummary(io.env, report, redact);
    } catch (e) {
      io.stderr(
        line(`waitcmd: GITHUB_STEP_SUMMARY ${io.env.GITHUB_STEP_SUMMARY}: ${describeError(e)}`) +
          "\n",
      );
    }
  }
  if (report.status !== "satisfied" || !plan.then) return { report };
  const stopStarted = starting?.stopAfterThen;
  const named = new Map(plan.conditions.map((c) => [c.index, c.captures]));
  return {
    report,
    handover: {
      command: plan.then,
      env: thenEnvironment(report, named, o.reportFile),
      refused: thenRefusal(report, named),
    },
    stopStarted,
  };
}

/**
 * `--start-log FILE` must be a file waitcmd can append to, found before anything starts: its
 * directory exists, and it is no directory itself (docs/contract.md §4).
 */
async function checkStartLog(path: string): Promise<void> {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "." : path.slice(0, slash) || "/";
  const statOf = (p: string) => Deno.stat(p).catch(() => undefined);
  const [file, parent] = await Promise.all([statOf(path), statOf(dir)]);
  if (file?.isDirectory) {
    throw new UsageError("--start-log", `cannot write ${path}: is a directory`);
  }
  if (!parent?.isDirectory) {
    throw new UsageError("--start-log", `cannot write ${path}: directory ${dir} does not exist`);
  }
}

/** What `--start` adds to a run: the runner's hooks, and the stop after `then`. */
interface Starting {
  readonly context: Pick<RunContext, "failure" | "finishing">;
  readonly stopAfterThen: () => Promise<void>;
}

/**
 * Starts the `--start` commands once every probe has taken its baseline (docs/contract.md §4):
 * their lines go to stderr as `[start N] ` lines in text mode without `--start-log`; one that
 * exits before the run is decided ends it as fatal. At the end of the run they are stopped,
 * handed to `then`, or left running on their own (and said where their output goes).
 */
async function startCommands(
  ready: ReadyPlan,
  io: SessionIo,
  /** A line with text from outside: the run's secrets masked by value, then as every line. */
  line: (text: string) => string,
  print: (line: string) => void,
): Promise<Starting> {
  const o = ready.options;
  const failure = new AbortController();
  await Promise.all(ready.conditions.map((c) => c.probe.baseline?.(io.signal)));
  const { StartedSet } = await import("../engine/started.ts");
  const text = o.output === "text";
  const shown = text && o.startLog === undefined;
  let set: StartedSet | undefined;
  if (!io.signal.aborted) {
    try {
      set = await StartedSet.start(o.start, {
        logFile: o.startLog,
        tempDir: io.env.TMPDIR || "/tmp",
        env: io.env,
        onLine: shown ? (n, l) => print(line(`[start ${n}] ${l}`)) : undefined,
        onExit: (s) => {
          if (s.status !== "exited") return;
          failure.abort(
            `start ${s.index} (${s.command}) exited with code ${s.exitCode} before the conditions held`,
          );
        },
      });
    } catch (e) {
      failure.abort(`start: ${describeError(e)}`);
    }
  }
  const finishing = async (status: RunStatus): Promise<Pick<Report, "started">> => {
    if (set === undefined) return {};
    if (status !== "satisfied") await set.stop(o.stopGraceMs);
    const started = set.reports();
    if (status === "fatal" && text && !shown) {
      // The output was in --start-log only: the last lines of the one that exited are shown.
      for (const s of started.filter((s) => s.status === "exited")) {
        for (const l of s.tail) print(line(`[start ${s.index}] ${l}`));
      }
    }
    if (status === "satisfied" && !ready.then) {
      set.detach();
      if (text && !o.quiet) {
        for (const s of started) {
          print(line(
            `waitcmd: start ${s.index} (${s.command}) keeps running (pid ${s.pid}); its output goes to ${s.log}`,
          ));
        }
      }
    }
    return { started };
  };
  return {
    context: { failure: failure.signal, finishing },
    stopAfterThen: async () => await set?.stop(o.stopGraceMs),
  };
}

/** The end of a session a signal cancelled before its wait (or its --explain) began. */
function cancelledBefore(io: SessionIo): SessionEnd {
  const signal = String(io.signal.reason);
  io.stderr(`waitcmd: cancelled by ${signal} before the wait started\n`);
  return { code: signalExitCode(signal) };
}

/**
 * Makes every probe (a kind's library is imported here, before the run's clock starts:
 * docs/contract.md §2); undefined when a signal came first. Nothing is downloaded here
 * (docs/development.md), so a slow import is no event worth a line.
 */
async function loadProbes(
  plan: Plan,
  io: SessionIo,
  secrets: SecretRegistry,
): Promise<ReadyPlan | undefined> {
  if (io.signal.aborted) return undefined;
  const preparing = preparePlan(plan, { clock: io.clock, env: io.env, secrets });
  const cancelled = new Promise<undefined>((resolve) => {
    io.signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
  preparing.catch(() => {}); // a failure after a signal is of no interest
  const ready = await Promise.race([preparing, cancelled]);
  if (ready === undefined) {
    // The probes made so far may hold something: closed in the background.
    preparing.then((p) => p.conditions.forEach((c) => c.probe.close?.()), () => {});
  }
  return ready;
}

/** The report of a run cancelled while its probes were being made: nothing was attempted. */
function cancelledBeforeStart(plan: Plan, reason: unknown): Report {
  return {
    status: "cancelled",
    elapsedMs: 0,
    mode: plan.options.mode,
    timeoutMs: plan.options.timeoutMs,
    decidedBy: undefined,
    signal: typeof reason === "string" ? reason : undefined,
    conditions: plan.conditions.map((c) => ({
      index: c.index,
      name: c.name,
      kind: c.kind.name,
      target: c.target,
      guard: c.guard,
      satisfied: false,
      attempts: 0,
      detail: "",
      lastError: "",
      fatal: false,
      exhausted: false,
      stopped: false,
      elapsedMs: null,
      captures: {},
      group: c.group,
      groupName: undefined,
    })),
  };
}

/**
 * `-- then echo hi -- file x` runs `echo hi -- file x`: a kind after a `--` in `then`'s words
 * is most likely a condition written after it (docs/contract.md §1). Said once, for the first.
 * `kindWords`: every kind's name and aliases (the plan knows only its own kinds).
 */
export function thenWarnings(plan: Plan, kindWords: ReadonlySet<string>): string[] {
  const words = plan.then ?? [];
  const kinds = new Set([
    "guard",
    "not",
    ...plan.conditions.flatMap((c) => [c.kind.name, c.kindWord]),
  ]);
  const at = words.findIndex((w, i) =>
    w === "--" && i + 1 < words.length && (kinds.has(words[i + 1]!) || kindWords.has(words[i + 1]!))
  );
  if (at < 0) return [];
  const shown = maskWords(words.slice(0, at + 2)).display.join(" ") +
    (words.length > at + 2 ? " …" : "");
  return [
    `waitcmd: warning: then's command gets "-- ${words[at + 1]}" (${shown}): conditions go ` +
    `before "-- then"; every word after it is the command's`,
  ];
}
