/**
 * Redaction through the CLI (docs/contract.md §9) against real servers: a secret is masked
 * where it stands (a URL's password, a credential query value, a flag's or a variable's value,
 * the Basic credential an echoing server sends back) and waitcmd's own words never are, in
 * every output: text lines, `-o json`, `-o jsonl`, `--report`, the GitHub step summary,
 * `--explain` (text and JSON), and `then`'s words as displayed (the program gets them as
 * written). The CI defaults (postgres/postgres, mysql/mysql, guest/guest), a one-letter
 * password, a Redis password that is the start of the server's `WRONGPASS`, credential-looking
 * names that are not credentials (`authSource`), GitHub's legacy `##[` commands in a command's
 * output, and a text from outside that made the old URL pattern quadratic.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout, serverTest } from "../_kit.ts";
import { inTempDir } from "../services/_util.ts";
import { startHttpServer } from "../services/http_servers.ts";
import { makeMariadb, mariadbMissing } from "../../conditions/mysql/_service.ts";
import { makePostgres, postgresMissing } from "../../conditions/postgres/_service.ts";
import { rabbitmqMissing, startRabbitmq } from "../../conditions/rabbitmq/_service.ts";
import { makeRedis, redisMissing } from "../../conditions/redis/_service.ts";
import { runCli, timing } from "./_cli.ts";

/** A run inside GitHub Actions (the suite turns CI logs off for every other test). */
const GITHUB = { GITHUB_ACTIONS: "true", WAITCMD_CI: "" };
const FAST = timing("60s", "200ms");
const withDir = inTempDir("waitcmd-redact-");

/** The outputs `everyOutput` collects. */
type OutputName =
  | "text lines"
  | "-o json"
  | "-o jsonl"
  | "--report"
  | "step summary"
  | "--explain"
  | "--explain -o json";

/** Every output of one command line, and the JSON documents among them. */
interface Outputs {
  /** Output name → what it wrote. */
  readonly texts: Record<OutputName, string>;
  /** The exit codes of the runs that waited. */
  readonly codes: number[];
  /** The `-o json` report, the `--report` file, the `end` event of `-o jsonl`. */
  readonly reports: { conditions: { kind: string; name: string; target: string }[] }[];
}

/**
 * Runs `args` in every output mode: text lines in GitHub Actions with a step summary, `-o json`
 * with `--report`, `-o jsonl`, and `--explain` as text and as JSON.
 */
async function everyOutput(args: string[], dir: string, env: Record<string, string> = {}) {
  const summary = `${dir}/summary.md`;
  const report = `${dir}/report.json`;
  await Deno.writeTextFile(summary, "");
  const text = await runCli(args, { env: { ...env, ...GITHUB, GITHUB_STEP_SUMMARY: summary } });
  const json = await runCli(["-o", "json", "--report", report, ...args], { env });
  const jsonl = await runCli(["-o", "jsonl", ...args], { env });
  const explain = await runCli(["--explain", ...args], { env });
  const explainJson = await runCli(["--explain", "-o", "json", ...args], { env });
  const texts: Record<OutputName, string> = {
    "text lines": text.stderr,
    "-o json": json.stdout,
    "-o jsonl": jsonl.stdout,
    "--report": await Deno.readTextFile(report),
    "step summary": await Deno.readTextFile(summary),
    "--explain": explain.stdout,
    "--explain -o json": explainJson.stdout,
  };
  assertEquals([explain.code, explainJson.code], [0, 0], explain.stderr + explainJson.stderr);
  const end = jsonl.stdout.trim().split("\n").map((l) => JSON.parse(l)).at(-1);
  return {
    texts,
    codes: [text.code, json.code, jsonl.code],
    reports: [JSON.parse(json.stdout), JSON.parse(texts["--report"]), end],
  } as Outputs;
}

/**
 * Every output shows each of `shown` and none of `hidden`, and the reports name `kind` as the
 * kind of every condition.
 */
function assertRedacted(o: Outputs, kind: string, shown: string[], hidden: string[]): void {
  for (const [where, text] of Object.entries(o.texts)) {
    for (const s of shown) assertStringIncludes(text, s, `${where} shows ${s}`);
    for (const h of hidden) assert(!text.includes(h), `${where} shows ${h}:\n${text}`);
  }
  for (const r of o.reports) {
    for (const c of r.conditions) assertEquals(c.kind, kind);
  }
}

/** `sh` writing its arguments one a line to `file`: what `then` was given. */
function thenWrites(file: string, words: string[]): string[] {
  return ["--", "then", "sh", "-c", 'printf "%s\\n" "$@" > "$0"', file, ...words];
}

const PG = { name: "PostgreSQL", missing: await postgresMissing(), make: makePostgres };

serverTest(
  "postgres: the CI default postgres/postgres masks the password alone",
  PG,
  (pg) =>
    withDir(async (dir) => {
      await pg.psql("ALTER ROLE postgres PASSWORD 'postgres'");
      const url = pg.url("postgres", "postgres", "postgres");
      const shown = `postgres://postgres:***@127.0.0.1:${pg.port}/postgres`;
      const file = `${dir}/then-args`;
      const words = [url, "--token", "tok-9f3k2", "PGPASSWORD=postgres"];
      const o = await everyOutput([...FAST, "postgres", url, ...thenWrites(file, words)], dir);
      assertEquals(o.codes, [0, 0, 0], o.texts["text lines"]);
      assertRedacted(o, "postgres", [shown], [":postgres@", "tok-9f3k2", "=postgres"]);
      assertStringIncludes(o.texts["text lines"], `[ok] postgres ${shown} attempt 1`);
      assertStringIncludes(o.texts["step summary"], `| postgres ${shown} | satisfied |`);
      assertStringIncludes(o.texts["--explain"], `${shown} --token *** PGPASSWORD=***`);
      // The program gets its words as written.
      assertEquals(await Deno.readTextFile(file), words.join("\n") + "\n");
    }),
);

serverTest(
  "postgres: a one-letter password is masked where it stands, and only there",
  PG,
  (pg) =>
    withDir(async (dir) => {
      await pg.psql("ALTER ROLE app PASSWORD 'x'");
      const url = pg.url("app", "x", "app");
      const shown = `postgres://app:***@127.0.0.1:${pg.port}/app`;
      const file = `${dir}/then-args`;
      const words = ["--password=x", "--token", "y", url];
      const o = await everyOutput([...FAST, "postgres", url, ...thenWrites(file, words)], dir);
      assertEquals(o.codes, [0, 0, 0], o.texts["text lines"]);
      assertRedacted(o, "postgres", [shown], [":x@", "--password=x", "--token y"]);
      assertStringIncludes(o.texts["--explain"], `--password=*** --token *** ${shown}`);
      // The words around it keep their x's.
      assertStringIncludes(o.texts["text lines"], "waitcmd: satisfied in");
      assertEquals(await Deno.readTextFile(file), words.join("\n") + "\n");
    }),
);

const MY = { name: "MariaDB", missing: await mariadbMissing(), make: makeMariadb };

serverTest(
  "mysql: the CI default mysql/mysql masks the password alone",
  MY,
  (my) =>
    withDir(async (dir) => {
      await my.sql(
        "CREATE USER 'mysql'@'127.0.0.1' IDENTIFIED BY 'mysql'; " +
          "GRANT ALL ON *.* TO 'mysql'@'127.0.0.1';",
      );
      const url = my.url("mysql", "mysql", "mysql");
      const shown = `mysql://mysql:***@127.0.0.1:${my.port}/mysql`;
      const o = await everyOutput([...FAST, "mysql", url], dir);
      assertEquals(o.codes, [0, 0, 0], o.texts["text lines"]);
      assertRedacted(o, "mysql", [shown], [":mysql@"]);
      assertStringIncludes(o.texts["text lines"], `[ok] mysql ${shown} attempt 1`);
    }),
);

Deno.test({
  name: "amqp: the CI default guest/guest keeps the user and the kind",
  ignore: ignoreWithout("rabbitmq-server", await rabbitmqMissing()),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withDir(async (dir) => {
      const mq = await startRabbitmq();
      try {
        await mq.addUser("guest", "guest");
        const url = mq.url("guest", "guest");
        const shown = url.replace(":guest@", ":***@");
        const o = await everyOutput([...FAST, "amqp", url], dir);
        assertEquals(o.codes, [0, 0, 0], o.texts["text lines"]);
        assertRedacted(o, "rabbitmq", [shown, "amqp://guest:"], [":guest@"]);
      } finally {
        await mq.stop();
      }
    }),
});

const REDIS = { name: "Redis", missing: await redisMissing(), make: makeRedis };

serverTest(
  "redis: the password WRONG leaves the server's WRONGPASS whole",
  REDIS,
  (redis) =>
    withDir(async (dir) => {
      const url = redis.url("app", "WRONG");
      const shown = `redis://app:***@127.0.0.1:${redis.port}`;
      const o = await everyOutput([...timing("1s", "200ms"), "redis", url], dir);
      assertEquals(o.codes, [1, 1, 1], o.texts["text lines"]);
      const outside: OutputName[] = [
        "text lines",
        "-o json",
        "-o jsonl",
        "--report",
        "step summary",
      ];
      for (const where of outside) {
        assertStringIncludes(o.texts[where], "WRONGPASS", where);
      }
      assertRedacted(o, "redis", [shown], ["***PASS", ":WRONG@"]);
    }),
);

Deno.test("a usage error keeps the kind word and masks the URL's password where it stands", async () => {
  const url = "postgres://postgres:postgres@127.0.0.1:1/postgres";
  const r = await runCli(["postgres", url, "--bogus", "--", "then", "curl", "--token", "tok-42ab"]);
  assertEquals(r.code, 2);
  assertStringIncludes(r.stderr, "waitcmd: condition 1 (postgres): ");
  assert(!r.stderr.includes("***") || r.stderr.includes("postgres://postgres:***@"), r.stderr);
  const args = ["-t", "1s", "mysql", "mysql://mysql:mysql@127.0.0.1:1/mysql?bogus=1"];
  const my = await runCli(args);
  assertEquals(my.code, 2);
  assertStringIncludes(my.stderr, "condition 1 (mysql)");
  assert(!my.stderr.includes(":mysql@"), my.stderr);
});

Deno.test("mongodb --explain: authSource and authMechanism are not credential names", async () => {
  const query = "?authSource=admin&authMechanism=SCRAM-SHA-256";
  const url = `mongodb://app:pass-7Yh@127.0.0.1:1/app${query}`;
  for (const args of [["--explain"], ["--explain", "-o", "json"]]) {
    const r = await runCli([...args, "mongodb", url]);
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, `mongodb://app:***@127.0.0.1:1/app${query}`);
    assert(!r.stdout.includes("pass-7Yh"), r.stdout);
  }
  const json = JSON.parse((await runCli(["--explain", "-o", "json", "mongodb", url])).stdout);
  assertEquals(json.conditions[0].kind, "mongodb");
});

Deno.test({
  name:
    "http: the Basic credential an echoing server sends back is masked; a 131,000-byte password works",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const srv = startHttpServer();
    try {
      const url = `http://bob:pw-77-long@127.0.0.1:${srv.port}/echo`;
      const basic = btoa("bob:pw-77-long");
      const r = await runCli([
        ...["-o", "json", ...FAST, "http", url],
        ...["--matches", '"authorization":"Basic (?<cred>[^"]+)"'],
      ]);
      assertEquals(r.code, 0, r.stdout + r.stderr);
      const c = JSON.parse(r.stdout).conditions[0];
      assertEquals(c.captures.cred, "***");
      assertEquals(c.name, `http http://bob:***@127.0.0.1:${srv.port}/echo`);
      assert(!r.stdout.includes(basic) && !r.stdout.includes("pw-77-long"), r.stdout);
      // A password longer than a spread of its bytes can take: sent (the server refuses a
      // header that long), not an internal error.
      const long = await runCli(
        [
          ...["-o", "json", ...timing("1s", "10s"), "http", `http://127.0.0.1:${srv.port}/`],
          ...["--basic-auth-env", "u:PW"],
        ],
        { env: { PW: "p".repeat(131_000) } },
      );
      assertEquals([long.code, long.stderr], [1, ""]);
      assert(/^status \d+/.test(JSON.parse(long.stdout).conditions[0].last_error), long.stdout);
    } finally {
      await srv.stop();
    }
  },
});

Deno.test("GitHub Actions: a legacy ##[command] in a command's output is made inert", async () => {
  const r = await runCli(
    [...timing("1s", "10s"), "exec", "--", "sh", "-c", 'echo "##[error]forged ##[group]g"; exit 1'],
    { env: GITHUB },
  );
  assertEquals(r.code, 1);
  assertStringIncludes(r.stderr, "exit 1: ## [error]forged ## [group]g");
  assert(!r.stderr.includes("##["), r.stderr);
});

Deno.test("a text from outside with x:// and 100,000 letters costs no time and no signal's answer", async () => {
  const script = "printf 'x://'; head -c 100000 /dev/zero | tr '\\0' a; exit 1";
  const t0 = performance.now();
  const r = await runCli([...timing("3s", "1s"), "exec", "--", "sh", "-c", script]);
  const seconds = (performance.now() - t0) / 1000;
  assertEquals(r.code, 1);
  // The old URL pattern took 11.9 s here; the deadline is 3 s.
  assert(seconds < 6, `took ${seconds.toFixed(1)} s`);
});
