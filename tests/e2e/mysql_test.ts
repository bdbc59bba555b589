/**
 * The mysql kind end to end against real MariaDB 10.11 servers (Debian's
 * package, throwaway instances from tests/services/mariadb.ts), for what is
 * mysql's own: --query with --expect and --min-rows, a table and a database
 * created late, pending states (NULL not yet expected, a missing column,
 * --tls on a plain server), a syntax error (fatal), and usage errors. A
 * server started late or restarted, a wrong password, a user created late,
 * --password-env and --password-file, the human line, the JSON report, the
 * password in no output and TLS (verified, unverified, untrusted,
 * misnamed) are the live conformance suite's
 * (tests/conformance/live_test.ts).
 */

import { assert, assertEquals } from "../_assert.ts";
import { serverTest } from "../_kit.ts";
import { makeMariadb, mariadbMissing, MY_PASSWORD } from "../services/mariadb.ts";
import { assertUsageErrors, runJson, runLate } from "./_cli.ts";
import { assertQueries, assertSyntaxErrorFatal } from "./_sql.ts";

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

Deno.test("mysql kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (mysql)";
  const see = "(see: waitcmd help mysql)";
  const form = "mysql://[user[:password]@]host[:port][/database]";
  const cases: [string[], string][] = [
    [["mysql", "db:3306"], `${where}: expected ${form}, got "db:3306" ${see}`],
    [
      ["mysql", "postgres://a:sEcr3t@db/x"],
      `${where}: expected ${form}, got "postgres://a:***@db/x" ${see}`,
    ],
    [
      ["mysql", "mysql://db/x?ssl=true"],
      `${where}: unsupported URL parameter "ssl" (TLS is set with --tls, --ca-file and --insecure) ${see}`,
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
    [["mysql", "mysql://db/x", "--insecure"], `${where}: --insecure: needs --tls ${see}`],
    [
      ["mysql", "mysql://db/x", "--tls", "--ca-file", ""],
      `${where}: --ca-file: expected a path, got an empty string ${see}`,
    ],
  ];
  await assertUsageErrors(cases, { exact: true, secrets: ["sEcr3t"] });
});
