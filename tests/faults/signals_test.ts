/**
 * Signals before and during the wait (docs/contract.md §3, docs/reliability.md):
 * every phase before the run (reading a recipe, validating a key, --explain)
 * answers SIGINT, SIGTERM and SIGQUIT at once, a FIFO nobody writes
 * included, and SIGQUIT during the run is a cancellation like SIGTERM
 * (summary, report, exit 131, no process left). Each test signals once waitcmd
 * is blocked where the test wants it (opening the FIFO, reading stdin), read
 * from /proc.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { cliTest, timing, WAITCMD } from "../e2e/_cli.ts";
import { blockedIn, groupsRunning, killGroups, spawnWaitcmd, until } from "./_proc.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** A temporary directory with a FIFO in it (`fifo`), removed by `close()`. */
async function fifoDir(): Promise<{ dir: string; fifo: string; close(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-sig-" });
  const fifo = `${dir}/fifo`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert(made.success, "mkfifo failed");
  return { dir, fifo, close: () => Deno.remove(dir, { recursive: true }) };
}

const BEFORE = (sig: string) => `waitcmd: cancelled by ${sig} before the wait started\n`;

cliTest(
  "signals: -f FIFO that nobody writes: refused before it is opened (exit 2), never waited on",
  async () => {
    const f = await fifoDir();
    try {
      const w = spawnWaitcmd(["--timeout", "60s", "-f", f.fifo]);
      const r = await w.ended();
      assert(!r.hung, `waitcmd waited on the FIFO: ${r.stderr}`);
      assertEquals([r.code, r.signal, r.stdout], [2, null, ""]);
      assertStringIncludes(r.stderr, "not a regular file (a named pipe)");
    } finally {
      await f.close();
    }
  },
);

cliTest(
  "signals: --explain -f - while stdin stays silent: SIGINT exits 130, nothing explained",
  async () => {
    const w = spawnWaitcmd(["--explain", "-f", "-"], { stdin: "piped" });
    await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
    w.child.kill("SIGINT");
    const r = await w.ended();
    await w.child.stdin.close().catch(() => {});
    assert(!r.hung, `waitcmd ignored SIGINT while reading the recipe: ${r.stderr}`);
    assertEquals([r.code, r.stdout, r.stderr], [130, "", BEFORE("SIGINT")]);
  },
);

// A named pipe is refused before it is opened (docs/contract.md §9); a pipe already open that
// stays silent (standard input, as /dev/stdin) is where a read can still wait.
for (
  const [flag, sig, code] of [["key", "SIGTERM", 143], ["trusted-root", "SIGINT", 130]] as const
) {
  Deno.test({
    name:
      `signals: cosign --${flag} /dev/stdin that stays silent (validated before the run): ${sig} exits ${code}`,
    ...opts,
    fn: async () => {
      const f = await fifoDir();
      try {
        await Deno.writeTextFile(`${f.dir}/blob`, "x");
        const words = flag === "key"
          ? ["--signature", `${f.dir}/blob`, "--key", "/dev/stdin"]
          : ["--bundle", `${f.dir}/blob`, "--trusted-root", "/dev/stdin"];
        const w = spawnWaitcmd(
          ["--timeout", "60s", "cosign", "--blob", `${f.dir}/blob`, ...words],
          {
            stdin: "piped",
          },
        );
        await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
        w.child.kill(sig);
        const r = await w.ended();
        await w.child.stdin.close().catch(() => {});
        assert(!r.hung, `waitcmd ignored ${sig} while reading --${flag}: ${r.stderr}`);
        assertEquals([r.code, r.stdout, r.stderr], [code, "", BEFORE(sig)]);
      } finally {
        await f.close();
      }
    },
  });
}

cliTest(
  "signals: --explain with a silent --key /dev/stdin: SIGQUIT exits 131, nothing explained",
  async () => {
    const f = await fifoDir();
    try {
      await Deno.writeTextFile(`${f.dir}/blob`, "x");
      const w = spawnWaitcmd([
        ...["--explain", "cosign", "--blob", `${f.dir}/blob`, "--signature", `${f.dir}/blob`],
        ...["--key", "/dev/stdin"],
      ], { stdin: "piped" });
      await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
      w.child.kill("SIGQUIT");
      const r = await w.ended();
      await w.child.stdin.close().catch(() => {});
      assert(!r.hung, `waitcmd ignored SIGQUIT: ${r.stderr}`);
      assertEquals([r.code, r.signal, r.stdout, r.stderr], [131, null, "", BEFORE("SIGQUIT")]);
    } finally {
      await f.close();
    }
  },
);

for (const input of ["-f /dev/zero", "-f - </dev/zero"]) {
  Deno.test({
    name: `signals: ${input} is a usage error at once (the 4 MiB cap), not gigabytes`,
    ...opts,
    fn: async () => {
      // Through a shell, for the redirection.
      const child = new Deno.Command("sh", {
        args: ["-c", `exec "$0" ${input} --timeout 5s`, WAITCMD],
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const out = await child.output();
      clearTimeout(guard);
      const stderr = new TextDecoder().decode(out.stderr);
      assertEquals(out.signal, null, "killed: the read was not bounded");
      assertEquals(out.code, 2);
      const path = input.endsWith("zero") && input.includes("<") ? "-" : "/dev/zero";
      assertEquals(
        stderr,
        `waitcmd: --config: cannot read ${path}: larger than 4 MiB (see: waitcmd --help)\n`,
      );
    },
  });
}

cliTest(
  "signals: SIGQUIT during the run: summary, report file, exit 131, no exec group left",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-quit-" });
    const marker = `waitcmd-quit-${crypto.randomUUID()}`;
    try {
      const w = spawnWaitcmd([
        ...timing("60s", "100ms"),
        ...["--report", `${dir}/report.json`, "tcp", "127.0.0.1:1"],
        ...["--", "exec"],
        ...["--", "sh", "-c", `echo started > ${dir}/started; sleep 1000; : ${marker}`],
      ]);
      await until(() => {
        try {
          return Deno.statSync(`${dir}/started`).isFile;
        } catch {
          return false;
        }
      }, "the exec command to start");
      w.child.kill("SIGQUIT");
      const r = await w.ended();
      assert(!r.hung, "waitcmd ignored SIGQUIT");
      assertEquals([r.code, r.signal], [131, null], r.stderr);
      assertStringIncludes(r.stderr, "waitcmd: cancelled by SIGQUIT after ");
      const report = JSON.parse(await Deno.readTextFile(`${dir}/report.json`));
      assertEquals(report.status, "cancelled");
      assertEquals([...groupsRunning(marker)], []);
    } finally {
      killGroups(groupsRunning(marker));
      await Deno.remove(dir, { recursive: true });
    }
  },
);

for (const end of ["deadline", "SIGTERM"] as const) {
  Deno.test({
    name:
      `signals: an http --ca-file /dev/stdin read at every attempt, silent: the ${end} still wins`,
    ...opts,
    fn: async () => {
      const f = await fifoDir();
      try {
        const w = spawnWaitcmd([
          "--timeout",
          end === "deadline" ? "2s" : "60s",
          "--interval",
          "100ms",
          "--output",
          "json",
          "http",
          "https://127.0.0.1:1/",
          "--ca-file",
          "/dev/stdin",
        ], { stdin: "piped" });
        await until(() => blockedIn(w.child.pid, "anon_pipe_read"), "the read of stdin");
        if (end === "SIGTERM") w.child.kill("SIGTERM");
        const r = await w.ended();
        await w.child.stdin.close().catch(() => {});
        assert(!r.hung, `waitcmd did not end at the ${end}: ${r.stderr}`);
        const report = JSON.parse(r.stdout);
        assertEquals(
          [r.code, report.status],
          end === "deadline" ? [1, "timeout"] : [143, "cancelled"],
        );
      } finally {
        await f.close();
      }
    },
  });
}

cliTest(
  "signals: --explain of a recipe of 30,000 conditions: SIGTERM while it is read, parsed or explained exits 143 promptly, nothing explained",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-big-" });
    try {
      const recipe = `${dir}/big.yaml`;
      const lines = ["conditions:"];
      for (let i = 0; i < 30_000; i++) lines.push(`  - {kind: file, target: /nonexistent/${i}}`);
      await Deno.writeTextFile(recipe, lines.join("\n") + "\n");
      const args = ["--explain", "-f", recipe];
      // How long the whole explanation takes on this machine, now: the signals fall inside it.
      const started = performance.now();
      const full = await spawnWaitcmd(args).ended(120_000);
      const whole = performance.now() - started;
      assertEquals(full.code, 0, full.stderr);
      const late: number[] = [];
      for (const at of [0.3, 0.55, 0.8]) {
        const w = spawnWaitcmd(args);
        await new Promise((r) => setTimeout(r, whole * at));
        const sent = performance.now();
        w.child.kill("SIGTERM");
        const r = await w.ended(120_000);
        late.push(Math.round(performance.now() - sent));
        assertEquals([r.code, r.stdout, r.stderr], [143, "", BEFORE("SIGTERM")], `at ${at}`);
      }
      // Answered at the next turn of the event loop: slices of 20 ms, and composing the YAML
      // document, the longest step without one (about 0.5 s on a quiet machine). Before, a
      // signal waited for the whole parse (seconds) or came after the explanation (exit 0).
      assert(
        Math.max(...late) < 3000,
        `answered ${late.join(", ")} ms late (whole: ${Math.round(whole)} ms)`,
      );
      console.log(
        `explain of 30,000 conditions: ${Math.round(whole)} ms; SIGTERM answered ${
          late.join(", ")
        } ms late`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
