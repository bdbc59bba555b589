/**
 * `--report FILE` under a hostile local user (docs/contract.md §7,
 * docs/reliability.md), run as root as the attack needs: a link at the
 * report's path is replaced and never written through, a link another user
 * planted is never followed even to a device, an existing file keeps its
 * mode, and what is not a regular file (a terminal-like link to stdout, a
 * FIFO, a full device) gets the report directly and stays what it was.
 * Devices are made in a temporary directory (mknod), never the real /dev.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { cliTest, runCli, WAITCMD } from "../e2e/_cli.ts";
import { ignoreWithout } from "../_kit.ts";
import { sh } from "./_proc.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const notRoot = Deno.uid() === 0 ? undefined : "these tests make devices and chown links (root)";
/** A condition that holds at once. */
const OK = ["file", "/"];

/** Runs `body` in a fresh directory that others can write to (like /tmp: sticky, 1777). */
async function inSharedDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-report-" });
  try {
    await Deno.chmod(dir, 0o1777);
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Whether `text` is a report of a satisfied run. */
function isReport(text: string): boolean {
  return (JSON.parse(text) as { status: string }).status === "satisfied";
}

/** A test run as root (ignored otherwise), in a shared directory of its own ({@link inSharedDir}). */
function rootTest(name: string, body: (dir: string) => Promise<void>): void {
  Deno.test({ name, ignore: ignoreWithout("root", notRoot), ...opts, fn: () => inSharedDir(body) });
}

/** `report.json` in `dir` is a regular file (not the link planted there) holding the report. */
async function assertReportFile(dir: string): Promise<void> {
  const info = await Deno.lstat(`${dir}/report.json`);
  assert(info.isFile && !info.isSymlink, "the planted link is still there, not the report");
  assert(isReport(await Deno.readTextFile(`${dir}/report.json`)));
}

rootTest(
  "report file: a link at the report's path is replaced, never written through",
  async (dir) => {
    await Deno.writeTextFile(`${dir}/victim`, "victim\n", { mode: 0o600 });
    await Deno.symlink(`${dir}/victim`, `${dir}/report.json`);
    const r = await runCli(["--report", `${dir}/report.json`, ...OK]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(await Deno.readTextFile(`${dir}/victim`), "victim\n");
    await assertReportFile(dir);
  },
);

rootTest(
  "report file: a link planted at the old temporary name (.waitcmd-report-PID.tmp) is unused",
  async (dir) => {
    await Deno.writeTextFile(`${dir}/victim`, "victim\n", { mode: 0o600 });
    const child = new Deno.Command(WAITCMD, {
      args: ["-o", "jsonl", "-i", "100ms", "--report", `${dir}/report.json`, "file", `${dir}/go`],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "null",
    }).spawn();
    // Once the wait is under way (its first attempt failed), the link is planted at the
    // name a predictable temporary file would have, and the wait is let go.
    let planted = false;
    for await (const line of child.stdout.pipeThrough(new TextDecoderStream())) {
      if (!planted && line.includes('"event":"attempt"')) {
        planted = true;
        await sh(`ln -s '${dir}/victim' '${dir}/.waitcmd-report-${child.pid}.tmp'`);
        await sh(`chown -h nobody '${dir}/.waitcmd-report-${child.pid}.tmp'`);
        await Deno.writeTextFile(`${dir}/go`, "");
      }
    }
    assertEquals((await child.status).code, 0);
    assert(planted, "no attempt event seen");
    assertEquals(await Deno.readTextFile(`${dir}/victim`), "victim\n");
    await assertReportFile(dir);
  },
);

rootTest(
  "report file: a link another user planted to a device is replaced, the device untouched",
  async (dir) => {
    // A FIFO stands for the device: written through, it would block or take the report.
    await sh(`mkfifo '${dir}/device' && ln -s '${dir}/device' '${dir}/report.json'`);
    await sh(`chown -h nobody '${dir}/report.json'`);
    const r = await runCli(["--report", `${dir}/report.json`, ...OK]);
    assertEquals([r.code, r.stderr.includes("--report")], [0, false], r.stderr);
    assert((await Deno.lstat(`${dir}/device`)).isFifo, "the FIFO was replaced");
    await assertReportFile(dir);
  },
);

for (const mode of [0o600, 0o640]) {
  Deno.test({
    name: `report file: an existing ${mode.toString(8)} report keeps its mode`,
    ...opts,
    fn: () =>
      inSharedDir(async (dir) => {
        const path = `${dir}/report.json`;
        await Deno.writeTextFile(path, "old\n");
        await Deno.chmod(path, mode);
        const r = await runCli(["--report", path, ...OK]);
        assertEquals(r.code, 0, r.stderr);
        assertEquals((await Deno.stat(path)).mode! & 0o777, mode);
        assert(isReport(await Deno.readTextFile(path)));
      }),
  });
}

cliTest(
  "report file: a link to stdout gets the report directly and stays a link",
  () =>
    inSharedDir(async (dir) => {
      // What /dev/stdout is, made where a broken test cannot harm the machine's /dev.
      await Deno.symlink("/proc/self/fd/1", `${dir}/stdout`);
      const r = await runCli(["--report", `${dir}/stdout`, ...OK]);
      assertEquals(r.code, 0, r.stderr);
      assert(isReport(r.stdout), `stdout: ${r.stdout}`);
      assert((await Deno.lstat(`${dir}/stdout`)).isSymlink, "the link was replaced");
    }),
);

cliTest(
  "report file: a FIFO gets the report directly and stays a FIFO",
  () =>
    inSharedDir(async (dir) => {
      const fifo = `${dir}/fifo`;
      await sh(`mkfifo '${fifo}'`);
      const reader = new Deno.Command("cat", { args: [fifo], stdout: "piped" }).spawn();
      const r = await runCli(["--report", fifo, ...OK]);
      const stillFifo = (await Deno.lstat(fifo)).isFifo;
      if (!stillFifo) reader.kill(); // nothing will ever open it for writing now
      const read = new TextDecoder().decode((await reader.output()).stdout);
      assert(stillFifo, "the FIFO was replaced");
      assertEquals(r.code, 0, r.stderr);
      assert(isReport(read), `the reader got: ${read}`);
    }),
);

rootTest(
  "report file: a full device says the error once, keeps the verdict's exit code",
  async (dir) => {
    const full = `${dir}/full`;
    await sh(`mknod '${full}' c 1 7 && chmod 666 '${full}'`); // /dev/full's numbers
    const r = await runCli(["--report", full, ...OK]);
    assertEquals(r.code, 0);
    const lines = r.stderr.trimEnd().split("\n").filter((l) => l.includes("--report"));
    assertEquals(lines.length, 1, r.stderr);
    assertStringIncludes(lines[0]!, `waitcmd: --report ${full}: `);
    assertStringIncludes(lines[0]!, "no space left on device");
    assert((await Deno.lstat(full)).isCharDevice, "the device was replaced");
  },
);
