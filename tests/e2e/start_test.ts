/**
 * `--start CMD` through the CLI (docs/contract.md §4, §7): real servers started by waitcmd, its
 * fail-fast on a command that exits, `then`, the stop on timeout and on each signal (also of a
 * command that ignores SIGTERM and one that forks), the detached case, the output's `[start N] `
 * lines and `--start-log`, recipes and usage errors. What is left behind is checked in /proc
 * (each command carries a unique word), never through waitcmd's own bookkeeping.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import {
  assertUsageErrors,
  type CliResult,
  cliTest,
  runCli,
  startCli,
  writeRecipe,
} from "./_cli.ts";
import { freePort, inTempDir } from "../services/_util.ts";

const withDir = inTempDir("waitcmd-start-");

/** A started command in the report (docs/report.schema.json). */
interface StartedEntry {
  command: string;
  pid: number;
  status: string;
  exit_code?: number;
  tail: string[];
  log: string | null;
}

/** The report's `started` and `error` (the shared shape of tests/e2e/_cli.ts lacks them). */
function startedOf(r: CliResult): { started: StartedEntry[]; error?: string } {
  const report = r.report as unknown as { started?: StartedEntry[]; error?: string } | undefined;
  if (report?.started === undefined) {
    throw new Error(`no started entries\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return { started: report.started, error: report.error };
}

/**
 * A word no other process has: the commands of a test carry it, so /proc finds them. A number
 * (`7777.` and 12 random digits), so that a forked `sleep` can carry it as its duration.
 */
function uniqueTag(): string {
  const digits = [...crypto.getRandomValues(new Uint8Array(12))].map((b) => b % 10).join("");
  return `7777.${digits}`;
}

/** The pids whose command line holds `tag` (zombies have none: they hold nothing either). */
function processesWith(tag: string): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      if (Deno.readTextFileSync(`/proc/${e.name}/cmdline`).includes(tag)) out.push(Number(e.name));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** Kills what a test left (SIGKILL), so that a failed assertion leaves nothing running. */
function killTagged(tag: string): void {
  for (const pid of processesWith(tag)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
}

/** Asserts nothing with `tag` is alive, a short while after waitcmd exited (reaping is async). */
async function assertNothingLeft(tag: string, r?: CliResult): Promise<void> {
  let left: number[] = [];
  for (let i = 0; i < 20; i++) {
    left = processesWith(tag);
    if (left.length === 0) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  killTagged(tag);
  throw new Error(
    `left behind: ${left.join(", ")}${r ? `\nstdout: ${r.stdout}\nstderr: ${r.stderr}` : ""}`,
  );
}

/** Runs `fn` with a unique tag, killing whatever still carries it afterwards. */
async function tagged(fn: (tag: string) => Promise<void>): Promise<void> {
  const tag = uniqueTag();
  try {
    await fn(tag);
  } finally {
    killTagged(tag);
  }
}

/**
 * A Python HTTP server that waits `delay` seconds, says `listening on PORT` (unbuffered), serves
 * on 127.0.0.1:`port` and logs each request on stderr; `tag` is its last argument.
 */
function serverCommand(port: number, tag: string, delay = 0.5): string {
  const code = "import sys, time, http.server as h; time.sleep(float(sys.argv[2])); " +
    "s = h.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), h.SimpleHTTPRequestHandler); " +
    "print('listening on', sys.argv[1], flush=True); s.serve_forever()";
  return `python3 -u -c "${code}" ${port} ${delay} ${tag}`;
}

/** A shell that forks a long sleep carrying `tag` (as its duration) and then runs `script`. */
function forkingCommand(tag: string, script: string): string {
  return `sh -c 'sleep ${tag} & ${script}' ${tag}`;
}

/** Whether 127.0.0.1:`port` answers HTTP with 200. */
async function answers(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

cliTest(
  "a server started late: satisfied, then runs with its code, the server stopped",
  () =>
    tagged(async (tag) => {
      const port = freePort();
      const r = await runCli([
        "-t",
        "30s",
        "-i",
        "100ms",
        "--start",
        serverCommand(port, tag),
        "http",
        `http://127.0.0.1:${port}/`,
        "--",
        "then",
        "sh",
        "-c",
        `curl -fsS -o /dev/null http://127.0.0.1:${port}/ && exit 7`,
      ]);
      assertEquals(r.code, 7, r.stderr);
      assertStringIncludes(r.stderr, `[start 1] listening on ${port}\n`);
      assertMatch(r.stderr, /\[start 1\] 127\.0\.0\.1 - - .*"GET \/ HTTP\/1\.1" 200/);
      assertStringIncludes(r.stderr, "waitcmd: satisfied in");
      // Lines are whole: every stderr line is waitcmd's own or a prefixed one.
      for (const l of r.stderr.trimEnd().split("\n")) {
        assert(/^(waitcmd: |\[start 1\] |\[\.\.\] |\[ok\] )/.test(l), `stray line: ${l}`);
      }
      await assertNothingLeft(tag, r);
      assert(!(await answers(port)), "the server still answers after then ended");
    }),
);

cliTest(
  "a command that exits during start-up: fatal at once, its code and output shown",
  () =>
    tagged(async (tag) => {
      const port = freePort();
      const crash = `sh -c 'echo starting up; echo bad config >&2; sleep 0.3; exit 4' ${tag}`;
      const text = await runCli(["-t", "30s", "--start", crash, "tcp", `127.0.0.1:${port}`]);
      assertEquals(text.code, 3, text.stderr);
      assertStringIncludes(text.stderr, "[start 1] starting up\n[start 1] bad config\n");
      assertStringIncludes(
        text.stderr,
        `waitcmd: fatal: start 1 (${crash}) exited with code 4 before the conditions held\n`,
      );

      const json = await runCli([
        "-o",
        "json",
        "-t",
        "30s",
        "--start",
        crash,
        "tcp",
        `127.0.0.1:${port}`,
      ]);
      assertEquals(json.code, 3);
      assertEquals(json.stderr, "", "JSON mode keeps stderr empty");
      assertEquals(json.report?.status, "fatal");
      const { started, error } = startedOf(json);
      assertEquals(error, `start 1 (${crash}) exited with code 4 before the conditions held`);
      assertEquals(started.length, 1);
      assertEquals(started[0]!.status, "exited");
      assertEquals(started[0]!.exit_code, 4);
      assertEquals(started[0]!.tail, ["starting up", "bad config"]);
      assertEquals(started[0]!.command, crash);
      // Within a second of the crash (0.3 s after the start).
      assert(json.report!.elapsed_seconds < 1.3, `took ${json.report!.elapsed_seconds}s`);
      await assertNothingLeft(tag, json);
    }),
);

cliTest(
  "timeout with a started server that forks: exit 1, the whole group stopped",
  () =>
    withDir((dir) =>
      tagged(async (tag) => {
        const report = `${dir}/report.json`;
        const r = await runCli([
          "-t",
          "1s",
          "--report",
          report,
          "--start",
          forkingCommand(tag, `echo up; exec sleep ${tag}`),
          "tcp",
          `127.0.0.1:${freePort()}`,
        ]);
        assertEquals(r.code, 1, r.stderr);
        assertStringIncludes(r.stderr, "waitcmd: timed out after 1s");
        await assertNothingLeft(tag, r);
        const json = JSON.parse(await Deno.readTextFile(report));
        assertEquals(json.started[0].status, "stopped");
        assert(json.started[0].pid > 0);
      })
    ),
);

for (
  const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129], [
    "SIGQUIT",
    131,
  ]] as const
) {
  cliTest(
    `${signal} with started commands: exit ${code}, nothing left behind`,
    () =>
      tagged(async (tag) => {
        const port = freePort();
        const live = startCli([
          "-t",
          "60s",
          "--start",
          serverCommand(port, tag, 0),
          "--start",
          forkingCommand(tag, "echo forked; wait"),
          "tcp",
          `127.0.0.1:${freePort()}`,
        ]);
        await live.waitFor("stderr", /^\[start 1\] listening on/);
        await live.waitFor("stderr", /^\[start 2\] forked/);
        const sent = performance.now();
        live.child.kill(signal);
        const r = await live.done();
        assertEquals(r.code, code, r.stderr);
        assertStringIncludes(r.stderr, `waitcmd: cancelled by ${signal}`);
        assert(r.exitedAt - sent < 2000, `exited ${r.exitedAt - sent} ms after ${signal}`);
        await assertNothingLeft(tag, r);
      }),
  );
}

cliTest("a command that ignores SIGTERM is killed after --stop-grace", () =>
  tagged(async (tag) => {
    const stubborn = `sh -c 'trap "" TERM; echo stubborn; while :; do sleep 0.05; done' ${tag}`;
    const began = performance.now();
    const r = await runCli([
      "-o",
      "json",
      "-t",
      "1s",
      "--stop-grace",
      "1500ms",
      "--start",
      stubborn,
      "tcp",
      `127.0.0.1:${freePort()}`,
    ]);
    const took = performance.now() - began;
    assertEquals(r.code, 1, r.stderr);
    // The timeout (1 s), then the grace (1.5 s) before SIGKILL; not the default 5 s.
    assert(took >= 2400 && took < 5000, `took ${took} ms`);
    assertEquals(startedOf(r).started[0]!.status, "stopped");
    assertEquals(startedOf(r).started[0]!.tail, ["stubborn"]);
    await assertNothingLeft(tag, r);
  }));

cliTest(
  "without then: the server keeps running detached, its pid and log reported",
  () =>
    withDir((dir) =>
      tagged(async (tag) => {
        const port = freePort();
        const report = `${dir}/report.json`;
        const r = await runCli([
          "-t",
          "30s",
          "-i",
          "100ms",
          "--report",
          report,
          "--start",
          serverCommand(port, tag),
          "http",
          `http://127.0.0.1:${port}/`,
        ], { env: { TMPDIR: dir } });
        assertEquals(r.code, 0, r.stderr);
        const json = JSON.parse(await Deno.readTextFile(report));
        const s = json.started[0] as StartedEntry;
        assertEquals(s.status, "running");
        assertEquals(s.log, `${dir}/waitcmd-start-1.log`);
        assertStringIncludes(
          r.stderr,
          `waitcmd: start 1 (${serverCommand(port, tag)}) keeps running (pid ${s.pid}); ` +
            `its output goes to ${dir}/waitcmd-start-1.log\n`,
        );
        // Still answering after waitcmd exited, in a session of its own, writing to its log.
        assert(await answers(port), "the detached server does not answer");
        assertEquals(processesWith(tag), [s.pid]);
        const stat = Deno.readTextFileSync(`/proc/${s.pid}/stat`).split(") ")[1]!.split(" ");
        assertEquals([stat[2], stat[3]], [String(s.pid), String(s.pid)], "pgrp and sid");
        const log = await Deno.readTextFile(s.log!);
        assertStringIncludes(log, `listening on ${port}\n`);
        Deno.kill(-s.pid, "SIGTERM");
        await assertNothingLeft(tag);
      })
    ),
);

cliTest(
  "--start-log: the output goes to the file (appended), a log condition captures from it",
  () =>
    withDir(async (dir) => {
      // The server's --directory is this test's own: /proc finds it by it.
      try {
        await logCapture(dir);
      } finally {
        killTagged(dir);
      }
    }),
);

/** The --start-log case, in `dir`. */
async function logCapture(dir: string): Promise<void> {
  const log = `${dir}/srv.log`;
  await Deno.writeTextFile(log, "port 1 from an earlier run\n");
  const r = await runCli([
    "-t",
    "30s",
    "--start",
    // No -u: waitcmd sets PYTHONUNBUFFERED, so the line reaches the file at once.
    `python3 -m http.server 0 --bind 127.0.0.1 --directory ${dir}`,
    "--start-log",
    log,
    "log",
    log,
    "--matches",
    String.raw`port (?P<port>\d+)`,
    "--",
    "then",
    "sh",
    "-c",
    'curl -fsS -o /dev/null "http://127.0.0.1:$WAITCMD_CAPTURE_PORT/" && echo "got $WAITCMD_CAPTURE_PORT"',
  ]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(r.stdout, /^got \d+\n$/);
  assert(!r.stdout.includes("got 1\n"), "the line from before the start matched");
  assert(!r.stderr.includes("[start 1]"), "the output went to stderr too");
  const text = await Deno.readTextFile(log);
  assert(text.startsWith("port 1 from an earlier run\n"), "the log was not appended to");
  assertMatch(text, /Serving HTTP on 127\.0\.0\.1 port \d+/);
  await assertNothingLeft(dir, r);
}

cliTest("a recipe's start, start-log and stop-grace", () =>
  withDir((dir) =>
    tagged(async (tag) => {
      const port = freePort();
      const recipe = await writeRecipe(dir, [
        "timeout: 30s",
        "interval: 100ms",
        "start:",
        `  - ${JSON.stringify(serverCommand(port, tag))}`,
        `start-log: ${dir}/out.log`,
        "stop-grace: 2s",
        "conditions:",
        `  - { kind: http, target: "http://127.0.0.1:${port}/" }`,
        "then: [sh, -c, 'exit 0']",
      ]);
      const r = await runCli(["-f", recipe]);
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(await Deno.readTextFile(`${dir}/out.log`), `listening on ${port}`);
      await assertNothingLeft(tag, r);

      const explained = await runCli(["-f", recipe, "--explain", "-o", "json"]);
      const options = JSON.parse(explained.stdout).options;
      assertEquals(options.start, [serverCommand(port, tag)]);
      assertEquals(options.start_log, `${dir}/out.log`);
      assertEquals(options.stop_grace_seconds, 2);
    })
  ));

cliTest(
  "--explain names the commands with their secrets masked, and starts nothing",
  () =>
    tagged(async (tag) => {
      const r = await runCli([
        "--start",
        `curl -u bob:hunter2pw http://127.0.0.1:1/?token=abcd1234 ${tag}`,
        "--explain",
        "tcp",
        "127.0.0.1:1",
      ]);
      assertEquals(r.code, 0, r.stderr);
      assertMatch(r.stdout, /^start 1: curl -u /m);
      assert(!r.stdout.includes("hunter2pw") && !r.stdout.includes("abcd1234"), r.stdout);
      assertEquals(processesWith(tag), []);
    }),
);

cliTest(
  "a started command's secrets are masked in its output lines and in the report",
  () =>
    tagged(async (tag) => {
      const cmd = `sh -c 'echo using --password=s3cretvalue; exit 2' --password=s3cretvalue ${tag}`;
      const text = await runCli(["-t", "10s", "--start", cmd, "tcp", `127.0.0.1:${freePort()}`]);
      assertEquals(text.code, 3);
      assert(!text.stderr.includes("s3cretvalue"), text.stderr);
      assertStringIncludes(text.stderr, "[start 1] using --password=");
      const json = await runCli(["-o", "json", "--start", cmd, "tcp", `127.0.0.1:${freePort()}`]);
      assert(!json.stdout.includes("s3cretvalue"), json.stdout);
    }),
);

cliTest("--start usage errors: exit 2 before anything starts", () =>
  withDir(async (dir) => {
    const marker = `${dir}/started`;
    await assertUsageErrors([
      [["--start", "", "tcp", "127.0.0.1:1"], "--start (start 1): expected a command"],
      [["--start", "  ", "tcp", "127.0.0.1:1"], "--start (start 1): expected a command"],
      [
        ["--start", `touch ${marker}`, "--start", `echo 'oops`, "tcp", "127.0.0.1:1"],
        `--start (start 2): unclosed single quote: echo 'oops`,
      ],
      [["--start", `touch "${marker}`, "tcp", "127.0.0.1:1"], "unclosed double quote"],
      [["--stop-grace", "soon", "--start", "true", "tcp", "127.0.0.1:1"], "--stop-grace"],
      [
        ["--start-log", "", "--start", "true", "tcp", "127.0.0.1:1"],
        "--start-log: expected a file name",
      ],
      [["--start"], "--start: missing value CMD"],
      [
        [
          "--start",
          `touch ${marker}`,
          "--start-log",
          `${dir}/nowhere/out.log`,
          "tcp",
          "127.0.0.1:1",
        ],
        `--start-log: cannot write ${dir}/nowhere/out.log: directory ${dir}/nowhere does not exist`,
      ],
      [
        ["--start", `touch ${marker}`, "--start-log", dir, "tcp", "127.0.0.1:1"],
        `--start-log: cannot write ${dir}: is a directory`,
      ],
    ]);
    await assertUsageErrors([
      [["--start", "true", "tcp", "127.0.0.1:1"], "WAITCMD_STOP_GRACE"],
    ], { env: { WAITCMD_STOP_GRACE: "forever" } });
    const recipe = await writeRecipe(dir, [
      "start: ['']",
      "conditions: [{kind: tcp, target: '127.0.0.1:1'}]",
    ]);
    await assertUsageErrors([[["-f", recipe], "expected a command"]]);
    let exists = true;
    try {
      await Deno.stat(marker);
    } catch {
      exists = false;
    }
    assert(!exists, "a command started despite the usage error");
  }));

cliTest(
  "a signal while then runs: then gets it, the started commands are stopped after it",
  () =>
    tagged(async (tag) => {
      const port = freePort();
      const live = startCli([
        "-t",
        "30s",
        "-i",
        "100ms",
        "--start",
        serverCommand(port, tag, 0),
        "http",
        `http://127.0.0.1:${port}/`,
        "--",
        "then",
        "sh",
        "-c",
        `echo then started; sleep 30 ${tag}`,
      ]);
      await live.waitFor("stdout", /^then started$/);
      assert(await answers(port), "the server does not answer while then runs");
      live.child.kill("SIGTERM");
      const r = await live.done();
      assertEquals(r.code, 143, r.stderr);
      await assertNothingLeft(tag, r);
    }),
);

cliTest(
  "a command that is not found, and a crash whose output went to --start-log",
  () =>
    withDir(async (dir) => {
      const missing = await runCli([
        "-o",
        "json",
        "--start",
        "no-such-command-wc",
        "tcp",
        `127.0.0.1:${freePort()}`,
      ]);
      assertEquals(missing.code, 3);
      const s = startedOf(missing);
      assertEquals(
        s.error,
        "start 1 (no-such-command-wc) exited with code 127 before the conditions held",
      );
      assertStringIncludes(s.started[0]!.tail.join("\n"), "no-such-command-wc: not found");

      const log = `${dir}/crash.log`;
      const crash = "sh -c 'echo loading; echo port in use >&2; exit 1'";
      const r = await runCli([
        "--start",
        crash,
        "--start-log",
        log,
        "tcp",
        `127.0.0.1:${freePort()}`,
      ]);
      assertEquals(r.code, 3, r.stderr);
      // The lines were only in the file: the last ones are shown before the summary.
      assertStringIncludes(
        r.stderr,
        `[start 1] loading\n[start 1] port in use\nwaitcmd: fatal: start 1 (${crash}) exited with code 1 before the conditions held\n`,
      );
      assertEquals(await Deno.readTextFile(log), "loading\nport in use\n");
    }),
);
