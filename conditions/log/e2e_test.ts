import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import {
  expectJson,
  logTest,
  runCli,
  runJson,
  startCli,
  timing,
  usageErrorLine,
} from "../../tests/e2e/_cli.ts";
import { inTempDir } from "../../tests/services/_util.ts";

const append = (path: string, text: string) => Deno.writeTextFile(path, text, { append: true });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const withDir = inTempDir("waitcmd-log-e2e-");

/** The stderr line of attempt `n` (or later) of the condition. */
const attemptAtLeast = (name: string, n: number) => (line: string) => {
  const m = new RegExp(
    `^\\[\\.\\.\\] ${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} attempt (\\d+) `,
  )
    .exec(line);
  return m !== null && Number(m[1]) >= n;
};

logTest(
  "log skips existing lines, waits for a partial line's newline, drops CR",
  "FATAL old\n",
  async (f) => {
    const cli = startCli([...timing("15s", "200ms"), "log", f, "--contains", "FATAL"]);
    const name = `log ${f}`;
    await cli.waitFor("stderr", attemptAtLeast(name, 1));
    await append(f, "FATAL ne");
    // Two more attempts have read the unfinished line without matching it.
    const seen = cli.lines.stderr.length;
    await cli.waitFor(
      "stderr",
      (l) => cli.lines.stderr.indexOf(l) >= seen + 1 && l.startsWith("[..]"),
    );
    await append(f, "w\r\n");
    const r = await cli.done();
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "");
    const lines = r.stderr.trimEnd().split("\n");
    assertEquals(lines[0], "waitcmd: waiting for 1 condition (timeout 15s, interval 200ms)");
    assertMatch(
      lines.at(-2)!,
      new RegExp(`^\\[ok\\] log ${f} attempt \\d+ \\(\\d+\\.\\ds\\): FATAL new$`),
    );
    assertMatch(lines.at(-1)!, /^waitcmd: satisfied in \d+\.\ds \(1\/1 conditions\)$/);
    assert(lines.slice(1, -2).every((l) => l.endsWith(": no matching line yet")), r.stderr);
  },
);

logTest(
  "log --from-start matches existing content; JSON report shape",
  "boot\nlistening on 127.0.0.1:8080\nrequest\n",
  async (f) => {
    const r = await expectJson([
      ...["--timeout", "5s", "log", f, "--from-start", "--matches", "listening on .*:\\d+$"],
    ], { code: 0, status: "satisfied", stderr: "" });
    const c = r.json.conditions[0]!;
    assertEquals(
      {
        name: c.name,
        kind: c.kind,
        target: c.target,
        guard: c.guard,
        satisfied: c.satisfied,
        attempts: c.attempts,
        detail: c.detail,
        last_error: c.last_error,
      },
      {
        name: `log ${f}`,
        kind: "log",
        target: f,
        guard: false,
        satisfied: true,
        attempts: 1,
        detail: "listening on 127.0.0.1:8080",
        last_error: "",
      },
    );
    assertEquals(typeof r.json.elapsed_seconds, "number");
  },
);

logTest(
  "log --tail N scans only the last N existing lines; a timeout reports why",
  "ERROR early\nok 1\nok 2\n",
  async (f) => {
    const short = await expectJson([
      ...timing("600ms", "100ms"),
      ...["log", f, "--tail", "2", "--contains", "ERROR"],
    ], { code: 1, status: "timeout" });
    assertEquals(short.json.conditions[0]!.satisfied, false);
    assertEquals(short.json.conditions[0]!.last_error, "no matching line yet");
    const long = await runJson(["--timeout", "5s", "log", f, "--tail", "3", "--contains", "ERROR"]);
    assertEquals([long.code, long.json.conditions[0]!.detail], [0, "ERROR early"]);
    const text = await runCli([
      ...timing("300ms", "100ms"),
      ...["log", f, "--tail", "2", "--contains", "ERROR"],
    ]);
    assertEquals(text.code, 1);
    assertStringIncludes(
      text.stderr,
      `waitcmd: timed out after 300ms; not satisfied: log ${f}: no matching line yet\n`,
    );
  },
);

Deno.test("log --exclude drops lines before --contains and --matches (both must hold)", async () => {
  await withDir(async (dir) => {
    const f = `${dir}/app.log`;
    await Deno.writeTextFile(
      f,
      [
        "job 1 done (dry-run) took 5ms",
        "job 2 done took slow",
        "job 3 done (test) took 7ms",
        "job 4 done took 9ms",
        "job 5 done took 11ms",
        "",
      ].join("\n"),
    );
    const r = await runJson([
      ...["--timeout", "5s", "log", f, "--from-start", "--contains", "done"],
      ...["--matches", "took \\d+ms$", "--exclude", "dry-run", "--exclude", "(test)"],
    ]);
    assertEquals([r.code, r.json.conditions[0]!.detail], [0, "job 4 done took 9ms"]);
  });
});

Deno.test("log --exclude-matches drops lines a regular expression matches, then waits for a new one", async () => {
  await withDir(async (dir) => {
    const f = `${dir}/app.log`;
    await Deno.writeTextFile(f, "DEBUG job 1 done\njob 2 done (retry 3)\n");
    const flags = ["log", f, "--from-start", "--contains", "done"];
    const excl = ["--exclude-matches", "^DEBUG\\b", "--exclude-matches", "retry \\d+"];
    // Every line so far is excluded: the run times out.
    const early = await runJson(["--timeout", "1s", ...flags, ...excl]);
    assertEquals([early.code, early.json.status], [1, "timeout"]);
    // A line that no expression excludes is written while waitcmd follows the file.
    const cli = startCli(["--timeout", "15s", "--interval", "200ms", ...flags, ...excl]);
    await cli.waitFor("stderr", attemptAtLeast(`log ${f}`, 1));
    await Deno.writeTextFile(f, "DEBUG job 3 done\njob 4 done\n", { append: true });
    const r = await cli.done();
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stderr, "job 4 done");
  });
});

logTest(
  "log --min-matches reports n/N and ends with N/N matches; last line",
  "job a done\n",
  async (f) => {
    const cli = startCli([
      ...timing("15s", "200ms"),
      ...["log", f, "--from-start", "--contains", "done", "--min-matches", "3"],
    ]);
    await cli.waitFor(
      "stderr",
      new RegExp(`^\\[\\.\\.\\] log ${f} attempt 1 \\(\\d+\\.\\ds\\): 1/3 matches$`),
    );
    await append(f, "job b done\nunrelated\n");
    await cli.waitFor("stderr", /: 2\/3 matches$/);
    await append(f, "job c done\njob d done\n");
    const r = await cli.done();
    assertEquals(r.code, 0);
    const ok = r.stderr.split("\n").find((l) => l.startsWith("[ok]"));
    assertMatch(
      ok!,
      new RegExp(
        `^\\[ok\\] log ${f} attempt \\d+ \\(\\d+\\.\\ds\\): 3/3 matches; last: job c done$`,
      ),
    );

    const json = await runJson([
      ...["--timeout", "5s", "log", f, "--from-start", "--contains", "done", "--min-matches", "3"],
    ]);
    assertEquals(json.json.conditions[0]!.detail, "job c done");
  },
);

logTest(
  "log --jsonpath matches only JSON-object lines that satisfy it, written late or already there",
  [
    '{"level":"info","msg":"booting","port":0}',
    'level=error msg="server started" port=8080',
    '["msg","server started"]',
    "",
  ].join("\n"),
  async (f) => {
    const expr = '$.msg == "server started" && $.port > 0';
    // Nothing in the file satisfies it: a timeout, the plain-text and array lines never match.
    await expectJson([...timing("600ms", "100ms"), "log", f, "--from-start", "--jsonpath", expr], {
      code: 1,
      status: "timeout",
      error: "no matching line yet",
    });
    // Pending, then a JSON line that satisfies it is written.
    const cli = startCli([
      ...["--output", "jsonl"],
      ...timing("15s", "200ms"),
      ...["log", f, "--jsonpath", expr, "--jsonpath", "$.level"],
    ]);
    await cli.waitFor("stdout", /"event":"attempt"/);
    await append(f, '{"level":"info","msg":"server started","port":0}\nnot json {\n');
    await append(f, '{"level":"info","msg":"server started","port":8080}\n');
    const r = await cli.done();
    assertEquals(r.code, 0, r.stderr);
    const c = r.report!.conditions[0]! as { detail: string; captures?: unknown };
    assertEquals(c.detail, '{"level":"info","msg":"server started","port":8080}');
    assertEquals(c.captures, { value: "info" });
    // With --from-start it is found in what is there, together with --contains.
    await expectJson([
      ...["--timeout", "5s", "log", f, "--from-start", "--contains", "8080", "--jsonpath", expr],
    ], { code: 0, detail: '{"level":"info","msg":"server started","port":8080}' });
  },
);

Deno.test("log waits for a file that does not exist yet and reads it from its start", async () => {
  await withDir(async (dir) => {
    const f = `${dir}/logs/late.log`;
    const cli = startCli([
      ...["--output", "json"],
      ...timing("15s", "200ms"),
      ...["log", f, "--contains", "ready"],
    ]);
    await sleep(500);
    await Deno.mkdir(`${dir}/logs`);
    await Deno.writeTextFile(f, "starting\nservice ready\n");
    const r = await cli.done();
    assertEquals(r.code, 0, r.stdout);
    assertEquals(r.stderr, "");
    assertEquals(r.json!.conditions[0]!.detail, "service ready");
    assertEquals(r.json!.conditions[0]!.last_error, "does not exist");
  });
});

logTest("guard log exits 3 as soon as the line is written", "", async (f, dir) => {
  // The interval is longer than the timeout: only the file event can end this run early.
  const cli = startCli([
    ...timing("20s", "30s"),
    ...["file", `${dir}/never`],
    ...["--", "guard", "log", f, "--contains", "FATAL"],
  ]);
  await cli.waitFor("stderr", attemptAtLeast(`guard log ${f}`, 1));
  const t0 = performance.now();
  await append(f, "FATAL out of memory\n");
  const r = await cli.done();
  assertEquals(r.code, 3, r.stderr);
  assertStringIncludes(r.stderr, `waitcmd: guard log ${f} matched: FATAL out of memory\n`);
  assert(r.exitedAt - t0 < 5000, `exited ${Math.round(r.exitedAt - t0)} ms after the write`);
});

Deno.test("log usage errors exit 2 with one line", async (t) => {
  const rows: [string[], string][] = [
    [
      ["log", "a.log"],
      "waitcmd: condition 1 (log): expected --contains TEXT, --matches REGEX or --jsonpath EXPR",
    ],
    [
      ["log", "a.log", "--contains", "x", "--from-start", "--tail", "3"],
      "--tail: cannot be combined with --from-start",
    ],
    [
      ["log", "a.log", "--matches", "[a-"],
      "--matches: invalid regular expression /[a-/: unterminated character class",
    ],
    [
      ["log", "a.log", "--jsonpath", "level == error"],
      '--jsonpath: expected a path like $.status, .status or {.status}, got "level"',
    ],
    [
      ["log", "a.log", "--jsonpath", "$.msg =~ /(?=a)/"],
      "--jsonpath: =~ /(?=a)/: not supported by waitcmd's linear-time engine",
    ],
    [
      ["log", "a.log", "--contains", "x", "--min-matches", "none"],
      `--min-matches: expected a whole number of at least 1, got "none"`,
    ],
  ];
  for (const [args, part] of rows) {
    await t.step(args.join(" "), async () => {
      const line = usageErrorLine(await runCli(args));
      assertStringIncludes(line, part);
      assertStringIncludes(line, "(see: waitcmd help log)");
    });
  }
});

/** The count in the newest `n/10000 matches` progress event on stdout (jsonl). */
function progress(lines: string[]): number {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /"error":"(\d+)\/10000 matches"/.exec(lines[i]!);
    if (m) return Number(m[1]);
  }
  return 0;
}

const LINES = 10_000;
const ROTATE_EVERY = 1_700; // 5 rotations

const numbered = (i: number) => `line ${i} ${"x".repeat(1 + (i % 50))}\n`;

async function rotationRun(
  dir: string,
  rotate: (f: string, n: number, written: number, seen: () => number) => Promise<void>,
) {
  const f = `${dir}/app.log`;
  await Deno.writeTextFile(f, "");
  const cli = startCli([
    ...["--output", "jsonl"],
    ...timing("60s", "1s"),
    ...["log", f, "--from-start", "--contains", "line", "--min-matches", String(LINES)],
  ]);
  await cli.waitFor("stdout", /"event":"attempt"/);
  const enc = new TextEncoder();
  let out = await Deno.open(f, { append: true });
  let rotations = 0;
  let reopen = false;
  try {
    for (let i = 1; i <= LINES;) {
      let batch = "";
      const stop = Math.min(LINES, i + 49);
      for (; i <= stop; i++) batch += numbered(i);
      await out.write(enc.encode(batch));
      const written = i - 1;
      if (reopen) {
        // One batch after the rotation, the writer reopens the path (as a daemon does on SIGHUP).
        const next = await Deno.open(f, { append: true, create: true });
        if ((await next.stat()).ino === (await out.stat()).ino) {
          next.close(); // copytruncate: the same file goes on
        } else {
          out.close();
          out = next;
        }
        reopen = false;
      }
      if (written % ROTATE_EVERY === 0 && written < LINES) {
        rotations++;
        await rotate(f, rotations, written, () => progress(cli.lines.stdout));
        reopen = true;
      }
      await sleep(3);
    }
  } finally {
    out.close();
  }
  const r = await cli.done();
  const end = JSON.parse(r.stdout.trimEnd().split("\n").at(-1)!);
  return { r, end, rotations };
}

Deno.test("log follows rename+create rotation without losing or repeating a line", async () => {
  await withDir(async (dir) => {
    // The batch after each rotation still goes to the renamed file, after the new one exists.
    const { r, end, rotations } = await rotationRun(dir, async (f, n) => {
      await Deno.rename(f, `${f}.${n}`);
      await Deno.writeTextFile(f, "");
    });
    assert(rotations >= 5);
    assertEquals(r.code, 0, r.stdout.slice(-2000));
    assertEquals(end.status, "satisfied");
    assertEquals(end.conditions[0].detail, numbered(LINES).trimEnd());
  });
});

Deno.test("log follows copytruncate rotation without losing or repeating a line", async () => {
  await withDir(async (dir) => {
    const { r, end, rotations } = await rotationRun(dir, async (f, n, written, seen) => {
      // copytruncate loses whatever is written between the reader's last read and the
      // truncation (for every reader); the writer pauses until waitcmd has read it all.
      const deadline = Date.now() + 30_000;
      while (seen() < written && Date.now() < deadline) await sleep(5);
      await Deno.copyFile(f, `${f}.${n}`);
      await Deno.truncate(f, 0);
    });
    assert(rotations >= 5);
    assertEquals(r.code, 0, r.stdout.slice(-2000));
    assertEquals(end.status, "satisfied");
    assertEquals(end.conditions[0].detail, numbered(LINES).trimEnd());
  });
});

Deno.test("log: the baseline is taken when the command line is read, not at the first attempt", () =>
  withDir(async (dir) => {
    const f = `${dir}/app.log`;
    await Deno.writeTextFile(f, "ready before\n");
    // --delay holds the first attempt back: a line written meanwhile is after the start.
    const cli = startCli([
      "-o",
      "jsonl",
      "-t",
      "15s",
      "--delay",
      "1s",
      "log",
      f,
      "--contains",
      "ready",
    ]);
    await cli.waitFor("stdout", /"event":"start"/);
    await append(f, "ready after\n");
    const r = await cli.done();
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.report?.conditions[0]?.detail, "ready after");
  }));
