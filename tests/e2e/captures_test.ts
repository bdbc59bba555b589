/**
 * Captures through the CLI (docs/contract.md §7): what `--matches` and
 * `--jsonpath` matched, in the JSON report and in `then`'s environment.
 * Targets are local: a log file written late and an HTTP server in this
 * process.
 */

import { assertEquals } from "../_assert.ts";
import { assertUsageErrors, cliTest, expectJson, logTest, runCli } from "./_cli.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Appends the lines to the log after `ms`. */
function writeLater(path: string, ms: number, ...lines: string[]): () => Promise<void> {
  return async () => {
    await new Promise((r) => setTimeout(r, ms));
    await Deno.writeTextFile(path, lines.map((l) => l + "\n").join(""), { append: true });
  };
}

logTest(
  "captures: a log line written late gives then its named groups, and the report every group",
  "starting\n",
  async (log, dir) => {
    const out = `${dir}/then.out`;
    const pattern = String.raw`listening on (?P<host>[\w.]+):(?<port>\d+)`;
    const r = await runCli(
      [
        ...["-t", "20s", "--report", `${dir}/report.json`, "log", log, "--matches", pattern],
        ...["--", "then", "sh"],
        ...[
          "-c",
          `printf '%s %s %s' "$WAITCMD_CAPTURE_HOST" "$WAITCMD_CAPTURE_PORT" "$WAITCMD_REPORT" > ${out}`,
        ],
      ],
      { started: writeLater(log, 500, "listening on 127.0.0.1:43567") },
    );
    assertEquals(r.code, 0, r.stderr);
    assertEquals(await Deno.readTextFile(out), `127.0.0.1 43567 ${dir}/report.json`);
    const report = JSON.parse(await Deno.readTextFile(`${dir}/report.json`));
    assertEquals(report.conditions[0].captures, {
      "1": "127.0.0.1",
      "2": "43567",
      host: "127.0.0.1",
      port: "43567",
    });
  },
);

Deno.test({
  name:
    "captures: http --matches and --jsonpath's value reach the report; numbered groups stay out of then",
  ...opts,
  fn: async () => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => Response.json({ version: "1.4.2", ready: true, url: "http://x/token=t0k" }),
    );
    try {
      const url = `http://127.0.0.1:${server.addr.port}/`;
      const matches = [
        "-t",
        "10s",
        "http",
        url,
        "--matches",
        String.raw`"version":"(\d+)\.(?P<minor>\d+)`,
      ];
      const r = await expectJson([
        ...matches,
        "--jsonpath",
        "$.version =~ /^1\\./",
      ], { code: 0 });
      assertEquals((r.json.conditions[0] as { captures?: unknown }).captures, {
        "1": "1",
        "2": "4",
        minor: "4",
        value: "1.4.2",
      });
      const env = await runCli([
        ...matches,
        "--",
        "then",
        "sh",
        "-c",
        `env | grep '^WAITCMD_CAPTURE_' | sort`,
      ]);
      assertEquals(env.code, 0);
      assertEquals(env.stdout, "WAITCMD_CAPTURE_MINOR=4\n");
    } finally {
      await server.shutdown();
    }
  },
});

logTest(
  "captures: a run that times out captures nothing ({}) and never runs then",
  "",
  async (log) => {
    const r = await expectJson(["-t", "600ms", "log", log, "--matches", "port (?P<port>\\d+)"], {
      code: 1,
      status: "timeout",
    });
    assertEquals((r.json.conditions[0] as { captures?: unknown }).captures, {});
  },
);

cliTest(
  "captures: names that would give then one variable twice are usage errors, before waiting",
  async () => {
    const rows: [string[], string][] = [
      [
        [
          ...["log", "/a.log", "--matches", "(?P<port>\\d+)"],
          ...["--", "log", "/b.log", "--matches", "(?<port>\\d+)"],
        ],
        `condition 2 (log): capture group "port" is also captured by condition 1 (log)`,
      ],
      [
        [
          ...["log", "/a.log", "--matches", "(?P<port>\\d+)"],
          ...["--", "log", "/b.log", "--matches", "(?<PORT>\\d+)"],
        ],
        `condition 2 (log): capture groups "PORT" and "port" (condition 1 (log)) both give then WAITCMD_CAPTURE_PORT`,
      ],
      [
        ["log", "/a.log", "--matches", "(?P<port>\\d+) (?P<Port>\\d+)"],
        `condition 1 (log): capture groups "Port" and "port" (this condition) both give then WAITCMD_CAPTURE_PORT`,
      ],
      [
        ["http", "http://h/", "--jsonpath", "$.v =~ /(?P<v>.+)/"],
        `named group "v" in /(?P<v>.+)/ is never captured`,
      ],
      [
        ["log", "/a.log", "--matches", "(?P<1bad>x)"],
        "condition 1 (log): --matches: invalid regular expression",
      ],
    ];
    await assertUsageErrors(rows);
  },
);

logTest(
  "captures: one that no environment can hold (a NUL byte, 200 KB, bytes that are not UTF-8) names its variable; the verdict stands, then is not started (exit 3)",
  "",
  async (log, dir) => {
    const ran = `${dir}/ran`;
    const enc = new TextEncoder();
    await Deno.writeFile(
      log,
      new Uint8Array([
        ...enc.encode(`v=a\0b\nbig=${"x".repeat(200_000)}\nu=a`),
        0xff,
        0xfe,
        ...enc.encode("b\n"),
      ]),
    );
    const rows: [string, string, string][] = [
      ["v=(?P<val>.+)", "WAITCMD_CAPTURE_VAL", "it holds a NUL byte"],
      [
        "u=(?P<utf>.+)",
        "WAITCMD_CAPTURE_UTF",
        "it holds bytes that are not UTF-8 (read as U+FFFD)",
      ],
      [
        "big=(?P<big>x+)",
        "WAITCMD_CAPTURE_BIG",
        "it is 200000 bytes long, more than an environment variable may hold",
      ],
    ];
    for (const [pattern, variable, why] of rows) {
      const r = await runCli([
        ...["-t", "10s", "--report", `${dir}/report.json`, "log", log, "--from-start"],
        ...["--matches", pattern, "--", "then", "touch", ran],
      ]);
      assertEquals(r.code, 3, r.stderr.slice(-500));
      const last = r.stderr.trimEnd().split("\n").at(-1)!;
      assertEquals(
        last.replace(
          /: it is 200000 bytes long.*/,
          ": it is 200000 bytes long, more than an environment variable may hold",
        ),
        `waitcmd: then: not started: ${variable}, the capture "${
          variable.slice("WAITCMD_CAPTURE_".length).toLowerCase()
        }" of condition 1 (log), cannot be an environment variable: ${why}`,
      );
      const report = JSON.parse(await Deno.readTextFile(`${dir}/report.json`));
      assertEquals(report.status, "satisfied");
      assertEquals(await Deno.stat(ran).then(() => true, () => false), false);
    }
  },
);

logTest(
  "captures: a UTF-8 capture reaches then byte for byte",
  "",
  async (log, dir) => {
    // é, a CJK character, an emoji, and U+FFFD's own neighbour U+FFFC: all valid UTF-8.
    await Deno.writeTextFile(log, "u=é中😀\uFFFC\n");
    const out = `${dir}/bytes`;
    const r = await runCli([
      ...["-t", "10s", "log", log, "--from-start", "--matches", "u=(?P<utf>.+)"],
      ...["--", "then", "sh", "-c", `printf %s "$WAITCMD_CAPTURE_UTF" > ${out}`],
    ]);
    assertEquals(r.code, 0, r.stderr.slice(-500));
    assertEquals(await Deno.readFile(out), new TextEncoder().encode("é中😀\uFFFC"));
  },
);
