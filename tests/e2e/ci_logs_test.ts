/**
 * `--progress changes` and CI logs through the CLI (docs/contract.md §6), against the bytes
 * GitHub Actions and GitLab CI parse: the group and its title, `::endgroup::` before the
 * summary, one `::error` annotation for a run that failed, the step summary's table in every
 * output mode, GitLab's collapsed section stamped with the wall clock, and `WAITCMD_CI=off`.
 * Targets are loopback ports nothing listens on, and a file the test creates.
 */

import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { freePort, inTempDir } from "../services/_util.ts";
import { runCli, runJson, timing, writeRecipe } from "./_cli.ts";

/** A run inside GitHub Actions (the suite turns CI logs off for every other test). */
const GITHUB = { GITHUB_ACTIONS: "true", WAITCMD_CI: "" };
const GITLAB = { GITLAB_CI: "true", WAITCMD_CI: "", NO_COLOR: "1" };

/** stderr with each `(1.2s)` of an attempt line as `(T)`: the only bytes that depend on timing. */
const untimed = (s: string) => s.replace(/ \(\d+\.\ds\)/g, " (T)");

/** One attempt before a deadline of 1s: the interval is longer than the run. */
const ONE_ATTEMPT = ["-t", "1s", "-i", "10s"];

const withDir = inTempDir("waitcmd-ci-");

/** The human lines of a run on a refused loopback `port` that times out after its first attempt. */
function refused(port: number, timeout: string, interval: string): string[] {
  return [
    `waitcmd: waiting for 1 condition (timeout ${timeout}, interval ${interval})`,
    `[..] tcp 127.0.0.1:${port} attempt 1 (T): connection refused`,
    `waitcmd: timed out after ${timeout}; not satisfied: tcp 127.0.0.1:${port}: connection refused`,
  ];
}

Deno.test("GitHub Actions: one group, the summary after it, one ::error line with the summary", async () => {
  const a = freePort();
  const b = freePort();
  const r = await runCli([...ONE_ATTEMPT, "tcp", `127.0.0.1:${a}`, "--", "tcp", `127.0.0.1:${b}`], {
    env: GITHUB,
  });
  assertEquals(r.code, 1);
  assertEquals(r.stdout, "");
  assertEquals(
    untimed(r.stderr),
    [
      "::group::waitcmd: waiting for 2 conditions (timeout 1s, interval 10s)",
      `[..] tcp 127.0.0.1:${a} attempt 1 (T): connection refused`,
      `[..] tcp 127.0.0.1:${b} attempt 1 (T): connection refused`,
      "::endgroup::",
      `waitcmd: timed out after 1s; not satisfied: tcp 127.0.0.1:${a}: connection refused`,
      `waitcmd: timed out after 1s; not satisfied: tcp 127.0.0.1:${b}: connection refused`,
      `::error title=waitcmd::timed out after 1s; not satisfied: tcp 127.0.0.1:${a}: connection refused%0A` +
      `timed out after 1s; not satisfied: tcp 127.0.0.1:${b}: connection refused`,
      "",
    ].join("\n"),
  );
});

Deno.test("GitHub Actions: a satisfied run has its group and no ::error; a % in the data is escaped", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/ready`;
    await Deno.writeTextFile(path, "up");
    const r = await runCli(["file", path, "--label", "100% ready"], { env: GITHUB });
    assertEquals(r.code, 0);
    assertEquals(
      untimed(r.stderr).replace(/in \d+\.\ds/, "in T"),
      [
        "::group::waitcmd: waiting for 1 condition (timeout 5m, interval 2s)",
        "[ok] 100% ready attempt 1 (T): exists (2 B)",
        "::endgroup::",
        "waitcmd: satisfied in T (1/1 conditions)",
        "",
      ].join("\n"),
    );
    const fatal = await runCli(["exec", "--label", "50% 'done'", "--", `${dir}/nothing-here`], {
      env: GITHUB,
    });
    assertEquals(fatal.code, 3);
    assertEquals(
      fatal.stderr.trimEnd().split("\n").at(-1),
      `::error title=waitcmd::fatal: 50%25 'done': command not found: ${dir}/nothing-here`,
    );
  });
});

Deno.test("GitHub Actions with --quiet: no group, the summary and the ::error line", async () => {
  const port = freePort();
  const r = await runCli(
    ["-q", ...ONE_ATTEMPT, "--max-attempts", "1", "tcp", `127.0.0.1:${port}`],
    {
      env: GITHUB,
    },
  );
  assertEquals(r.code, 1);
  assertEquals(
    r.stderr,
    [
      `waitcmd: gave up on tcp 127.0.0.1:${port} after 1 attempt: connection refused`,
      `::error title=waitcmd::gave up on tcp 127.0.0.1:${port} after 1 attempt: connection refused`,
      "",
    ].join("\n"),
  );
});

Deno.test("GitHub Actions: a cancelled run closes its group and adds no ::error", async () => {
  const port = freePort();
  const r = await runCli(["-t", "30s", "-i", "10s", "tcp", `127.0.0.1:${port}`], {
    env: GITHUB,
    started: async (child) => {
      await new Promise((ok) => setTimeout(ok, 1500));
      child.kill("SIGTERM");
    },
  });
  assertEquals(r.code, 143);
  const lines = r.stderr.trimEnd().split("\n");
  assertEquals(lines.at(-2), "::endgroup::");
  assertMatch(lines.at(-1)!, /^waitcmd: cancelled by SIGTERM after /);
});

Deno.test("GitHub step summary: a Markdown table appended in every output mode, secrets removed", async () => {
  await withDir(async (dir) => {
    const summary = `${dir}/summary.md`;
    await Deno.writeTextFile(summary, "before\n");
    const ready = `${dir}/ready`;
    await Deno.writeTextFile(ready, "up");
    const port = freePort();
    const args = [
      ...ONE_ATTEMPT,
      ...["file", ready],
      ...["--", "tcp", `127.0.0.1:${port}`, "--label", "db|primary"],
      ...["--", "http", `http://app:hunter22@127.0.0.1:${port}/`],
    ];
    const env = { ...GITHUB, GITHUB_STEP_SUMMARY: summary };
    const json = await runJson(args, { env });
    assertEquals([json.code, json.stderr], [1, ""]);
    const text = await runCli(args, { env });
    assertEquals(text.code, 1);
    const written = await Deno.readTextFile(summary);
    assert(!written.includes("hunter22"), written);
    const table = (s: string) =>
      s.replace(/\| (\d+\.\ds) \|/, "| T |").replace(/^\*\*waitcmd\*\*: .*$/m, "HEAD");
    const one = [
      "HEAD",
      "",
      "| condition | verdict | attempts | time | last error |",
      "| --- | --- | --- | --- | --- |",
      `| file ${ready} | satisfied | 1 | T |  |`,
      "| db\\|primary | not satisfied | 1 |  | connection refused |",
      `| http http://app:***@127.0.0.1:${port}/ | not satisfied | 1 |  | connection refused |`,
      "",
      "",
    ].join("\n");
    assertEquals(written.startsWith("before\n"), true);
    const blocks = written.slice("before\n".length).split(/(?=^\*\*waitcmd\*\*)/m);
    assertEquals(blocks.map(table), [one, one]);
    assertEquals(
      blocks[0]!.split("\n")[0],
      `**waitcmd**: timed out after 1s; not satisfied: db\\|primary: connection refused<br>` +
        `timed out after 1s; not satisfied: http http://app:***@127.0.0.1:${port}/: connection refused`,
    );
    // Outside GitHub Actions, or with WAITCMD_CI=off, nothing is appended.
    await runCli(args, { env: { GITHUB_STEP_SUMMARY: summary, WAITCMD_CI: "" } });
    await runCli(args, { env: { ...GITHUB, GITHUB_STEP_SUMMARY: summary, WAITCMD_CI: "off" } });
    assertEquals(await Deno.readTextFile(summary), written);
  });
});

Deno.test("GitHub step summary: a row that held shows no last error, one that did not keeps it", async () => {
  await withDir(async (dir) => {
    const summary = `${dir}/summary.md`;
    const marker = `${dir}/second`;
    const port = freePort();
    // Fails its first attempt (exit 1), holds from its second on.
    const script = `test -f ${marker} || { touch ${marker}; exit 1; }`;
    const args = [
      ...timing("1500ms", "100ms"),
      ...["exec", "--label", "warms up", "--", "sh", "-c", script],
      ...["--", "tcp", `127.0.0.1:${port}`],
    ];
    const r = await runCli(args, { env: { ...GITHUB, GITHUB_STEP_SUMMARY: summary } });
    assertEquals(r.code, 1, r.stderr);
    const rows = (await Deno.readTextFile(summary)).split("\n").filter((l) => l.startsWith("| "));
    assertMatch(
      rows.find((l) => l.startsWith("| warms up |"))!,
      /^\| warms up \| satisfied \| 2 \| \d+\.\ds \| {2}\|$/,
    );
    assertMatch(
      rows.find((l) => l.startsWith("| tcp "))!,
      /\| not satisfied \| \d+ \| {2}\| connection refused \|$/,
    );
  });
});

Deno.test("GitLab CI: a collapsed section with GitLab's markers, even with NO_COLOR", async () => {
  const port = freePort();
  const before = Math.floor(Date.now() / 1000);
  const r = await runCli([...ONE_ATTEMPT, "tcp", `127.0.0.1:${port}`], { env: GITLAB });
  const after = Math.floor(Date.now() / 1000);
  assertEquals(r.code, 1);
  // deno-lint-ignore no-control-regex
  const m = /^\x1b\[0Ksection_start:(\d+):waitcmd\[collapsed=true\]\r\x1b\[0K/.exec(r.stderr);
  assert(m, JSON.stringify(r.stderr));
  // deno-lint-ignore no-control-regex
  const end = /\x1b\[0Ksection_end:(\d+):waitcmd\r\x1b\[0K\n/.exec(r.stderr);
  assert(end, JSON.stringify(r.stderr));
  const [start, stop] = [Number(m[1]), Number(end[1])];
  assert(before <= start && start <= stop && stop <= after, `${before} ${start} ${stop} ${after}`);
  const [header, attempt, summary] = refused(port, "1s", "10s");
  assertEquals(
    untimed(r.stderr),
    `\x1b[0Ksection_start:${start}:waitcmd[collapsed=true]\r\x1b[0K${header}\n${attempt}\n` +
      `\x1b[0Ksection_end:${stop}:waitcmd\r\x1b[0K\n${summary}\n`,
  );
});

Deno.test("WAITCMD_CI=off, JSON and jsonl output: no group, section or annotation", async () => {
  const port = freePort();
  const args = [...ONE_ATTEMPT, "tcp", `127.0.0.1:${port}`];
  const plain = [...refused(port, "1s", "10s"), ""].join("\n");
  for (const env of [{ ...GITHUB, WAITCMD_CI: "off" }, { ...GITLAB, WAITCMD_CI: "off" }]) {
    assertEquals(untimed((await runCli(args, { env })).stderr), plain);
  }
  for (const env of [GITHUB, GITLAB]) {
    const json = await runJson(args, { env });
    assertEquals([json.code, json.stderr, json.json.status], [1, "", "timeout"]);
    const jsonl = await runCli(["-o", "jsonl", ...args], { env });
    assertEquals([jsonl.code, jsonl.stderr], [1, ""]);
    assert(!jsonl.stdout.includes("::") && !jsonl.stdout.includes("section_"), jsonl.stdout);
  }
});

Deno.test("--progress changes: a line per change, not per attempt (flag, WAITCMD_PROGRESS, recipe)", async () => {
  await withDir(async (dir) => {
    const port = freePort();
    const args = ["-t", "1500ms", "-i", "100ms", "tcp", `127.0.0.1:${port}`];
    const want = [...refused(port, "1.5s", "100ms"), ""].join("\n");
    const every = await runCli(args);
    assert(every.stderr.split("\n").length > 8, every.stderr);
    assertEquals(untimed((await runCli(["--progress", "changes", ...args])).stderr), want);
    const env = { WAITCMD_PROGRESS: "changes" };
    assertEquals(untimed((await runCli(args, { env })).stderr), want);
    const recipe = await writeRecipe(
      dir,
      `progress: changes\ntimeout: 1500ms\ninterval: 100ms\nconditions:\n` +
        `  - kind: tcp\n    target: 127.0.0.1:${port}\n`,
    );
    assertEquals(untimed((await runCli(["-f", recipe])).stderr), want);
  });
});

Deno.test("--progress changes: a heartbeat at 30s names what is still pending and why, in the group", async () => {
  await withDir(async (dir) => {
    const port = freePort();
    const sock = `${dir}/app.sock`;
    const r = await runCli(
      [
        ...["--progress", "changes"],
        ...timing("31s", "500ms"),
        ...["tcp", `127.0.0.1:${port}`],
        ...["--", "unix", sock],
      ],
      { env: GITHUB },
    );
    assertEquals(r.code, 1);
    const lines = r.stderr.trimEnd().split("\n");
    const hint = `nothing at ${sock}: its server is not running, or listens elsewhere`;
    assertEquals(lines.length, 9, r.stderr);
    assertEquals(
      lines[0],
      "::group::waitcmd: waiting for 2 conditions (timeout 31s, interval 500ms)",
    );
    // The first lines, one per condition (in the order their attempts ended); the hint on its first.
    assertEquals(
      untimed(lines.slice(1, 3).sort().join("\n")),
      [
        `[..] tcp 127.0.0.1:${port} attempt 1 (T): connection refused`,
        `[..] unix ${sock} attempt 1 (T): no such file or directory (hint: ${hint})`,
      ].join("\n"),
    );
    // The heartbeat, in command-line order: the latest attempt's number, the run's time, the
    // latest error and its hint.
    assertMatch(
      lines[3]!,
      new RegExp(
        `^\\[\\.\\.\\] tcp 127\\.0\\.0\\.1:${port} attempt \\d+ \\(30\\.\\ds\\): connection refused$`,
      ),
    );
    assertEquals(
      lines[4]!.replace(/attempt \d+ \(30\.\ds\)/, "attempt N (30s)"),
      `[..] unix ${sock} attempt N (30s): no such file or directory (hint: ${hint})`,
    );
    assertEquals(lines[5], "::endgroup::");
    assertEquals(
      lines[6],
      `waitcmd: timed out after 31s; not satisfied: tcp 127.0.0.1:${port}: connection refused`,
    );
    assertEquals(
      lines[7],
      `waitcmd: timed out after 31s; not satisfied: unix ${sock}: no such file or directory (hint: ${hint})`,
    );
    assertMatch(
      lines[8]!,
      /^::error title=waitcmd::timed out after 31s; .*%0Atimed out after 31s; /,
    );
  });
});

Deno.test("GITHUB_STEP_SUMMARY by --report's rules: a FIFO nobody reads is given up after 2 s, a link is not followed, a device is written", async () => {
  await withDir(async (dir) => {
    const args = ["-q", "-t", "200ms", "tcp", `127.0.0.1:${freePort()}`];
    const run = (summary: string) =>
      runCli(args, { env: { ...GITHUB, GITHUB_STEP_SUMMARY: summary } });
    const made = await new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).output();
    assert(made.success, "mkfifo");
    // It hung, deaf to SIGTERM: killed after 10 s, it fails the test rather than hold it.
    let killer: ReturnType<typeof setTimeout> | undefined;
    const fifo = await runCli(args, {
      env: { ...GITHUB, GITHUB_STEP_SUMMARY: `${dir}/fifo` },
      started: (child) => {
        killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      },
    }).finally(() => clearTimeout(killer));
    assertEquals(fifo.code, 1, fifo.stderr);
    assertMatch(
      fifo.stderr,
      new RegExp(
        `waitcmd: GITHUB_STEP_SUMMARY ${dir}/fifo: nothing took the step summary within 2s\\n$`,
      ),
    );
    await Deno.writeTextFile(`${dir}/elsewhere`, "untouched\n");
    await Deno.symlink(`${dir}/elsewhere`, `${dir}/link`);
    const link = await run(`${dir}/link`);
    assertEquals(link.code, 1);
    assertMatch(link.stderr, /GITHUB_STEP_SUMMARY .*\/link: is a symbolic link, not followed\n$/);
    assertEquals(await Deno.readTextFile(`${dir}/elsewhere`), "untouched\n");
    const device = await run("/dev/null");
    assertEquals(device.code, 1);
    assert(!device.stderr.includes("GITHUB_STEP_SUMMARY"), device.stderr);
    const fresh = await run(`${dir}/new.md`);
    assertEquals(fresh.code, 1);
    assertMatch(await Deno.readTextFile(`${dir}/new.md`), /^\*\*waitcmd\*\*: timed out/);
  });
});
