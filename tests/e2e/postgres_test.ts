/**
 * The postgres kind end to end against real PostgreSQL 15 servers (Debian's
 * package, throwaway instances from tests/services/postgres.ts), for what is
 * postgres's own: --query with --expect and --min-rows, a table and a
 * database created late, pending states (a missing column, a value not yet
 * expected, no password, TLS asked of a plain server), a syntax error
 * (fatal), a standby promoted late, and usage errors. A server started late
 * or restarted, a wrong password, a user created late, --password-env and
 * --password-file, the human line, the JSON report, the password in no
 * output and TLS (verified, chain only, unverified, untrusted, misnamed) are
 * the live conformance suite's (tests/conformance/live_test.ts).
 */

import { assert, assertEquals } from "../_assert.ts";
import { serverTest } from "../_kit.ts";
import { makePostgres, PG_PASSWORD, postgresMissing } from "../services/postgres.ts";
import { assertUsageErrors, runJson, runLate } from "./_cli.ts";
import { assertQueries, assertSyntaxErrorFatal } from "./_sql.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const SHORT = ["--timeout", "1s", "--interval", "200ms"];
const SERVICE = { name: "PostgreSQL", missing: await postgresMissing(), make: makePostgres };

serverTest("postgres kind against a real PostgreSQL server", SERVICE, async (pg, t) => {
  const url = pg.url();
  const sql = { kind: "postgres", url, password: PG_PASSWORD };
  await t.step("--query with --expect and --min-rows, --primary on a primary", async () => {
    await assertQueries(sql, {
      word: "pg",
      args: ["--query", "SELECT current_user, 2", "--expect", "app", "--primary"],
      detail: 'query returned "app" as app@app on a primary',
    }, { word: "postgresql", query: "SELECT 1; SELECT * FROM generate_series(1, 3)" });
  });

  await t.step(
    "pending: a value not yet expected, a missing column (migrations not run), no password, --tls on a plain server",
    async () => {
      const bare = `postgres://app@127.0.0.1:${pg.port}/app`;
      const r = await runJson([
        ...SHORT,
        ...["postgres", url, "--query", "SELECT false, NULL", "--expect", "t"],
        ...["--", "postgres", url, "--query", "SELECT nope FROM pg_class"],
        ...["--", "postgres", bare],
        ...["--", "postgres", url, "--tls"],
      ]);
      assertEquals([r.code, r.json.status], [1, "timeout"]);
      assertEquals(r.json.conditions.map((c) => c.last_error), [
        'query returned "f", expected "t"',
        'column "nope" does not exist',
        'authentication failed for user "app": the server asks for a password and none was given',
        "the server does not support TLS (SSL) connections",
      ]);
      assert(r.json.conditions.every((c) => c.attempts >= 2), "retried while pending");
      // sslmode=prefer falls back to a plain connection.
      const prefer = await runJson([...FAST, "postgres", `${url}?sslmode=prefer`]);
      assertEquals(prefer.code, 0);
    },
  );

  await t.step(
    "a table created late: missing relation is pending, then satisfied",
    async () => {
      const r = await runLate(
        [...FAST, "postgres", url, "--query", "SELECT state FROM status", "--expect", "ready"],
        async () => {
          await pg.psql(
            "CREATE TABLE status (state text); INSERT INTO status VALUES ('ready'); GRANT SELECT ON status TO app",
            "app",
          );
        },
      );
      assertEquals([r.code, r.stderr], [0, ""]);
      assertEquals(r.attempts[0]!.error, 'relation "status" does not exist');
      assertEquals(r.report.conditions[0]!.detail, 'query returned "ready" as app@app');
    },
  );

  await t.step("a database created late", async () => {
    const d = await runLate(
      [...FAST, "pg", pg.url("app", PG_PASSWORD, "lateapp")],
      () => pg.psql("CREATE DATABASE lateapp OWNER app"),
    );
    assertEquals(d.code, 0);
    assertEquals(d.attempts[0]!.error, 'database "lateapp" does not exist');
  });

  await t.step("an SQL syntax error is fatal at once (exit 3)", async () => {
    await assertSyntaxErrorFatal(
      sql,
      'syntax error at or near "SELEC" (SQLSTATE 42601)',
      "syntax error",
    );
  });
});

serverTest("postgres --primary waits for a standby to be promoted", {
  ...SERVICE,
  make: () => makePostgres({ standby: true }),
}, async (pg) => {
  const r = await runLate([...FAST, "postgres", pg.url(), "--primary"], () => pg.promote());
  assertEquals([r.code, r.stderr], [0, ""]);
  assertEquals(r.attempts[0]!.error, "the server is in recovery (a standby), not a primary");
  assertEquals(r.report.conditions[0]!.detail, "SELECT 1 answered as app@app on a primary");
});

Deno.test("postgres kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (postgres)";
  const see = "(see: waitcmd help postgres)";
  const form = "postgres://[user[:password]@]host[:port][/database][?sslmode=MODE]";
  const cases: [string[], string][] = [
    [["postgres", "db:5432"], `${where}: expected ${form}, got "db:5432" ${see}`],
    [
      ["postgres", "mysql://a:sEcr3t@db/x"],
      `${where}: expected ${form}, got "mysql://a:***@db/x" ${see}`,
    ],
    [
      ["postgres", "postgres://app@/x"],
      `${where}: the host is missing in "postgres://app@/x" ${see}`,
    ],
    [
      ["postgres", "postgres://db:99999/x"],
      `${where}: port must be from 1 to 65535, got "99999" ${see}`,
    ],
    [
      ["postgres", "postgres://db/x?sslmode=sometimes"],
      `${where}: sslmode: expected one of disable, allow, prefer, require, verify-ca, verify-full, got "sometimes" ${see}`,
    ],
    [
      ["postgres", "postgres://db/x?schema=public"],
      `${where}: unsupported URL parameter "schema" (supported: sslmode) ${see}`,
    ],
    [
      ["postgres", "postgres://a:sEcr3t@db/x", "--password-env", "PW"],
      `${where}: --password-env: cannot be combined with a password in the URL ${see}`,
    ],
    [
      ["postgres", "postgres://db/x", "--password-env", "UNSET_PW_VAR_ZQ"],
      `${where}: --password-env: environment variable UNSET_PW_VAR_ZQ is not set ${see}`,
    ],
    [
      ["postgres", "postgres://db/x", "--password-env", "PW", "--password-file", "f"],
      `${where}: --password-file: cannot be combined with --password-env ${see}`,
    ],
    [
      ["postgres", "postgres://db/x", "--expect", "1"],
      `${where}: --expect: needs --query ${see}`,
    ],
    [
      ["postgres", "postgres://db/x", "--query", "SELECT 1", "--expect", "1", "--min-rows", "1"],
      `${where}: --min-rows: cannot be combined with --expect ${see}`,
    ],
    [
      ["postgres", "postgres://db/x", "--query", " ; "],
      `${where}: --query: expected an SQL statement, got an empty one ${see}`,
    ],
    [
      ["postgres", "postgres://db/x", "--ca-file", "ca.pem"],
      `${where}: --ca-file: needs --tls or an sslmode other than disable ${see}`,
    ],
    [
      ["postgres", "postgres://db/x?sslmode=disable", "--tls"],
      `${where}: --tls: cannot be combined with sslmode=disable ${see}`,
    ],
    [
      ["postgres", "postgres://db/x?sslmode=verify-full", "--insecure"],
      `${where}: --insecure: cannot be combined with sslmode=verify-full ${see}`,
    ],
    [
      ["postgres", "postgres://db/x", "--tls", "--insecure", "--ca-file", "ca.pem"],
      `${where}: --insecure: cannot be combined with --ca-file ${see}`,
    ],
  ];
  await assertUsageErrors(cases, {
    exact: true,
    env: { PW: "env-pw-zq" },
    secrets: ["sEcr3t", "env-pw-zq"],
  });
});
