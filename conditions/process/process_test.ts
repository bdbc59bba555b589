import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, usageError } from "../../tests/_kit.ts";
import type { ProcessOptions } from "./mod.ts";
import { hasName, type Proc, running } from "../_common/procs.ts";

Deno.test("process parse() reports usage errors at the condition and flag", async (t) => {
  const rows: [string[], string][] = [
    [
      ["process"],
      "waitcmd: condition 1 (process): --name: process needs --name NAME or --pid PID (see: waitcmd help process)",
    ],
    [
      ["process", "--running"],
      "waitcmd: condition 1 (process): --name: process needs --name NAME or --pid PID (see: waitcmd help process)",
    ],
    [
      ["process", "--name", "a", "--pid", "2"],
      "waitcmd: condition 1 (process): --pid: cannot be combined with --name (see: waitcmd help process)",
    ],
    [
      ["process", "--name", ""],
      "waitcmd: condition 1 (process): --name: expected a name, got an empty string (see: waitcmd help process)",
    ],
    [
      ["process", "--name", "pg", "--running", "--stopped"],
      "waitcmd: condition 1 (process): --stopped: cannot be combined with --running (see: waitcmd help process)",
    ],
    [
      ["tcp", "a:1", "--", "process", "--pid", "1", "--stopped", "--running"],
      "waitcmd: condition 2 (process): --stopped: cannot be combined with --running (see: waitcmd help process)",
    ],
  ];
  for (const [args, want] of rows) {
    await t.step(args.join(" "), async () => assertEquals(await usageError(args), want));
  }
  // The engine's own checks apply too: --pid is a whole number from 1, no target.
  assertEquals(
    await usageError(["process", "--pid", "0"]),
    'waitcmd: condition 1 (process): --pid: expected a whole number of at least 1, got "0" (see: waitcmd help process)',
  );
  assertEquals(
    await usageError(["process", "postgres"]),
    'waitcmd: condition 1 (process): unexpected argument "postgres"; process takes no target, only flags (see: waitcmd help process)',
  );
});

Deno.test("process parse() gives the selector and the state wanted as options", async (t) => {
  const rows: [string[], ProcessOptions, string][] = [
    [
      ["process", "--name", "postgres"],
      { by: "name", name: "postgres", want: "running" },
      "--name postgres",
    ],
    [
      ["process", "--name", "postgres", "--running"],
      { by: "name", name: "postgres", want: "running" },
      "--name postgres",
    ],
    [["process", "--pid", "42", "--stopped"], { by: "pid", pid: 42, want: "stopped" }, "--pid 42"],
    [["process", "--pid=7"], { by: "pid", pid: 7, want: "running" }, "--pid 7"],
    [
      ["process", "--name", "a very long executable name"],
      { by: "name", name: "a very long executable name", want: "running" },
      "--name a very long executable name",
    ],
  ];
  for (const [args, options, target] of rows) {
    await t.step(args.join(" "), () => {
      assertEquals(optionsOf<ProcessOptions>(args), options);
      assertEquals(conditionOf(args).target, target);
      assertEquals(conditionOf(args).name, `process ${target}`);
    });
  }
});

Deno.test("hasName() knows a process by any of its names, past comm's 15 characters", () => {
  const p: Proc = {
    pid: 1,
    names: ["waitcmd-sleeper", "waitcmd-sleeper-x1", "sleep"],
    state: "S",
    kernelThread: false,
  };
  assertEquals(hasName(p, "waitcmd-sleeper-x1"), true);
  assertEquals(hasName(p, "sleep"), true);
  assertEquals(hasName(p, "waitcmd-sleeper-zz"), true); // comm is cut: a longer name still matches
  assertEquals(hasName(p, "waitcmd"), false);
  assertEquals(
    hasName({ pid: 2, names: ["short"], state: "R", kernelThread: false }, "shorter"),
    false,
  );
});

Deno.test("running() counts zombies and dead processes as not running", () => {
  const st = (state: string): Proc => ({ pid: 1, names: ["x"], state, kernelThread: false });
  assertEquals(["R", "S", "D", "T", "I"].map((s) => running(st(s))), [
    true,
    true,
    true,
    true,
    true,
  ]);
  assertEquals(running(st("Z")), false);
  assertEquals(running(st("X")), false);
});
