import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { expectJson, runCli, runJson, runOnTerminal, timing, usageErrorLine } from "./_cli.ts";

const HOSTNAME_FILE = await Deno.makeTempFile({ prefix: "waitcmd-cli-" });
await Deno.writeTextFile(HOSTNAME_FILE, "present\n");

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    // A zombie still accepts signal 0; only a running process counts.
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function waitForFile(path: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    try {
      const t = (await Deno.readTextFile(path)).trim();
      if (t) return t;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${path} never appeared`);
}

Deno.test("waitcmd --help lists every kind, the options and the exit codes", async () => {
  const r = await runCli(["--help"]);
  assertEquals(r.code, 0);
  assertEquals(r.stderr, "");
  for (
    const word of [
      ...["tcp", "unix", "ports", "file", "glob", "exec", "process", "--timeout"],
      ...["--output", "Exit codes"],
    ]
  ) {
    assertStringIncludes(r.stdout, word);
  }
});

Deno.test("waitcmd help <kind> and <kind> --help show flags and examples", async () => {
  for (const args of [["help", "exec"], ["exec", "--help"]]) {
    const r = await runCli(args);
    assertEquals(r.code, 0);
    assertStringIncludes(r.stdout, "--output-contains TEXT");
    assertStringIncludes(r.stdout, "waitcmd exec -- pg_isready -h db");
  }
  const bad = await runCli(["help", "htp"]);
  assertEquals(bad.code, 2);
  assertStringIncludes(bad.stderr, "unknown kind");
});

Deno.test("waitcmd --version prints version, target and Deno version", async () => {
  const r = await runCli(["--version"]);
  assertEquals(r.code, 0);
  assertMatch(r.stdout, /^waitcmd \d+\.\d+\.\d+ \([\w-]+, deno \d+\.\d+\.\d+\)\n$/);
});

Deno.test("waitcmd completions prints a script for bash, zsh and fish", async () => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await runCli(["completions", shell]);
    assertEquals(r.code, 0);
    assertStringIncludes(r.stdout, "waitcmd");
    assertStringIncludes(r.stdout, "output-contains");
  }
  const bash = await runCli(["completions", "bash"]);
  const check = await new Deno.Command("bash", { args: ["-n", "-c", bash.stdout] }).output();
  assert(check.success, "the bash script parses");
});

Deno.test("waitcmd with a typo exits 2 with one line and a suggestion, before probing", async () => {
  const marker = `${HOSTNAME_FILE}.probed`;
  const r2 = await runCli([
    "exec",
    ...["--", "touch", marker],
    ...["--", "tcp", "localhost:1", "--stauts", "200"],
  ]);
  const line = usageErrorLine(r2);
  assertEquals(line, "waitcmd: condition 2 (tcp): unknown flag --stauts (see: waitcmd help tcp)");
  let probed = true;
  try {
    await Deno.stat(marker);
  } catch {
    probed = false;
  }
  assertEquals(probed, false, "nothing is probed when the command line is wrong");
  const r3 = await runCli(["--timeout", "1s", "tpc", "localhost:1"]);
  assertEquals(
    usageErrorLine(r3),
    `waitcmd: condition 1: unknown kind "tpc" (did you mean tcp?) (see: waitcmd --help)`,
  );
});

Deno.test("waitcmd text mode keeps stdout empty and writes header, lines and summary to stderr", async () => {
  const r = await runCli(["--timeout", "5s", "file", HOSTNAME_FILE]);
  assertEquals(r.code, 0);
  assertEquals(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  assertEquals(lines[0], "waitcmd: waiting for 1 condition (timeout 5s, interval 2s)");
  assertMatch(
    lines[1]!,
    new RegExp(`^\\[ok\\] file ${HOSTNAME_FILE} attempt 1 \\(\\d+\\.\\ds\\): exists \\(8 B\\)$`),
  );
  assertMatch(lines[2]!, /^waitcmd: satisfied in \d+\.\ds \(1\/1 conditions\)$/);
  assert(!r.stderr.includes("\x1b["), "no colour when not on a terminal");
});

Deno.test("waitcmd --quiet prints only the summary", async () => {
  const r = await runCli(["--quiet", ...timing("600ms", "100ms"), "file", `${HOSTNAME_FILE}.nope`]);
  assertEquals(r.code, 1);
  assertEquals(r.stderr.trimEnd().split("\n"), [
    `waitcmd: timed out after 600ms; not satisfied: file ${HOSTNAME_FILE}.nope: does not exist`,
  ]);
});

Deno.test("waitcmd --output json writes one report and nothing on stderr, for every outcome", async () => {
  const ok = await runJson(["--timeout", "5s", "file", HOSTNAME_FILE]);
  assertEquals([ok.code, ok.stderr, ok.json.status], [0, "", "satisfied"]);
  const to = await runJson([...timing("500ms", "100ms"), "file", `${HOSTNAME_FILE}.nope`]);
  assertEquals([to.code, to.stderr, to.json.status], [1, "", "timeout"]);
  assertEquals(to.json.conditions[0]!.satisfied, false);
  assertEquals(to.json.conditions[0]!.last_error, "does not exist");
  assert(to.json.conditions[0]!.attempts >= 2);
  const fatal = await runJson(["--timeout", "5s", "exec", "--", "waitcmd-no-such-command"]);
  assertEquals([fatal.code, fatal.stderr, fatal.json.status], [3, "", "fatal"]);
  for (const r of [ok, to, fatal]) {
    assertEquals(typeof r.json.elapsed_seconds, "number");
    for (const c of r.json.conditions) {
      assertEquals(Object.keys(c).sort(), [
        "attempts",
        "captures",
        "detail",
        "elapsed_seconds",
        "exhausted",
        "fatal",
        "guard",
        "hint",
        "kind",
        "last_error",
        "name",
        "satisfied",
        "target",
      ]);
    }
  }
});

Deno.test("waitcmd --output jsonl streams start, attempt, satisfied and end events", async () => {
  const r = await runCli(["--output", "jsonl", "--timeout", "5s", "file", HOSTNAME_FILE]);
  assertEquals(r.code, 0);
  assertEquals(r.stderr, "");
  const events = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assertEquals(events.map((e) => e.event), ["start", "attempt", "satisfied", "end"]);
  assertEquals(events[1].ok, true);
  assertEquals(events[3].status, "satisfied");
});

Deno.test("waitcmd --mode any is satisfied by one condition", async () => {
  const r = await runCli([
    ...["--mode", "any", "--timeout", "5s", "tcp", "127.0.0.1:1"],
    ...["--", "file", HOSTNAME_FILE],
  ]);
  assertEquals(r.code, 0);
  assertStringIncludes(r.stderr, "waiting for 2 conditions (timeout 5s, interval 2s, mode any)");
  assertMatch(
    r.stderr,
    new RegExp(`waitcmd: satisfied in \\d+\\.\\ds \\(mode any: file ${HOSTNAME_FILE}\\)`),
  );
});

Deno.test("waitcmd guard exits 3 at once and names the guard", async () => {
  const r = await expectJson([
    ...["--timeout", "30s", "tcp", "127.0.0.1:1"],
    ...["--", "guard", "file", HOSTNAME_FILE],
  ], { code: 3, status: "fatal" });
  assert(r.json.elapsed_seconds < 20, "did not wait for the timeout");
  assertEquals(r.json.conditions[1]!.guard, true);
  assertEquals(r.json.conditions[1]!.satisfied, true);
  const text = await runCli([
    ...["--timeout", "30s", "tcp", "127.0.0.1:1"],
    ...["--", "guard", "file", HOSTNAME_FILE],
  ]);
  assertEquals(text.code, 3);
  assertStringIncludes(text.stderr, `waitcmd: guard file ${HOSTNAME_FILE} matched: exists (8 B)`);
});

Deno.test("waitcmd text mode marks a guard's lines and counts guards apart, a group once", async () => {
  const guard = ["guard", "log", HOSTNAME_FILE, "--matches", "NEVER-THERE"];
  const pending = await runCli([...timing("1s", "300ms"), ...guard, "--", "tcp", "127.0.0.1:1"]);
  assertEquals(pending.code, 1);
  const lines = pending.stderr.trimEnd().split("\n");
  assertEquals(
    lines[0],
    "waitcmd: waiting for 1 condition and 1 guard (timeout 1s, interval 300ms)",
  );
  assert(
    lines.some((l) => l.startsWith(`[..] guard log ${HOSTNAME_FILE} attempt 1 (`)),
    pending.stderr,
  );
  assert(!lines.some((l) => l.startsWith(`[..] log `)), "no guard line looks like a condition's");
  // A satisfied `any` group is one member, whatever number of its own members held.
  const files = ["file", HOSTNAME_FILE];
  const group = [
    ...["any", "[", ...files, "--", ...files, "--", ...files, "--", "tcp", "127.0.0.1:1", "]"],
  ];
  const held = await runCli([...timing("10s", "300ms"), ...guard, "--", ...group]);
  assertEquals(held.code, 0, held.stderr);
  const out = held.stderr.trimEnd().split("\n");
  assertEquals(
    out[0],
    "waitcmd: waiting for 1 condition and 1 guard (timeout 10s, interval 300ms)",
  );
  assertMatch(out.at(-1)!, /^waitcmd: satisfied in \d+\.\ds \(1\/1 conditions\)$/);
});

Deno.test("waitcmd -- then runs the command after success and exits with its code", async () => {
  const r = await runCli([
    ...["--timeout", "5s", "file", HOSTNAME_FILE],
    ...["--", "then", "sh", "-c", "echo ran $1; exit 7", "sh", "arg"],
  ]);
  assertEquals(r.code, 7);
  assertEquals(r.stdout, "ran arg\n");
  const failed = await runCli([
    ...timing("300ms", "100ms"),
    ...["tcp", "127.0.0.1:1"],
    ...["--", "then", "sh", "-c", "echo ran"],
  ]);
  assertEquals(failed.code, 1);
  assertEquals(failed.stdout, "");
  const json = await runCli([
    ...["--output", "json", "--timeout", "5s", "file", HOSTNAME_FILE],
    ...["--", "then", "true"],
  ]);
  assertEquals(json.code, 0);
  assertEquals(JSON.parse(json.stdout).status, "satisfied");
});

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`waitcmd exits ${code} on ${signal}, reports cancelled and leaves no exec child`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-sig-" });
    const script = `echo $$ > ${dir}/leader; sleep 1000 & echo $! > ${dir}/child; wait`;
    const r = await runCli([
      ...["--output", "json", "--timeout", "60s", "exec"],
      ...["--", "sh", "-c", script],
    ], {
      started: async (child) => {
        await waitForFile(`${dir}/child`);
        child.kill(signal);
      },
    });
    assertEquals(r.code, code);
    assertEquals(r.json?.status, "cancelled");
    assertEquals(r.stderr, "");
    const leader = Number(await Deno.readTextFile(`${dir}/leader`));
    const grandchild = Number(await Deno.readTextFile(`${dir}/child`));
    assertEquals([alive(leader), alive(grandchild)], [false, false]);
    await Deno.remove(dir, { recursive: true });
  });
}

Deno.test("waitcmd text mode prints the cancelled summary on SIGINT", async () => {
  const r = await runCli(["--timeout", "60s", "--interval", "100ms", "tcp", "127.0.0.1:1"], {
    started: async (child) => {
      await new Promise((res) => setTimeout(res, 700));
      child.kill("SIGINT");
    },
  });
  assertEquals(r.code, 130);
  assertMatch(
    r.stderr,
    /waitcmd: cancelled by SIGINT after \d+\.\ds; not satisfied: tcp 127\.0\.0\.1:1\n$/,
  );
});

Deno.test("waitcmd -- then forwards signals to the command and exits with its code", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-then-" });
  const script =
    `trap 'echo got-term; exit 42' TERM; echo started > ${dir}/started; while :; do sleep 0.05; done`;
  const r = await runCli([
    ...["--timeout", "5s", "file", HOSTNAME_FILE],
    ...["--", "then", "sh", "-c", script],
  ], {
    started: async (child) => {
      await waitForFile(`${dir}/started`);
      child.kill("SIGTERM");
    },
  });
  await Deno.remove(dir, { recursive: true });
  assertEquals(r.code, 42);
  assertEquals(r.stdout, "got-term\n");
});

Deno.test("waitcmd on a terminal redraws a live view, then prints the final lines", async () => {
  const { raw: out } = await runOnTerminal([
    ...timing("1s", "200ms"),
    ...["tcp", "127.0.0.1:1"],
    ...["--", "file", HOSTNAME_FILE],
  ]);
  assertStringIncludes(out, "\x1b[2K"); // lines are redrawn in place
  assertStringIncludes(out, "\x1b[32m"); // colour on a terminal
  assertMatch(out, /\[\.\.\].*tcp 127\.0\.0\.1:1 attempt \d+ \(\d+\.\ds\): connection refused/);
  assertMatch(out, /\[ok\].*file .* attempt 1 \(\d+\.\ds\): exists/);
  assertStringIncludes(out, "not satisfied: tcp 127.0.0.1:1: connection refused");
});

Deno.test("waitcmd honours NO_COLOR and --no-color on a terminal", async () => {
  for (const [args, env] of [[["--no-color"], {}], [[], { NO_COLOR: "1" }]] as const) {
    const { raw: out } = await runOnTerminal([...args, "--timeout", "5s", "file", HOSTNAME_FILE], {
      env,
    });
    assert(!out.includes("\x1b[32m") && !out.includes("\x1b[33m"), "no colour codes");
    assertStringIncludes(out, "satisfied in");
  }
});
