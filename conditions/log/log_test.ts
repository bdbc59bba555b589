import { assert, assertEquals } from "../../tests/_assert.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { optionsOf, plan, probeOf } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import type { LogOptions } from "./mod.ts";

Deno.test("log parse() rejects what cannot match", (t) => stepUsageErrors(t, "log"));

Deno.test("log parse() accepts every flag and names the condition by its path", async () => {
  const args = [
    ...["log", "/var/log/app.log", "--contains", "job", "--matches", "done in \\d+ms"],
    ...["--exclude", "dry-run", "--exclude", "test", "--tail", "50", "--min-matches", "3"],
    ...["--exclude-matches", "^DEBUG\\b"],
  ];
  const c = plan(args).conditions[0]!;
  assertEquals([c.name, c.target], ["log /var/log/app.log", "/var/log/app.log"]);
  assertEquals(optionsOf<LogOptions>(args), {
    path: "/var/log/app.log",
    contains: "job",
    matches: "done in \\d+ms",
    jsonpaths: [],
    exclude: ["dry-run", "test"],
    excludeMatches: ["^DEBUG\\b"],
    startAt: { from: "tail", lines: 50, seen: null },
    required: 3,
  });
  const probe = await probeOf(args);
  assert(probe.watch !== undefined, "log conditions are event-driven");
  await probe.close?.();
});

Deno.test("log parse() options: where reading starts and the defaults", async (t) => {
  const rows: [string[], Partial<LogOptions>][] = [
    [
      ["--contains", "x"],
      { contains: "x", startAt: { from: "tail", lines: 0, seen: null }, required: 1 },
    ],
    [["--contains", "x", "--from-start"], { startAt: { from: "start" } }],
    [["--contains", "x", "--tail", "0"], { startAt: { from: "tail", lines: 0, seen: null } }],
    [["--matches", "^a+$"], { contains: undefined, matches: "^a+$", exclude: [] }],
  ];
  for (const [flags, want] of rows) {
    await t.step(flags.join(" "), () => {
      const got = optionsOf<LogOptions>(["log", "a.log", ...flags]);
      for (const [k, v] of Object.entries(want)) {
        assertEquals(got[k as keyof LogOptions], v, k);
      }
    });
  }
});

Deno.test("log check() reports progress as n/N and succeeds with the last line", () =>
  inTempDir("waitcmd-log-")(async (dir) => {
    const path = `${dir}/app.log`;
    await Deno.writeTextFile(path, "job 1 done\nother\n");
    const probe = await probeOf([
      ...["log", path, "--from-start", "--contains", "done", "--min-matches", "2"],
    ]);
    const signal = new AbortController().signal;
    try {
      assertEquals(await checkOnce(probe, signal, 1), {
        status: "pending",
        error: "1/2 matches",
      });
      await Deno.writeTextFile(path, "job 2 done\r\n", { append: true });
      assertEquals(await checkOnce(probe, signal, 2), {
        status: "satisfied",
        detail: "job 2 done",
        summary: "2/2 matches; last: job 2 done",
        captures: {},
      });
    } finally {
      await probe.close?.();
    }
    const missing = await probeOf(["log", `${dir}/none.log`, "--contains", "x"]);
    try {
      assertEquals(await checkOnce(missing, signal, 1), {
        status: "pending",
        error: "does not exist",
      });
    } finally {
      await missing.close?.();
    }
  }));

Deno.test("log check() captures the groups of --matches in the last matching line", () =>
  inTempDir("waitcmd-log-")(async (dir) => {
    const path = `${dir}/app.log`;
    await Deno.writeTextFile(path, "listening on port 4000\nlistening on port 43567 at 10.0.0.7\n");
    const probe = await probeOf([
      "log",
      path,
      "--from-start",
      "--matches",
      String.raw`port (?P<port>\d+)(?: at (?<host>[\d.]+))?`,
      "--min-matches",
      "2",
    ]);
    try {
      const r = await checkOnce(probe, new AbortController().signal, 1);
      assertEquals(r.status === "satisfied" && r.captures, {
        "1": "43567",
        "2": "10.0.0.7",
        port: "43567",
        host: "10.0.0.7",
      });
    } finally {
      await probe.close?.();
    }
  }));
