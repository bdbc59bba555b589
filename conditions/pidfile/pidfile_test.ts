import { assertEquals } from "../../tests/_assert.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { conditionOf, optionsOf, probeOf } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import type { PidfileOptions } from "./mod.ts";
import { judgeProcess, parsePidText, REUSE_SLACK_MS } from "./probe.ts";
import type { Proc } from "../_common/procs.ts";

Deno.test("pidfile parse() takes the path, the state and a name", () => {
  assertEquals(optionsOf<PidfileOptions>(["pidfile", "/run/a.pid"]), {
    path: "/run/a.pid",
    want: "running",
    name: undefined,
  });
  assertEquals(optionsOf<PidfileOptions>(["pidfile", "a.pid", "--stopped", "--name", "nginx"]), {
    path: "a.pid",
    want: "stopped",
    name: "nginx",
  });
  assertEquals(conditionOf(["pidfile", "/run/a.pid"]).name, "pidfile /run/a.pid");
});

Deno.test("pidfile parse() rejects contradictions", (t) => stepUsageErrors(t, "pidfile"));

Deno.test("parsePidText() reads the first line and refuses an empty or half-written file", () => {
  assertEquals(parsePidText("1234\n"), { pid: 1234 });
  assertEquals(parsePidText(" 42 "), { pid: 42 });
  assertEquals(parsePidText("1234\n/var/lib/postgresql\n1700000000\n"), { pid: 1234 });
  assertEquals(parsePidText(""), { error: "pid file is empty" });
  assertEquals(parsePidText("\n"), { error: "pid file is empty" });
  assertEquals(parsePidText("12a"), { error: 'pid file holds no pid: "12a"' });
  assertEquals(parsePidText("0\n"), { error: "pid file holds no valid pid: 0" });
});

Deno.test("judgeProcess() tells a live process from a zombie, a reused pid and another program", () => {
  const proc = (p: Partial<Proc>): Proc => ({
    pid: 7,
    state: "S",
    names: ["sleep", "sleep"],
    startedAt: 1_000_000,
    kernelThread: false,
    ...p,
  });
  const mtime = 1_000_500;
  assertEquals(judgeProcess(7, proc({}), mtime, undefined), {
    alive: true,
    text: "process 7 running (sleep)",
  });
  assertEquals(judgeProcess(7, undefined, mtime, undefined).text, "process 7 not running");
  assertEquals(
    judgeProcess(7, proc({ state: "Z" }), mtime, undefined).text,
    "process 7 is a zombie (sleep)",
  );
  assertEquals(
    judgeProcess(7, proc({ startedAt: mtime + REUSE_SLACK_MS + 1 }), mtime, undefined).text,
    "pid 7 was reused: sleep started after the pid file was written",
  );
  assertEquals(judgeProcess(7, proc({ startedAt: mtime + 1000 }), mtime, undefined).alive, true);
  assertEquals(judgeProcess(7, proc({}), mtime, "nginx").text, "process 7 is sleep, not nginx");
  assertEquals(judgeProcess(7, proc({}), mtime, "sleep").alive, true);
  // Mid-exec, comm still names the parent while the exe is already the program.
  assertEquals(
    judgeProcess(7, proc({ names: ["start-stop-daem", "sleep"] }), mtime, "sleep").text,
    "process 7 running (sleep)",
  );
  assertEquals(
    judgeProcess(2, proc({ pid: 2, names: ["kthreadd"], kernelThread: true }), mtime, undefined)
      .text,
    "pid 2 is a kernel thread (kthreadd)",
  );
});

Deno.test("pidfile's probe sees this very process running and a missing file stopped", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-pidfile-" });
  try {
    await Deno.writeTextFile(`${dir}/me.pid`, `${Deno.pid}\n`);
    const once = { signal: AbortSignal.timeout(5000), attempt: 1 };
    const r = await checkOnce(await probeOf(["pidfile", `${dir}/me.pid`]), once.signal);
    assertEquals(r.status, "satisfied");
    assertEquals(
      await checkOnce(await probeOf(["pidfile", `${dir}/none.pid`, "--stopped"]), once.signal),
      {
        status: "satisfied",
        detail: "pid file does not exist",
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
