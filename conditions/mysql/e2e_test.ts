/**
 * The mysql kind end to end against real MariaDB 10.11 servers (Debian's
 * package, throwaway instances from conditions/mysql/_service.ts), for what is
 * mysql's own: --query with --expect and --min-rows, a table and a database
 * created late, pending states (NULL not yet expected, a missing column,
 * --tls on a plain server), a syntax error (fatal), and usage errors. A
 * server started late or restarted, a wrong password, a user created late,
 * --password-env and --password-file, the human line, the JSON report, the
 * password in no output and TLS (verified, unverified, untrusted,
 * misnamed) are the live conformance suite's
 * (tests/conformance/live_test.ts). The targets the drivers take (mysql2's URL options, a Unix
 * socket, the Go driver's DSN, TLS from the target) run against the same servers.
 */

import { assert, assertEquals } from "../../tests/_assert.ts";
import { ignoreWithout, serverTest } from "../../tests/_kit.ts";
import { makePki } from "../../tests/services/tls.ts";
import { makeMariadb, mariadbMissing, MY_PASSWORD } from "./_service.ts";
import { assertUsageErrors, runCli, runJson, runLate } from "../../tests/e2e/_cli.ts";
import { assertQueries, assertSyntaxErrorFatal } from "../../tests/e2e/_sql.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const SHORT = ["--timeout", "1s", "--interval", "200ms"];
const SERVICE = { name: "MariaDB", missing: await mariadbMissing(), make: makeMariadb };

serverTest("mysql kind against a real MariaDB server", SERVICE, async (db, t) => {
  const url = db.url();
  const sql = { kind: "mysql", url, password: MY_PASSWORD };
  await t.step("--query with --expect and --min-rows (the alias mariadb)", async () => {
    await assertQueries(sql, {
      word: "mariadb",
      args: ["--query", "SELECT CURRENT_USER(), 2", "--expect", "app@%"],
      detail: 'query returned "app@%" as app@app',
    }, { word: "mysql", query: "SELECT 1; SELECT 'a' UNION SELECT 'b' UNION SELECT 'c'" });
  });

  await t.step(
    "pending: NULL not yet expected, a missing column (migrations not run), --tls on a plain server",
    async () => {
      const r = await runJson([
        ...SHORT,
        ...["mysql", url, "--query", "SELECT NULL", "--expect", "x"],
        ...["--", "mysql", url, "--query", "SELECT nope FROM information_schema.tables"],
        ...["--", "mysql", url, "--tls", "--insecure"],
      ]);
      assertEquals([r.code, r.json.status], [1, "timeout"]);
      assertEquals(r.json.conditions.map((c) => c.last_error), [
        'query returned NULL, expected "x"',
        "Unknown column 'nope' in 'SELECT'",
        "the server does not support TLS connections",
      ]);
      assert(r.json.conditions.every((c) => c.attempts >= 2), "retried while pending");
    },
  );

  await t.step("a table created late: a missing table is pending, then satisfied", async () => {
    const r = await runLate(
      [...FAST, "mysql", url, "--query", "SELECT state FROM status", "--expect", "ready"],
      () => db.sql("CREATE TABLE app.status (state text); INSERT INTO app.status VALUES ('ready')"),
    );
    assertEquals([r.code, r.stderr], [0, ""]);
    assertEquals(r.attempts[0]!.error, "Table 'app.status' doesn't exist");
    assertEquals(r.report.conditions[0]!.detail, 'query returned "ready" as app@app');
  });

  await t.step("a database created late", async () => {
    const d = await runLate(
      [...FAST, "mariadb", db.url("app", MY_PASSWORD, "lateapp")],
      () => db.sql("CREATE DATABASE lateapp; GRANT ALL ON lateapp.* TO 'app'@'%'"),
    );
    assertEquals(d.code, 0);
    assertEquals(
      d.attempts[0]!.error,
      "Access denied for user 'app'@'%' to database 'lateapp'",
    );
  });

  await t.step("an SQL syntax error is fatal at once (exit 3)", async () => {
    await assertSyntaxErrorFatal(
      sql,
      /^You have an error in your SQL syntax.*\(ER_PARSE_ERROR 1064\)$/,
      "You have an error",
    );
  });
});

/** waitcmd answers `sql` over `target` with `want` (its `--expect`), exit 0. */
async function assertAnswers(target: string, sql: string, want: string): Promise<void> {
  const r = await runJson([...FAST, "mysql", target, "--query", sql, "--expect", want]);
  const c = r.json.conditions[0]!;
  assertEquals([r.code, r.stderr], [0, ""], `waitcmd ${target}: ${c.last_error}`);
  assert(c.detail.startsWith(`query returned ${JSON.stringify(want)} as app@app`), c.detail);
  assert(!r.stdout.includes(MY_PASSWORD), r.stdout);
}

serverTest("mysql targets as the drivers take them", SERVICE, async (db, t) => {
  const pw = encodeURIComponent(MY_PASSWORD);
  const sock = `${db.dir}/mysqld.sock`;
  // Over the socket the server sees the client as localhost; over TCP as 127.0.0.1.
  const WHO = "SELECT CONCAT(USER(), ' ', DATABASE(), ' ', @@character_set_client)";
  await t.step("mysql2's options: charset, timezone, connectTimeout", async () => {
    await assertAnswers(
      `mysql://app:${pw}@127.0.0.1:${db.port}/app?charset=latin1`,
      WHO,
      "app@127.0.0.1 app latin1",
    );
    await assertAnswers(
      `mysql://app:${pw}@127.0.0.1:${db.port}/app?charset=utf8mb4&timezone=Z&connectTimeout=5000`,
      WHO,
      "app@127.0.0.1 app utf8mb4",
    );
  });

  await t.step("a Unix socket: socketPath, Prisma's socket, the Go DSN's unix(...)", async () => {
    for (
      const target of [
        `mysql://app:${pw}@localhost/app?socketPath=${sock}`,
        `mysql://app:${pw}@localhost/app?socket=${sock}`,
        `app:${MY_PASSWORD}@unix(${sock})/app`,
      ]
    ) await assertAnswers(target, WHO, "app@localhost app utf8mb4");
  });

  await t.step("the Go DSN wait4x passes: tcp(host:port) with its parameters", async () => {
    await assertAnswers(
      `app:${MY_PASSWORD}@tcp(127.0.0.1:${db.port})/app?charset=latin1&parseTime=true&timeout=5s`,
      WHO,
      "app@127.0.0.1 app latin1",
    );
  });

  await t.step("an unknown option: exit 2 naming it", async () => {
    const r = await runCli(["mysql", `mysql://app:${pw}@127.0.0.1:${db.port}/app?schema=x`]);
    assertEquals([r.code, r.stdout], [2, ""]);
    assert(r.stderr.includes('unknown URL parameter "schema"'), r.stderr);
    assert(!r.stderr.includes(MY_PASSWORD), r.stderr);
  });

  await t.step("a wrong password: the user named once", async () => {
    const r = await runJson([...SHORT, "mysql", `mysql://app:wrong-pw@127.0.0.1:${db.port}/app`]);
    assertEquals(r.code, 1);
    assertEquals(
      r.json.conditions[0]!.last_error,
      `authentication failed for user "app" from '127.0.0.1' (using password: YES)`,
    );
  });
});

Deno.test({
  name: "mysql TLS from the target: mysql2's ssl option, the Go DSN's tls",
  ignore: ignoreWithout(SERVICE.name, SERVICE.missing),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const pki = await makePki();
    const db = await makeMariadb({
      tls: { caFile: pki.ca.certFile, certFile: pki.server.certFile, keyFile: pki.server.keyFile },
    });
    try {
      const pw = encodeURIComponent(MY_PASSWORD);
      const base = `mysql://app:${pw}@127.0.0.1:${db.port}/app`;
      const cipher = "SELECT IF(VARIABLE_VALUE = '', 'plain', 'tls') FROM " +
        "information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'";
      for (
        const target of [
          `${base}?ssl={"rejectUnauthorized":false}`,
          // {} verifies the chain (mysql2's default), against --ca-file.
          `${base}?ssl={}&charset=utf8mb4`,
          `app:${MY_PASSWORD}@tcp(127.0.0.1:${db.port})/app?tls=skip-verify`,
          `app:${MY_PASSWORD}@tcp(127.0.0.1:${db.port})/app?tls=preferred`,
        ]
      ) {
        const ca = target.includes("ssl={}") ? ["--ca-file", pki.ca.certFile] : [];
        const r = await runJson([
          ...FAST,
          ...["mysql", target, "--query", cipher, "--expect", "tls", ...ca],
        ]);
        assertEquals([r.code, r.json.conditions[0]!.detail], [
          0,
          'query returned "tls" as app@app over TLS',
        ], `${target}: ${r.json.conditions[0]!.last_error}`);
      }
      // {} without the CA: the chain is not trusted, pending.
      const r = await runJson([...SHORT, "mysql", `${base}?ssl={}`]);
      assertEquals(r.code, 1);
      assert(
        r.json.conditions[0]!.last_error!.startsWith("certificate not trusted"),
        r.json.conditions[0]!.last_error,
      );
    } finally {
      await db.remove();
      await pki.cleanup();
    }
  },
});

Deno.test("mysql kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (mysql)";
  const see = "(see: waitcmd help mysql)";
  const form =
    "mysql://[user[:password]@]host[:port][/database][?option=value&...], or user:password@tcp(host:port)/database or user:password@unix(/path/mysqld.sock)/database";
  const cases: [string[], string][] = [
    [["mysql", "db:3306"], `${where}: expected ${form}, got "db:3306" ${see}`],
    [
      ["mysql", "postgres://a:sEcr3t@db/x"],
      `${where}: expected ${form}, got "postgres://a:***@db/x" ${see}`,
    ],
    [
      ["mysql", "mysql://db/x?ssl=true"],
      `${where}: ssl: expected a JSON object of TLS options (ssl={} or ssl={"rejectUnauthorized":false}) or an SSL profile of mysql2 (ssl=Amazon RDS), got true ${see}`,
    ],
    [
      ["mysql", "mysql://db/x?sslmode=REQUIRED"],
      `${where}: unknown URL parameter "sslmode" (mysql2 has no such connection option; see the mysql kind's README for the options) ${see}`,
    ],
    [
      ["mysql", "mysql://a:sEcr3t@db/x", "--password-file", "pw"],
      `${where}: --password-file: cannot be combined with a password in the URL ${see}`,
    ],
    [["mysql", "mysql://db/x", "--min-rows", "2"], `${where}: --min-rows: needs --query ${see}`],
    [
      ["mysql", "mysql://db/x", "--min-rows", "-1", "--query", "SELECT 1"],
      `${where}: --min-rows: expected a whole number of at least 0, got "-1" ${see}`,
    ],
    [
      ["mysql", "mysql://db/x", "--insecure"],
      `${where}: --insecure: needs --tls or ssl in the URL ${see}`,
    ],
    [
      ["mysql", "mysql://db/x", "--tls", "--ca-file", ""],
      `${where}: --ca-file: expected a path, got an empty string ${see}`,
    ],
  ];
  await assertUsageErrors(cases, { exact: true, secrets: ["sEcr3t"] });
});
