/**
 * The run-level features through the CLI (docs/contract.md §1, §3, §4):
 * `not`, backoff and jitter, `--delay`, no deadline, short options,
 * WAITCMD_* defaults, recipes, `--explain`, `--report`, `doctor`. Targets
 * are local (TCP listeners and files made here), so every case runs anywhere.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { assertReportSchema } from "../_schema.ts";
import {
  cliTest,
  expectJson,
  runCli,
  runJson,
  runJsonl,
  runLate,
  timing,
  usageErrorLine,
} from "./_cli.ts";
import { acceptingPort, closedPort, inTempDir } from "../services/_util.ts";

const withDir = inTempDir("waitcmd-runlevel-");

cliTest("not: holds while the target is down, with the probe's error as detail", async () => {
  const port = closedPort();
  const r = await expectJson(["-t", "5s", "not", "tcp", `127.0.0.1:${port}`], { code: 0 });
  const c = r.json.conditions[0]!;
  assertEquals(c.name, `not tcp 127.0.0.1:${port}`);
  assertEquals(c.satisfied, true);
  assertStringIncludes(c.detail, "connection refused");

  const text = await runCli(["-t", "5s", "not", "tcp", `127.0.0.1:${port}`]);
  assertMatch(text.stderr, new RegExp(`\\[ok\\] not tcp 127\\.0\\.0\\.1:${port} attempt 1`));
});

cliTest(
  "not: pending while the target is up, satisfied once it goes down; timeout while up",
  async () => {
    const server = acceptingPort();
    const late = await runLate(
      ["-t", "10s", "-i", "100ms", "not", "tcp", `127.0.0.1:${server.port}`],
      () => Promise.resolve(server.close()),
    );
    assertEquals(late.code, 0);
    assertEquals(late.attempts[0]!.error, `still holds: connected to 127.0.0.1:${server.port}`);
    assert(late.attempts.at(-1)!.ok);

    const up = acceptingPort();
    try {
      const r = await expectJson([
        ...timing("600ms", "100ms"),
        ...["not", "tcp", `127.0.0.1:${up.port}`],
      ], { code: 1, status: "timeout" });
      assertStringIncludes(r.json.conditions[0]!.last_error, "still holds: connected to");
    } finally {
      up.close();
    }
  },
);

cliTest(
  "not: an event-driven kind stays event-driven (a removed file is seen at once)",
  () =>
    withDir(async (dir) => {
      const path = `${dir}/lock`;
      await Deno.writeTextFile(path, "x");
      // With a 60 s interval only the watcher can end this run within the 20 s timeout.
      const late = await runLate(
        ["-t", "20s", "-i", "60s", "not", "file", path],
        () => Deno.remove(path),
      );
      assertEquals(late.code, 0);
      assertEquals(late.attempts.length, 2);
      assertEquals(late.report.conditions[0]!.detail, "does not exist");
    }),
);

cliTest("not: misplaced is a usage error saying what to type", async () => {
  const rows: [string[], string][] = [
    [["tcp", "a:1", "not"], `unexpected argument "not"; separate conditions with "--"`],
    [["not", "guard", "tcp", "a:1"], "write guard before not: -- guard not <kind> ..."],
    [["not"], "not must be followed by a condition kind"],
  ];
  for (const [args, fragment] of rows) {
    assertStringIncludes(usageErrorLine(await runCli(args)), fragment);
  }
});

cliTest("backoff: exponential pauses make far fewer attempts than constant ones", async () => {
  const port = closedPort();
  const args = ["-t", "1500ms", "-i", "100ms"];
  const constant = await runJson([...args, "tcp", `127.0.0.1:${port}`]);
  const exp = await runJson([
    ...args,
    ...["--backoff", "exponential", "--max-interval", "10s", "tcp", `127.0.0.1:${port}`],
  ]);
  assertEquals([constant.code, exp.code], [1, 1]);
  // Pauses 100, 200, 400, 800 ms: at most 5 attempts fit in 1.5 s (constant: about 14).
  assert(
    exp.json.conditions[0]!.attempts <= 5,
    `exponential: ${exp.json.conditions[0]!.attempts}`,
  );
  assert(
    constant.json.conditions[0]!.attempts >= 8,
    `constant: ${constant.json.conditions[0]!.attempts}`,
  );
});

cliTest(
  "backoff: pending then satisfied with exponential backoff, jitter and a delay",
  () =>
    withDir(async (dir) => {
      const path = `${dir}/ready`;
      const late = await runLate(
        [
          ...timing("20s", "100ms"),
          ...["--backoff", "exponential", "--max-interval", "400ms", "--jitter", "20%"],
          ...["--delay", "200ms", "file", path],
        ],
        () => Deno.writeTextFile(path, "ok"),
      );
      assertEquals(late.code, 0);
      assertEquals(late.report.status, "satisfied");
    }),
);

cliTest("backoff: --backoff-factor 3 triples each pause (jsonl attempt times)", async () => {
  const port = closedPort();
  const r = await runJsonl([
    ...["-t", "3s", "-i", "200ms", "--backoff", "exponential", "--backoff-factor", "3"],
    ...["--max-interval", "10s", "tcp", `127.0.0.1:${port}`],
  ]);
  assertEquals([r.code, r.report.status], [1, "timeout"]);
  const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(events[0].options.backoff_factor, 3);
  const ends: number[] = events.filter((e) => e.event === "attempt").map((e) => e.elapsed_seconds);
  // Pauses 200 ms, 600 ms, 1.8 s: a pause never ends early, so each gap is at least its pause
  // (factor 2 would give 400 ms and 800 ms); load only makes gaps longer.
  assert(ends.length >= 3 && ends.length <= 4, `attempts at ${ends}`);
  const gaps = ends.slice(1).map((t, i) => t - ends[i]!);
  [0.2, 0.6, 1.8].slice(0, gaps.length).forEach((pause, i) => {
    assert(gaps[i]! >= pause - 0.005, `gap ${i + 1} ${gaps[i]} s, want at least ${pause} s`);
  });
  const text = await runCli([
    ...["-t", "300ms", "--backoff", "exponential", "--backoff-factor", "1.5"],
    ...["tcp", `127.0.0.1:${port}`],
  ]);
  assertStringIncludes(text.stderr, "exponential backoff ×1.5 to 30s");
});

cliTest("backoff: bad values are usage errors", async () => {
  const rows: [string[], string][] = [
    [["--jitter", "150%", "tcp", "a:1"], "--jitter: expected a share from 0% to 100%"],
    [
      ["--backoff", "exponential", "-i", "5s", "--max-interval", "1s", "tcp", "a:1"],
      "--max-interval: must not be shorter than --interval (5s), got 1s",
    ],
    [["--delay", "soon", "tcp", "a:1"], "--delay: expected a duration"],
    [
      ["--backoff", "exponential", "--backoff-factor", "0.5", "tcp", "a:1"],
      'waitcmd: --backoff-factor: expected a number of at least 1 (like 1.5 or 2), got "0.5"',
    ],
    [
      ["--backoff-factor", "2", "tcp", "a:1"],
      "waitcmd: --backoff-factor: only applies with --backoff exponential",
    ],
  ];
  for (const [args, fragment] of rows) {
    assertStringIncludes(usageErrorLine(await runCli(args)), fragment);
  }
});

cliTest(
  "--timeout 0 / none: no deadline; the header and the report say so",
  () =>
    withDir(async (dir) => {
      const path = `${dir}/f`;
      const text = await runCli(["-t", "none", "-i", "100ms", "file", path], {
        started: async () => {
          await new Promise((r) => setTimeout(r, 400));
          await Deno.writeTextFile(path, "");
        },
      });
      assertEquals(text.code, 0);
      assertStringIncludes(
        text.stderr,
        "waitcmd: waiting for 1 condition (no timeout, interval 100ms)",
      );
      const json = await runJson(["--timeout", "0", "file", path]);
      assertEquals(json.json.timeout_seconds, null);
      assertEquals(json.code, 0);
    }),
);

cliTest("short options -t -i -o -q -h -V work like the long ones", async () => {
  const port = closedPort();
  const r = await runCli([...timing("300ms", "100ms"), "-o", "json", "tcp", `127.0.0.1:${port}`]);
  assertEquals(r.code, 1);
  assertEquals(r.json?.status, "timeout");
  const q = await runCli(["-q", "-t", "300ms", "tcp", `127.0.0.1:${port}`]);
  assert(!q.stderr.includes("[..]"), `-q prints no progress lines:\n${q.stderr}`);
  assertStringIncludes(q.stderr, "waitcmd: timed out after 300ms");
  assertMatch((await runCli(["-V"])).stdout, /^waitcmd \d+\.\d+\.\d+ /);
  assertStringIncludes((await runCli(["-h"])).stdout, "-t, --timeout DURATION");
});

cliTest("WAITCMD_* supply defaults; a flag wins; a bad value names the variable", async () => {
  const port = closedPort();
  const env = { WAITCMD_TIMEOUT: "400ms", WAITCMD_INTERVAL: "100ms", WAITCMD_OUTPUT: "json" };
  const r = await runCli(["tcp", `127.0.0.1:${port}`], { env });
  assertEquals(r.code, 1);
  assertEquals(r.json?.timeout_seconds, 0.4);
  const flagWins = await runCli(["-o", "text", "tcp", `127.0.0.1:${port}`], { env });
  assertEquals(flagWins.stdout, "");
  assertStringIncludes(flagWins.stderr, "timed out after 400ms");
  const server = acceptingPort();
  try {
    const any = await runCli(
      ["tcp", `127.0.0.1:${port}`, "--", "tcp", `127.0.0.1:${server.port}`],
      { env: { ...env, WAITCMD_MODE: "any", WAITCMD_ATTEMPT_TIMEOUT: "1s" } },
    );
    assertEquals(any.code, 0);
    assertEquals(any.json?.mode, "any");
  } finally {
    server.close();
  }
  const bad = await runCli(["tcp", "a:1"], { env: { WAITCMD_TIMEOUT: "soon" } });
  assertStringIncludes(usageErrorLine(bad), "waitcmd: WAITCMD_TIMEOUT: expected a duration");
});

/** A test with a directory of its own and a loopback port that accepts (closed after). */
function portTest(name: string, fn: (dir: string, port: number) => Promise<void>): void {
  cliTest(name, () =>
    withDir(async (dir) => {
      const server = acceptingPort();
      try {
        await fn(dir, server.port);
      } finally {
        server.close();
      }
    }));
}

portTest(
  "recipes: a YAML file, JSON on stdin, pending then satisfied, timeout",
  async (dir, port) => {
    const yaml = `${dir}/waits.yaml`;
    await Deno.writeTextFile(
      yaml,
      [
        "timeout: 5s",
        "interval: 100ms",
        "conditions:",
        `  - kind: tcp`,
        `    target: 127.0.0.1:${port}`,
        `    label: api`,
        `  - kind: file`,
        `    target: ${dir}/late`,
      ].join("\n"),
    );
    const late = await runLate(
      ["-f", yaml],
      () => Deno.writeTextFile(`${dir}/late`, ""),
    );
    assertEquals(late.code, 0);
    assertEquals(late.report.conditions.map((c) => c.name), ["api", `file ${dir}/late`]);

    const json = JSON.stringify({
      conditions: [{ kind: "tcp", target: `127.0.0.1:${closedPort()}` }],
    });
    const r = await runCli(["-o", "json", "-t", "300ms", "-f", "-"], { stdin: json });
    assertEquals(r.code, 1);
    assertEquals(r.json?.status, "timeout");
  },
);

cliTest(
  "recipes: usage errors name the file and the line, and nothing is probed",
  () =>
    withDir(async (dir) => {
      const write = async (name: string, text: string) => {
        await Deno.writeTextFile(`${dir}/${name}`, text);
        return `${dir}/${name}`;
      };
      const unknown = await write("a.yaml", "timeout: 5s\nintervall: 1s\nconditions: []\n");
      assertStringIncludes(
        usageErrorLine(await runCli(["-f", unknown])),
        `waitcmd: ${unknown}:2: unknown key "intervall" (did you mean interval?)`,
      );
      const notYaml = await write("b.yaml", "conditions: [\n  {kind: tcp\n");
      assertStringIncludes(usageErrorLine(await runCli(["-f", notYaml])), "not valid YAML or JSON");
      const wrongType = await write(
        "c.yaml",
        "conditions:\n  - kind: exec\n    command: [touch, " + dir +
          "/probed]\n  - kind: glob\n    target: '*.x'\n    flags:\n      min-count: lots\n",
      );
      assertStringIncludes(
        usageErrorLine(await runCli(["-f", wrongType])),
        `${wrongType}:7: condition 2 (glob): --min-count: expected a whole number`,
      );
      assertEquals(await Deno.stat(`${dir}/probed`).catch(() => undefined), undefined);
      assertStringIncludes(
        usageErrorLine(await runCli(["-f", `${dir}/missing.yaml`])),
        `--config: cannot read ${dir}/missing.yaml: no such file or directory`,
      );
    }),
);

cliTest(
  "--explain prints the plan, probes nothing and exits 0; -o json gives it as JSON",
  () =>
    withDir(async (dir) => {
      const marker = `${dir}/probed`;
      const args = ["--explain", "exec", "--", "touch", marker, "--", "guard", "not", "file", "/x"];
      const text = await runCli(args);
      assertEquals(text.code, 0);
      assertStringIncludes(text.stdout, "would wait for 1 condition and 1 guard");
      assertStringIncludes(text.stdout, `1. exec -- touch ${marker}\n`);
      assertStringIncludes(
        text.stdout,
        "2. guard not file /x (guard: exit 3 as soon as it holds; holds while the probe fails)",
      );
      const json = await runCli(["-o", "json", "--dry-run", "tcp", "db:5432"]);
      assertEquals(json.code, 0);
      const plan = JSON.parse(json.stdout);
      assertEquals(plan.explain, true);
      assertEquals(plan.conditions[0].name, "tcp db:5432");
      assertEquals(await Deno.stat(marker).catch(() => undefined), undefined, "nothing probed");
      assertEquals((await runCli(["--explain", "tcp", "nope"])).code, 2);
    }),
);

portTest(
  "--report FILE: the JSON report is written whatever --output is; a bad path is exit 2",
  async (dir, port) => {
    const file = `${dir}/report.json`;
    const r = await runCli(["--report", file, "tcp", `127.0.0.1:${port}`]);
    assertEquals(r.code, 0);
    assertEquals(r.stdout, "");
    const report = JSON.parse(await Deno.readTextFile(file));
    await assertReportSchema(report);
    assertEquals(report.status, "satisfied");
    const names = [...Deno.readDirSync(dir)].map((e) => e.name);
    assertEquals(names, ["report.json"], "no temporary file left behind");

    const bad = await runCli([
      ...["--report", `${dir}/no/such/dir/r.json`, "tcp", `127.0.0.1:${port}`],
    ]);
    assertStringIncludes(usageErrorLine(bad), "--report: cannot write");
    const timeout = await runCli([
      ...["-t", "200ms", "--report", file, "tcp", `127.0.0.1:${closedPort()}`],
    ]);
    assertEquals(timeout.code, 1);
    assertEquals(JSON.parse(await Deno.readTextFile(file)).status, "timeout");
  },
);

cliTest(
  "doctor names every kind with ok or a reason; --require decides the exit code",
  async () => {
    const env = { DOCKER_HOST: "unix:///nonexistent/docker.sock" };
    const text = await runCli(["doctor"], { env });
    assertEquals(text.code, 0);
    assertMatch(text.stdout, /^tcp +ok$/m);
    assertMatch(text.stdout, /^container +no: Docker socket \/nonexistent\/docker.sock: /m);
    const json = await runCli(["doctor", "-o", "json"], { env });
    const kinds = JSON.parse(json.stdout).kinds as { kind: string; ok: boolean }[];
    assertEquals(kinds.find((k) => k.kind === "container")?.ok, false);
    assert(kinds.length >= 16);
    assertEquals((await runCli(["doctor", "--require", "tcp"], { env })).code, 0);
    assertEquals((await runCli(["doctor", "--require", "docker"], { env })).code, 1);
    assertStringIncludes(
      usageErrorLine(await runCli(["doctor", "--require", "bogus"])),
      `unknown kind "bogus"`,
    );
  },
);
