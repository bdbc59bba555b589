import { assertEquals } from "../../tests/_assert.ts";
import { assertKindUsageErrors, expectJson, runJson } from "../../tests/e2e/_cli.ts";
import { makeZombie } from "../../tests/services/_util.ts";

Deno.test("process --name finds a running executable, even past comm's 15 characters", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-proc-" });
  const name = `waitcmd-sleeper-${Math.random().toString(36).slice(2, 8)}`;
  await Deno.copyFile("/bin/sleep", `${dir}/${name}`);
  await Deno.chmod(`${dir}/${name}`, 0o755);
  const child = new Deno.Command(`${dir}/${name}`, { args: ["30"], stdout: "null", stderr: "null" })
    .spawn();
  try {
    const r = await expectJson(["--timeout", "5s", "process", "--name", name], { code: 0 });
    assertEquals(r.json.conditions[0]!.name, `process --name ${name}`);
    assertEquals(r.json.conditions[0]!.detail, `process ${name} running (pid ${child.pid})`);
    await expectJson(
      ["--timeout", "10s", "--interval", "100ms", "process", "--name", name, "--stopped"],
      { code: 0, error: `process ${name} still running (pid ${child.pid})` },
      {
        started: async () => {
          await new Promise((res) => setTimeout(res, 300));
          child.kill("SIGKILL");
        },
      },
    );
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("process --name past 15 characters is the full name, not comm's cut prefix", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-proc-" });
  // Run through a link: comm is the cut "a-very-long-pro", argv[0] the full name, exe "sleep".
  const name = "a-very-long-process-name-x";
  const other = "a-very-long-process-name-y";
  await Deno.symlink("/bin/sleep", `${dir}/${name}`);
  const child = new Deno.Command(`${dir}/${name}`, { args: ["30"], stdout: "null", stderr: "null" })
    .spawn();
  try {
    const found = await runJson(["--timeout", "5s", "process", "--name", name]);
    assertEquals(found.code, 0);
    assertEquals(found.json.conditions[0]!.detail, `process ${name} running (pid ${child.pid})`);
    const sibling = await runJson([
      "--timeout",
      "300ms",
      "--interval",
      "100ms",
      "process",
      "--name",
      other,
    ]);
    assertEquals([sibling.code, sibling.json.status], [1, "timeout"]);
    assertEquals(sibling.json.conditions[0]!.last_error, `process ${other} not running`);
    const siblingStopped = await runJson([
      "--timeout",
      "5s",
      "process",
      "--name",
      other,
      "--stopped",
    ]);
    assertEquals(siblingStopped.code, 0);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("process --pid counts a zombie as not running", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-proc-" });
  const { parent, zpid } = await makeZombie(`${dir}/z`);
  try {
    await expectJson([
      ...["--timeout", "300ms", "--interval", "100ms", "process", "--pid", String(zpid)],
    ], { code: 1, error: `process ${zpid} is a zombie` });
    await expectJson([
      ...["--timeout", "5s", "process", "--pid", String(zpid), "--stopped"],
    ], { code: 0 });
    await expectJson(["--timeout", "5s", "process", "--pid", String(parent.pid)], { code: 0 });
  } finally {
    parent.kill("SIGKILL");
    await parent.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("process requires exactly one selector", () =>
  assertKindUsageErrors("process", [
    [["process"], "--name: process needs --name NAME or --pid PID"],
    [["process", "--name", "a", "--pid", "2"], "--pid: cannot be combined with --name"],
    [
      ["process", "postgres"],
      'unexpected argument "postgres"; process takes no target, only flags',
    ],
  ]));
