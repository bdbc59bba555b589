/**
 * The waitcmd CLI. This is the only module that reads `Deno.args` and the
 * environment, installs signal handlers and exits; everything it calls is
 * testable without a process.
 *
 * @module
 */

import denoJson from "./deno.json" with { type: "json" };
import { loadRegistry } from "./conditions/mod.ts";
import { cliClock, type Clock } from "./engine/clock.ts";
import { describeError, errorText, UsageError } from "./engine/errors.ts";
import { parseArgv } from "./engine/grammar.ts";
import type { Plan } from "./engine/plan.ts";
import type { Registry } from "./engine/registry.ts";
import { type ExpandIo, expandPlan, preparePlan, validatePlan } from "./engine/prepare.ts";
import { isHarmlessStray } from "./engine/strays.ts";
import { type Report, run, type RunEvent } from "./engine/runner.ts";
import type { DoctorRow } from "./output/doctor.ts";
import { makeRedactor } from "./output/redact.ts";

/** The program's connection to the outside world. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly env: Readonly<Record<string, string>>;
  readonly stderrIsTerminal: boolean;
  columns(): number;
  readonly clock: Clock;
  /** Aborted with "SIGINT", "SIGTERM" or "SIGHUP" to cancel the run. */
  readonly signal: AbortSignal;
  /** The text of a file; `-` is standard input. */
  readText(path: string): Promise<string>;
}

/** `waitcmd 0.1.0 (x86_64-unknown-linux-gnu, deno 2.9.6)`. */
export function versionLine(): string {
  return `waitcmd ${denoJson.version} (${Deno.build.target}, deno ${Deno.version.deno})`;
}

/** A word that may name a recipe file (`--config FILE`, `-f=FILE`). */
const CONFIG_FLAG = /^(?:--config|-f)(?:=|$)/;

/** Exit code of a finished run (DECISIONS §4); `timeoutCode`: `--timeout-exit-code`. */
export function exitCode(report: Report, timeoutCode = 1): number {
  switch (report.status) {
    case "satisfied":
      return 0;
    case "timeout":
    case "exhausted":
      return timeoutCode;
    case "fatal":
      return 3;
    case "cancelled":
      return 128 + (SIGNAL_NUMBERS[report.signal as Deno.Signal] ?? 2);
  }
}

/** Runs the CLI; returns what the process should exit with, plus a `then` command to hand over to. */
export async function main(
  argv: readonly string[],
  io: Io,
): Promise<{ code: number; then?: readonly string[] }> {
  let command;
  let locate = (e: UsageError) => e;
  let full: Promise<Registry> | undefined;
  const everyKind = () => (full ??= loadRegistry());
  const usage = async (e: UsageError) => {
    // The parser may stop before it knows which words are secrets: find them in the raw argv.
    const { argvSecrets } = await import("./engine/secrets.ts");
    const secrets = argvSecrets(argv, secretFlags(await everyKind()));
    io.stderr(makeRedactor(secrets)(locate(e).format()) + "\n");
    return { code: 2 };
  };
  let registry: Registry;
  try {
    let words: readonly string[] = argv;
    if (argv[0] === "doctor") return await doctor(argv.slice(1), io, await everyKind());
    // Recipes (and their parser) load only for a command line that may name one.
    const recipe = argv.some((a) => CONFIG_FLAG.test(a))
      ? await import("./engine/recipe.ts")
      : undefined;
    const { file, rest } = recipe ? recipe.takeConfig(argv) : { file: undefined, rest: argv };
    if (file !== undefined) {
      let text: string;
      try {
        text = await io.readText(file);
      } catch (e) {
        const why = e instanceof Deno.errors.NotFound
          ? "no such file or directory"
          : describeError(e).replace(/: \w+ '.*'$/, "");
        throw new UsageError("--config", `cannot read ${file}: ${why}`);
      }
      registry = await everyKind();
      const expanded = await recipe!.expandRecipe(text, file, rest, registry);
      words = expanded.argv;
      locate = expanded.locate;
    } else {
      // The declarations of the kinds the command line names, and no others: a run of one
      // kind does not load thirty (docs/performance.md).
      registry = await loadRegistry(words);
    }
    try {
      command = parseArgv(words, registry, io.env);
    } catch (e) {
      // A usage error's hints (did you mean, a kind's flag in the wrong place) know every kind.
      if (!(e instanceof UsageError)) throw e;
      registry = await everyKind();
      command = parseArgv(words, registry, io.env);
    }
    if (command.type === "help" || command.type === "completions") registry = await everyKind();
    if (command.type === "run") {
      await validatePlan(command.plan);
      command = { ...command, plan: await expandPlan(command.plan, expandIo(io)) };
    }
  } catch (e) {
    if (e instanceof UsageError) return await usage(e);
    throw e;
  }
  switch (command.type) {
    case "help": {
      const kind = command.topic ? registry.lookup(command.topic) : undefined;
      // Help, completions, explain, doctor and the live view load when used (start-up cost).
      const { kindHelp, mainHelp } = await import("./output/help.ts");
      io.stdout(kind ? kindHelp(kind) : mainHelp(registry));
      return { code: 0 };
    }
    case "version":
      io.stdout(versionLine() + "\n");
      return { code: 0 };
    case "completions":
      io.stdout(
        (await import("./output/completions.ts")).completionScript(command.shell, registry),
      );
      return { code: 0 };
    case "run":
      return await runPlan(command.plan, io);
  }
}

/** What kinds that expand (`orch -f`) read their files with. */
function expandIo(io: Io): ExpandIo {
  return {
    readText: (path) => io.readText(path),
    readDir: async (path) => {
      const entries = [];
      for await (const e of Deno.readDir(path)) {
        entries.push({ name: e.name, isFile: e.isFile, isDirectory: e.isDirectory });
      }
      return entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    },
    isDirectory: async (path) => {
      try {
        return (await Deno.stat(path)).isDirectory;
      } catch {
        return false;
      }
    },
  };
}

/** Names of every flag declared secret, for redacting a raw command line. */
function secretFlags(registry: Registry): ReadonlySet<string> {
  return new Set(
    registry.kinds.flatMap((k) => k.flags.filter((f) => f.secret).map((f) => f.name)),
  );
}

async function runPlan(plan: Plan, io: Io): Promise<{ code: number; then?: readonly string[] }> {
  const redact = makeRedactor(plan.secrets);
  const o = plan.options;
  try {
    if (plan.then) checkThen(plan.then[0]!, io.env);
    if (o.reportFile !== undefined) await checkReportFile(o.reportFile);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(redact(e.format()) + "\n");
      return { code: 2 };
    }
    throw e;
  }
  if (o.explain) {
    const { explainObject, explainText } = await import("./output/explain.ts");
    io.stdout(
      o.output === "text"
        ? explainText(plan, redact)
        : JSON.stringify(explainObject(plan, redact), null, 2) + "\n",
    );
    return { code: 0 };
  }
  // Probe modules (and their npm libraries) load before the run's clock starts; a first use
  // that must fetch them says so instead of eating into --timeout (docs/contract.md §2).
  // (AbortSignal.timeout, not setTimeout: the first setTimeout costs start-up time; see clock.ts.)
  let loaded = false;
  if (o.output === "text" && !o.quiet) {
    AbortSignal.timeout(1000).addEventListener("abort", () => {
      if (!loaded) io.stderr("waitcmd: loading the kinds' libraries (first use)...\n");
    });
  }
  // Only the renderers this run writes with (start-up cost, docs/performance.md).
  const [ready, json, text] = await Promise.all([
    preparePlan(plan, { clock: io.clock, env: io.env }),
    o.output !== "text" || o.reportFile !== undefined ? import("./output/json.ts") : undefined,
    o.output === "text" ? import("./output/text.ts") : undefined,
  ]);
  loaded = true;
  // JSON output listens to no event: the runner then makes none (docs/performance.md).
  let onEvent: ((e: RunEvent) => void) | undefined;
  if (o.output === "json") {
    onEvent = undefined;
  } else if (o.output === "jsonl") {
    onEvent = (e) => {
      const line = json!.renderJsonlEvent(e, redact);
      if (line !== undefined) io.stdout(line);
    };
  } else {
    const color = io.stderrIsTerminal && !o.noColor &&
      !("NO_COLOR" in io.env && io.env.NO_COLOR !== "");
    const style = color ? text!.ansiStyle : text!.plainStyle;
    if (io.stderrIsTerminal && !o.quiet) {
      const { LiveRenderer } = await import("./output/live.ts");
      const live = new LiveRenderer(io.stderr, redact, style, io.columns);
      onEvent = (e) => live.onEvent(e);
    } else {
      const lines = new text!.LineRenderer((l) => io.stderr(l + "\n"), redact, {
        quiet: o.quiet,
        style,
      });
      onEvent = (e) => lines.onEvent(e);
    }
  }
  const report = await run(ready, { clock: io.clock, signal: io.signal, onEvent });
  if (o.output === "json") io.stdout(json!.renderJsonReport(report, redact));
  if (o.reportFile !== undefined) {
    try {
      await writeReportFile(o.reportFile, json!.renderJsonReport(report, redact));
    } catch (e) {
      // The verdict stands (docs/contract.md §3); the failure is said once.
      io.stderr(`waitcmd: --report ${o.reportFile}: ${describeError(e)}\n`);
    }
  }
  const code = exitCode(report, o.timeoutExitCode);
  if (code === 0 && plan.then) return { code, then: plan.then };
  return { code };
}

/**
 * `waitcmd doctor [-o text|json] [--require KIND]...`: every kind's verdict;
 * exit 1 when a required kind cannot work here, 2 on a usage error.
 */
async function doctor(
  args: readonly string[],
  io: Io,
  registry: Registry,
): Promise<{ code: number }> {
  let output = "text";
  const required: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const m = /^(--output|-o|--require)(?:=(.*))?$/s.exec(args[i]!);
    const value = m ? (m[2] ?? args[++i]) : undefined;
    if (!m || value === undefined) {
      io.stderr(
        new UsageError(
          "doctor",
          m ? `${m[1]}: missing value` : `unexpected argument ${JSON.stringify(args[i])}`,
        ).format() + "\n",
      );
      return { code: 2 };
    }
    if (m[1] === "--require") {
      const kind = registry.lookup(value);
      if (!kind) {
        io.stderr(
          new UsageError("doctor: --require", `unknown kind ${JSON.stringify(value)}`).format() +
            "\n",
        );
        return { code: 2 };
      }
      required.push(kind.name);
    } else if (value === "text" || value === "json") {
      output = value;
    } else {
      io.stderr(
        new UsageError("doctor: --output", `expected text or json, got ${JSON.stringify(value)}`)
          .format() + "\n",
      );
      return { code: 2 };
    }
  }
  const rows: DoctorRow[] = await Promise.all(
    registry.kinds.map(async (k) => ({
      kind: k.name,
      reason: k.doctor ? await k.doctor(io.env).catch((e) => describeError(e)) : undefined,
    })),
  );
  const { doctorJson, doctorText } = await import("./output/doctor.ts");
  io.stdout(output === "json" ? doctorJson(rows) : doctorText(rows));
  const failing = rows.filter((r) => required.includes(r.kind) && r.reason !== undefined);
  return { code: failing.length > 0 ? 1 : 0 };
}

/** The directory a file path lives in. */
function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/**
 * `--report FILE` must be writable before the wait starts: its directory
 * exists and takes a new file (docs/contract.md §7). A usage error otherwise.
 */
async function checkReportFile(path: string): Promise<void> {
  const dir = dirOf(path);
  const probe = `${dir}/.waitcmd-report-${Deno.pid}.tmp`;
  try {
    const info = await Deno.stat(path).catch(() => undefined);
    if (info?.isDirectory) throw new Error("is a directory");
    await Deno.writeTextFile(probe, "", { createNew: true });
    await Deno.remove(probe);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? `directory ${dir} does not exist`
      : describeError(e).replace(/: \w+ '.*'$/, "");
    throw new UsageError("--report", `cannot write ${path}: ${why}`);
  }
}

/** Writes the report atomically: a temporary file beside it, then a rename. */
async function writeReportFile(path: string, text: string): Promise<void> {
  const tmp = `${dirOf(path)}/.waitcmd-report-${Deno.pid}.tmp`;
  try {
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/**
 * A `then` command that cannot run is a usage error found before waiting
 * (docs/contract.md §1): a path that does not exist or is not an executable
 * file, or a bare name that is on no PATH directory.
 */
export function checkThen(cmd: string, env: Readonly<Record<string, string>>): void {
  const executable = (path: string): boolean => {
    try {
      const info = Deno.statSync(path);
      return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  if (cmd.includes("/")) {
    let exists = true;
    try {
      Deno.statSync(cmd);
    } catch {
      exists = false;
    }
    if (!exists) throw new UsageError("then", `command not found: ${cmd}`);
    if (!executable(cmd)) throw new UsageError("then", `not an executable file: ${cmd}`);
    return;
  }
  const dirs = (env.PATH ?? "").split(":").map((d) => d || ".");
  if (!dirs.some((d) => executable(`${d}/${cmd}`))) {
    throw new UsageError("then", `command not found on PATH: ${cmd}`);
  }
}

/**
 * What to print for an error that escaped every await, or undefined for one a
 * kind declared harmless. Deno would exit 1 on it, which reads as "timed
 * out"; the CLI prints this line and exits 3 instead.
 */
export function strayLine(reason: unknown): string | undefined {
  if (isHarmlessStray(reason)) return undefined;
  return `waitcmd: internal error: ${errorText(reason)}\n`;
}

function writeAll(file: { writeSync(p: Uint8Array): number }, text: string): void {
  let data = new TextEncoder().encode(text);
  while (data.length > 0) data = data.subarray(file.writeSync(data));
}

/** Streams whose writes failed (a closed pipe, a full disk): they get nothing more. */
const failedStreams = new Set<unknown>();

/**
 * Writes `text` whole, or not at all once the stream has failed. A failed
 * write of output never changes the verdict's exit code (docs/contract.md
 * §3); it is reported once, on stderr when stdout failed.
 */
function safeWrite(file: { writeSync(p: Uint8Array): number }, text: string): void {
  if (failedStreams.has(file)) return;
  try {
    writeAll(file, text);
  } catch (e) {
    failedStreams.add(file);
    if (file !== Deno.stderr) {
      const which = file === Deno.stdout ? "stdout" : "output";
      safeWrite(Deno.stderr, `waitcmd: writing to ${which} failed: ${describeError(e)}\n`);
    }
  }
}

const FORWARDED: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"];
/** Signals after which the child's whole group must be gone within THEN_GRACE_MS. */
const ENDING: ReadonlySet<Deno.Signal> = new Set(["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]);
/** How long a `then` child may take to stop after an ending signal before SIGKILL (as docker stop). */
const THEN_GRACE_MS = 10_000;

/**
 * Runs the `then` command with inherited stdio, forwarding signals to its
 * whole process group, and returns its exit code (docs/contract.md §4).
 * Without a terminal the child leads a process group of its own, so an
 * ending signal reaches everything it started, and what is still alive
 * THEN_GRACE_MS later is killed. On a terminal the child stays in the
 * terminal's foreground group (it may read the terminal); the terminal's
 * Ctrl-C reaches the whole group itself.
 */
async function handOver(cmd: readonly string[]): Promise<number> {
  const ownGroup = !Deno.stdin.isTerminal();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd[0]!, {
      args: cmd.slice(1),
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
      detached: ownGroup,
    }).spawn();
  } catch (e) {
    safeWrite(Deno.stderr, `waitcmd: then: cannot start ${cmd[0]}: ${describeError(e)}\n`);
    return 3;
  }
  const send = (sig: Deno.Signal) => {
    try {
      if (ownGroup) Deno.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // The child (or its group) is already gone; its status tells the rest.
    }
  };
  let killer: ReturnType<typeof setTimeout> | undefined;
  const forwards = FORWARDED.map((sig) => {
    const h = () => {
      send(sig);
      if (ENDING.has(sig) && killer === undefined) {
        killer = setTimeout(() => send("SIGKILL"), THEN_GRACE_MS);
      }
    };
    try {
      Deno.addSignalListener(sig, h);
    } catch {
      return undefined; // Not supported on this platform.
    }
    return [sig, h] as const;
  });
  const status = await child.status;
  // After an ending signal, nothing the command started outlives waitcmd.
  if (killer !== undefined) {
    clearTimeout(killer);
    if (ownGroup) send("SIGKILL");
  }
  for (const f of forwards) if (f) Deno.removeSignalListener(f[0], f[1]);
  if (status.signal) return 128 + (SIGNAL_NUMBERS[status.signal] ?? 1);
  return status.code;
}

const SIGNAL_NUMBERS: Partial<Record<Deno.Signal, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGUSR2: 12,
  SIGTERM: 15,
};

if (import.meta.main) {
  const onStray = (reason: unknown, prevent: () => void) => {
    prevent();
    const line = strayLine(reason);
    if (line === undefined) return;
    safeWrite(Deno.stderr, line);
    Deno.exit(3);
  };
  globalThis.addEventListener(
    "unhandledrejection",
    (e) => onStray(e.reason, () => e.preventDefault()),
  );
  globalThis.addEventListener("error", (e) => onStray(e.error, () => e.preventDefault()));
  const cancel = new AbortController();
  // SIGHUP (a closed terminal) cancels like SIGTERM, exit 129; SIGPIPE is ignored by the
  // runtime, so a closed pipe is a failed write (safeWrite), never a silent death.
  const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((sig) => {
    const h = () => cancel.abort(sig);
    Deno.addSignalListener(sig, h);
    return [sig, h] as const;
  });
  let result: { code: number; then?: readonly string[] };
  try {
    result = await main(Deno.args, {
      stdout: (t) => safeWrite(Deno.stdout, t),
      stderr: (t) => safeWrite(Deno.stderr, t),
      env: Deno.env.toObject(),
      stderrIsTerminal: Deno.stderr.isTerminal(),
      columns: () => {
        try {
          return Deno.consoleSize().columns;
        } catch {
          return 80;
        }
      },
      clock: cliClock,
      signal: cancel.signal,
      readText: async (path) =>
        path === "-"
          ? await new Response(Deno.stdin.readable).text()
          : await Deno.readTextFile(path),
    });
  } catch (e) {
    // A bug of ours: one line, never a stack trace (WAITCMD_DEBUG shows it).
    safeWrite(Deno.stderr, `waitcmd: internal error: ${errorText(e)}\n`);
    if (Deno.env.get("WAITCMD_DEBUG") && e instanceof Error) safeWrite(Deno.stderr, `${e.stack}\n`);
    result = { code: 3 };
  }
  for (const [sig, h] of handlers) Deno.removeSignalListener(sig, h);
  const code = result.then ? await handOver(result.then) : result.code;
  Deno.exit(code);
}
