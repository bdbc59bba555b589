import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { expectJson, runCli, runJson, timing, usageErrorLine } from "./_cli.ts";

Deno.test("exec retries a failing command and reports its exit status and last output line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-exec-" });
  try {
    const script =
      `n=$(cat ${dir}/n 2>/dev/null || echo 0); echo $((n+1)) > ${dir}/n; [ $n -ge 2 ] || { echo "not yet $n" >&2; exit 4; }`;
    const r = await expectJson([
      ...timing("10s", "100ms"),
      "exec",
      ...["--", "sh", "-c", script],
    ], { code: 0 });
    assertEquals(r.json.conditions[0]!.attempts, 3);
    assertEquals(r.json.conditions[0]!.last_error, "exit 4: not yet 1");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exec treats exit 3 of the command as an ordinary failure", async () => {
  const r = await runJson([...timing("400ms", "100ms"), "exec", "--", "sh", "-c", "exit 3"]);
  assertEquals([r.code, r.json.status, r.json.conditions[0]!.last_error], [1, "timeout", "exit 3"]);
});

Deno.test("exec --output-contains searches stdout and stderr", async () => {
  const ok = await runJson([
    ...["--timeout", "5s", "exec", "--output-contains", "healthy"],
    ...["--", "sh", "-c", "echo status: >&1; echo healthy >&2"],
  ]);
  assertEquals([ok.code, ok.json.conditions[0]!.detail], [0, `exit 0, output contains "healthy"`]);
  const no = await runJson([
    ...timing("300ms", "100ms"),
    ...["exec", "--output-contains", "healthy"],
    ...["--", "echo", "starting"],
  ]);
  assertEquals([no.code, no.json.conditions[0]!.last_error], [
    1,
    `exit 0, output does not contain "healthy"`,
  ]);
});

Deno.test("exec --exit-code expects another status", async () => {
  await expectJson([
    ...["--timeout", "5s", "exec", "--exit-code", "1"],
    ...["--", "sh", "-c", "exit 1"],
  ], { code: 0 });
  const bad = await runJson([
    ...timing("300ms", "100ms"),
    ...["exec", "--exit-code", "1"],
    ...["--", "true"],
  ]);
  assertEquals(bad.json.conditions[0]!.last_error, "exit 0, expected 1");
});

Deno.test("exec caps captured output and never blocks on a chatty command", async () => {
  // 8 MiB of output: the cap keeps 1 MiB, the rest is read and dropped.
  await expectJson([
    ...["--timeout", "20s", "exec", "--output-contains", "first"],
    ...["--", "sh", "-c", "echo first; head -c 8388608 /dev/zero"],
  ], { code: 0 });
});

Deno.test("exec of a missing command is fatal (exit 3)", async () => {
  const r = await expectJson([
    ...["--timeout", "10s", "exec"],
    ...["--", "waitcmd-no-such-command", "--flag"],
  ], { code: 3, status: "fatal", error: "command not found: waitcmd-no-such-command" });
  assertEquals(r.json.conditions[0]!.fatal, true);
  const plain = await Deno.makeTempFile({ prefix: "waitcmd-noexec-" });
  await Deno.chmod(plain, 0o644);
  const text = await runCli(["--timeout", "10s", "exec", "--", plain]);
  await Deno.remove(plain);
  assertEquals(text.code, 3);
  assertStringIncludes(
    text.stderr,
    `waitcmd: fatal: exec ${plain}: command is not executable: ${plain}`,
  );
});

Deno.test("exec --attempt-timeout kills the whole process group and retries", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-exec-" });
  try {
    const script = `sleep 1000 & echo $! >> ${dir}/pids; wait`;
    const r = await expectJson([
      ...timing("2s", "100ms", "300ms"),
      "exec",
      ...["--", "sh", "-c", script],
    ], { code: 1, error: "attempt timed out after 300ms" });
    assert(r.json.conditions[0]!.attempts >= 2);
    const pids = (await Deno.readTextFile(`${dir}/pids`)).trim().split("\n").map(Number);
    for (const pid of pids) {
      let running = true;
      try {
        const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
        running = !/\) [ZX] /.test(stat);
      } catch {
        running = false;
      }
      assertEquals(running, false, `sleep ${pid} was left running`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exec shows its command with its arguments, the credentials among them masked", async () => {
  const command = ["sh", "-c", "exit 1", "--password=topsecret-arg", "https://app:pw-in-url@db/"];
  const r = await runCli([...timing("300ms", "100ms"), "exec", "--", ...command]);
  assertEquals(r.code, 1);
  assert(!r.stderr.includes("topsecret-arg"), r.stderr);
  assert(!r.stderr.includes("pw-in-url"), r.stderr);
  const name = "exec sh -c 'exit 1' --password=*** https://app:***@db/";
  assertStringIncludes(r.stderr, `[..] ${name} attempt 1 (`);
  assertStringIncludes(r.stderr, `not satisfied: ${name}: exit 1`);
  const json = await runJson([...timing("300ms", "100ms"), "exec", "--", ...command]);
  assertEquals(json.json.conditions[0]!.name, name);
  assert(!json.stdout.includes("topsecret-arg") && !json.stdout.includes("pw-in-url"));
});

Deno.test("exec without a command is a usage error", async () => {
  assertStringIncludes(
    usageErrorLine(await runCli(["exec", "--output-contains", "x"])),
    "missing command",
  );
  assertStringIncludes(
    usageErrorLine(await runCli(["exec", "--exit-code", "-1", "--", "true"])),
    "--exit-code: expected a whole number from 0 to 255",
  );
});
