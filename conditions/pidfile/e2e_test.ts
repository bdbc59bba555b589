import { assert, assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { makeZombie, sh } from "../../tests/services/_util.ts";
import {
  assertKindUsageErrors,
  expectJson,
  runCli,
  runJson,
  runLate,
} from "../../tests/e2e/_cli.ts";

const FAST = ["--interval", "100ms"];

/** Starts `sleep 60` as a real daemon that writes its pid file (start-stop-daemon). */
async function startDaemon(pidfile: string): Promise<number> {
  await sh("start-stop-daemon", [
    ...["--start", "--background", "--make-pidfile", "--pidfile", pidfile, "--exec", "/bin/sleep"],
    ...["--", "60"],
  ]);
  const pid = Number((await Deno.readTextFile(pidfile)).trim());
  // start-stop-daemon may return before its child has exec'd sleep.
  for (let i = 0; i < 100; i++) {
    const comm = await Deno.readTextFile(`/proc/${pid}/comm`).catch(() => "");
    if (comm.trim() === "sleep") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return pid;
}

function kill(pid: number | undefined): void {
  if (!pid) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

Deno.test("pidfile is satisfied by a daemon's pid file, written late", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-pidfile-" });
  const pf = `${dir}/sleep.pid`;
  let pid: number | undefined;
  try {
    const r = await runLate(
      ["--timeout", "20s", ...FAST, "pidfile", pf, "--name", "sleep"],
      async () => (pid = await startDaemon(pf)),
    );
    assertEquals([r.code, r.report.status], [0, "satisfied"]);
    const c = r.report.conditions[0]!;
    assertEquals(c.name, `pidfile ${pf}`);
    // start-stop-daemon creates the pid file, then writes it, then its child execs sleep: an
    // attempt in between sees an empty file or the daemon's own name, which are pending too.
    assert(
      ["does not exist", "pid file is empty", `process ${pid} is start-stop-daem, not sleep`]
        .includes(c.last_error),
      `last error: ${c.last_error}`,
    );
    assertEquals(c.detail, `process ${pid} running (sleep)`);

    const now = await runCli(["--timeout", "5s", "pidfile", pf]);
    assertEquals(now.code, 0);
    assertStringIncludes(now.stderr, `[ok] pidfile ${pf} attempt 1 (`);
    assertStringIncludes(now.stderr, `: process ${pid} running (sleep)`);
    assertStringIncludes(now.stderr, "waitcmd: satisfied in");
  } finally {
    kill(pid);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pidfile --stopped waits for the daemon to stop, and holds for no file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-pidfile-" });
  const pf = `${dir}/sleep.pid`;
  let pid: number | undefined;
  try {
    const none = await runJson(["--timeout", "5s", "pidfile", pf, "--stopped"]);
    assertEquals([none.code, none.json.conditions[0]!.detail], [0, "pid file does not exist"]);
    pid = await startDaemon(pf);
    const r = await runLate(
      ["--timeout", "20s", ...FAST, "pidfile", pf, "--stopped"],
      () => sh("start-stop-daemon", ["--stop", "--pidfile", pf, "--retry", "5"]),
    );
    assertEquals(r.code, 0);
    const c = r.report.conditions[0]!;
    assertEquals(c.last_error, `process ${pid} still running (sleep)`);
    // The pid file is left behind: the process is gone (or a zombie until reaped).
    assert(/^process \d+ (not running|is a zombie \(sleep\))$/.test(c.detail), c.detail);
  } finally {
    kill(pid);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pidfile counts a zombie and a reused pid as not running", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-pidfile-" });
  const { parent, zpid } = await makeZombie(`${dir}/zombie.pid`);
  try {
    const z = await runJson(["--timeout", "400ms", ...FAST, "pidfile", `${dir}/zombie.pid`]);
    assertEquals([z.code, z.json.conditions[0]!.last_error], [
      1,
      `process ${zpid} is a zombie (sleep)`,
    ]);
    await expectJson(["--timeout", "5s", "pidfile", `${dir}/zombie.pid`, "--stopped"], { code: 0 });

    // A pid file written an hour ago naming a process that started just now: the pid was reused.
    await Deno.writeTextFile(`${dir}/old.pid`, `${parent.pid}\n`);
    await sh("touch", ["-d", "1 hour ago", `${dir}/old.pid`]);
    await expectJson(["--timeout", "400ms", ...FAST, "pidfile", `${dir}/old.pid`], {
      code: 1,
      error: `pid ${parent.pid} was reused: sleep started after the pid file was written`,
    });
    await expectJson(["--timeout", "5s", "pidfile", `${dir}/old.pid`, "--stopped"], { code: 0 });

    // Written now, the same pid is the file's process; another --name is not.
    await Deno.writeTextFile(`${dir}/new.pid`, `${parent.pid}\n`);
    assertEquals((await runJson(["--timeout", "5s", "pidfile", `${dir}/new.pid`])).code, 0);
    const other = await runJson([
      ...["--timeout", "400ms"],
      ...FAST,
      ...["pidfile", `${dir}/new.pid`, "--name", "nginx"],
    ]);
    assertEquals(other.json.conditions[0]!.last_error, `process ${parent.pid} is sleep, not nginx`);
  } finally {
    parent.kill("SIGKILL");
    await parent.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pidfile keeps an empty or half-written file pending, then times out", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-pidfile-" });
  try {
    await Deno.writeTextFile(`${dir}/a.pid`, "");
    for (const want of ["--running", "--stopped"]) {
      await expectJson(["--timeout", "400ms", ...FAST, "pidfile", `${dir}/a.pid`, want], {
        code: 1,
        status: "timeout",
        error: "pid file is empty",
      });
    }
    await Deno.writeTextFile(`${dir}/a.pid`, "12a");
    const half = await runCli(["--timeout", "400ms", ...FAST, "pidfile", `${dir}/a.pid`]);
    assertEquals([half.code, half.stdout], [1, ""]);
    assertStringIncludes(half.stderr, `[..] pidfile ${dir}/a.pid attempt 1 (`);
    assertStringIncludes(
      half.stderr,
      `waitcmd: timed out after 400ms; not satisfied: pidfile ${dir}/a.pid: pid file holds no pid: "12a"`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pidfile usage errors", () =>
  assertKindUsageErrors("pidfile", [
    [["pidfile"], "missing target PATH"],
    [
      ["pidfile", "a.pid", "--running", "--stopped"],
      "--stopped: cannot be combined with --running",
    ],
    [["pidfile", "a.pid", "--name", ""], "--name: expected a name, got an empty string"],
  ]));
