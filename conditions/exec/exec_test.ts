import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, plan, usageError } from "../../tests/_kit.ts";
import { parseJsonPathExpr } from "../_common/jsonpath.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import type { ExecOptions } from "./mod.ts";
import { lastLine, OUTPUT_CAP, readOutput } from "./output.ts";

Deno.test("exec parse() reports usage errors at the condition and flag", async (t) => {
  await stepUsageErrors(t, "exec");
  await t.step("exec -- true -- exec", async () => {
    const line = await usageError(["exec", "--", "true", "--", "exec"]);
    // The grammar may add a hint after the message (missing command: where it goes).
    const ok = line.startsWith("waitcmd: condition 2 (exec): missing command") &&
      line.endsWith(" (see: waitcmd help exec)");
    assertEquals(ok, true, line);
  });
});

/** The options of a condition without --jsonpath, --cwd or --env. */
const NONE = { jsonpaths: [], cwd: undefined, env: [] };

Deno.test("exec parse() gives the command, its arguments and the expectations as options", async (t) => {
  const rows: [string[], ExecOptions][] = [
    [
      ["exec", "--", "pg_isready", "-h", "db"],
      {
        ...NONE,
        command: "pg_isready",
        args: ["-h", "db"],
        exitCode: 0,
        outputContains: undefined,
      },
    ],
    [
      ["exec", "--exit-code", "1", "--", "grep", "-q", "lock", "/etc/state"],
      {
        ...NONE,
        command: "grep",
        args: ["-q", "lock", "/etc/state"],
        exitCode: 1,
        outputContains: undefined,
      },
    ],
    [
      ["exec", "--output-contains", "healthy", "--exit-code=0", "--", "curl", "-s", "http://x/"],
      {
        ...NONE,
        command: "curl",
        args: ["-s", "http://x/"],
        exitCode: 0,
        outputContains: "healthy",
      },
    ],
    // After the kind's own "--", words that look like flags belong to the command.
    [
      ["exec", "--", "sh", "-c", "exit 3", "--timeout", "1s"],
      {
        ...NONE,
        command: "sh",
        args: ["-c", "exit 3", "--timeout", "1s"],
        exitCode: 0,
        outputContains: undefined,
      },
    ],
    [["exec", "--", "true"], {
      ...NONE,
      command: "true",
      args: [],
      exitCode: 0,
      outputContains: undefined,
    }],
  ];
  rows.push([
    [
      ...["exec", "--cwd", "/srv/app", "--env", "A=1", "--env", "PGPASSWORD=pw=x", "--env", "B="],
      ...["--jsonpath", "$.ok", "--", "./check"],
    ],
    {
      ...NONE,
      command: "./check",
      args: [],
      exitCode: 0,
      outputContains: undefined,
      cwd: "/srv/app",
      env: [["A", "1"], ["PGPASSWORD", "pw=x"], ["B", ""]],
      jsonpaths: [parseJsonPathExpr("$.ok")],
    },
  ]);
  for (const [args, options] of rows) {
    await t.step(args.join(" "), () => assertEquals(optionsOf<ExecOptions>(args), options));
  }
});

Deno.test("exec parse() makes a --env value secret when its name is a credential name", () => {
  const p = plan([
    ...["exec", "--env", "PGPASSWORD=pg-pw-1", "--env", "API_TOKEN=tok-2", "--env", "TOKENIZER=t3"],
    ...["--env", "aws_secret_access_key=k-4", "--", "true"],
  ]);
  for (const s of ["pg-pw-1", "tok-2", "k-4"]) assertEquals(p.secrets.includes(s), true, s);
  assertEquals(p.secrets.includes("t3"), false, "TOKENIZER is no credential name");
});

Deno.test("exec parse() shows the command with its arguments, quoted, credentials masked", () => {
  const c = conditionOf(["exec", "--", "sh", "-c", "exit 1", "--password=topsecret"]);
  assertEquals([c.name, c.target], [
    "exec sh -c 'exit 1' --password=***",
    "sh -c 'exit 1' --password=***",
  ]);
  const curl = conditionOf([
    ...["exec", "--", "curl", "-sf", "-u", "bob:hunter22", "https://app:pw1234@db/x?token=abcd"],
    ...["-H", "Authorization: Bearer t0ken9", "PGPASSWORD=s3cret"],
  ]);
  assertEquals(
    curl.target,
    "curl -sf -u bob:*** 'https://app:***@db/x?token=***' -H 'Authorization: ***' PGPASSWORD=***",
  );
  const mysql = conditionOf(["exec", "--", "mysqladmin", "ping", "-uroot", "-pHunter2x"]);
  assertEquals(mysql.target, "mysqladmin ping -uroot -p***");
  for (const secret of ["hunter22", "pw1234", "abcd", "t0ken9", "s3cret"]) {
    assertEquals(curl.name.includes(secret), false, secret);
  }
});

Deno.test("lastLine() keeps the last non-empty line, cut to 200 characters", () => {
  assertEquals(lastLine("first\nsecond\n\n  \n"), "second");
  assertEquals(lastLine("a\r\nb\r\n"), "b");
  assertEquals(lastLine(""), "");
  assertEquals(lastLine("x".repeat(300)), "x".repeat(199) + "…");
});

/** `sh -c script` with both output streams piped, as the exec probe runs a command. */
const spawnSh = (script: string) =>
  new Deno.Command("sh", {
    args: ["-c", script],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();

Deno.test("readOutput() keeps both streams, in the order they came", async () => {
  const child = spawnSh("echo out1; sleep 0.05; echo err1 >&2; sleep 0.05; echo out2");
  assertEquals(await readOutput(child), "out1\nerr1\nout2\n");
  await child.status;
});

Deno.test("readOutput() keeps at most OUTPUT_CAP bytes of a chatty command and reads it all", async () => {
  const child = spawnSh("echo first; head -c 3145728 /dev/zero; echo last >&2");
  const out = await readOutput(child);
  const status = await child.status;
  assertEquals(status.success, true);
  assertEquals(out.length, OUTPUT_CAP);
  assertEquals(out.startsWith("first\n"), true);
});
