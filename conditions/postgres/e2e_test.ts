/**
 * The postgres kind end to end against real PostgreSQL 15 servers (Debian's
 * package, throwaway instances from conditions/postgres/_service.ts), for what is
 * postgres's own: --query with --expect and --min-rows, a table and a
 * database created late, pending states (a missing column, a value not yet
 * expected, no password, TLS asked of a plain server), a syntax error
 * (fatal), a standby promoted late, and usage errors. A server started late
 * or restarted, a wrong password, a user created late, --password-env and
 * --password-file, the human line, the JSON report, the password in no
 * output and TLS (verified, chain only, unverified, untrusted, misnamed) are
 * the live conformance suite's (tests/conformance/live_test.ts). The URL forms libpq takes
 * (socket directories, parameters, several hosts, TLS from the URL) are checked against psql,
 * the reference (DECISIONS §15).
 */

import { assert, assertEquals } from "../../tests/_assert.ts";
import { ignoreWithout, serverTest } from "../../tests/_kit.ts";
import { freePort } from "../../tests/services/_util.ts";
import { makePki } from "../../tests/services/tls.ts";
import { makePostgres, PG_BIN, PG_PASSWORD, postgresMissing } from "./_service.ts";
import { assertUsageErrors, runCli, runJson, runLate } from "../../tests/e2e/_cli.ts";
import { assertQueries, assertSyntaxErrorFatal } from "../../tests/e2e/_sql.ts";

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

/**
 * What psql itself answers to `sql` over `url` (libpq's reading of the URL: the oracle), or its
 * error when it refuses the URL. No PG* variable or password file reaches it.
 */
async function psqlSays(url: string, sql: string): Promise<{ ok: boolean; text: string }> {
  const out = await new Deno.Command(`${PG_BIN}/psql`, {
    args: [url, "-X", "-qAt", "-c", sql],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", PGCONNECT_TIMEOUT: "5" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.success ? out.stdout : out.stderr).trim();
  return { ok: out.success, text };
}

/**
 * A URL form libpq takes: psql runs `sql` over it, and waitcmd over the same URL must answer
 * the same text (`--expect` psql's answer), in the detail `SELECT ... as app@app`.
 */
async function assertSameAsPsql(url: string, sql: string, want: string, on = ""): Promise<void> {
  const psql = await psqlSays(url, sql);
  assertEquals([psql.ok, psql.text], [true, want], `psql ${url}`);
  const r = await runJson([...FAST, "postgres", url, "--query", sql, "--expect", psql.text]);
  assertEquals([r.code, r.stderr], [0, ""], `waitcmd ${url}: ${r.json.conditions[0]?.last_error}`);
  assertEquals(
    r.json.conditions[0]!.detail,
    `query returned ${JSON.stringify(want)} as app@app${on}`,
  );
}

serverTest("postgres URL forms as libpq takes them (psql the oracle)", SERVICE, async (pg, t) => {
  const WHO = "SELECT current_user || '@' || current_database() || ' ' || " +
    "coalesce(inet_server_port()::text, 'socket')";
  const pw = encodeURIComponent(PG_PASSWORD);
  const at = (q: string) => `postgres://app:${pw}@127.0.0.1:${pg.port}/app${q}`;
  await t.step(
    "a socket directory: host=/dir, and the directory percent-encoded as the host",
    async () => {
      await assertSameAsPsql(
        `postgres:///app?host=${pg.dir}&port=${pg.port}&user=app`,
        WHO,
        "app@app socket",
      );
      await assertSameAsPsql(
        `postgresql://app@${encodeURIComponent(pg.dir)}:${pg.port}/app`,
        WHO,
        "app@app socket",
      );
    },
  );

  await t.step("credentials and the database as query parameters", async () => {
    await assertSameAsPsql(
      `postgresql://127.0.0.1:${pg.port}/postgres?user=app&password=${pw}&dbname=app`,
      WHO,
      `app@app ${pg.port}`,
    );
  });

  await t.step(
    "sslmode=prefer (libpq's default) against a server without TLS: plain text",
    async () => {
      await assertSameAsPsql(at("?sslmode=prefer"), WHO, `app@app ${pg.port}`);
      // No sslmode is libpq's prefer too: TLS is tried, the plain connection taken.
      const r = await runJson([...FAST, "postgres", at("")]);
      assertEquals([r.code, r.json.conditions[0]!.detail], [0, "SELECT 1 answered as app@app"]);
    },
  );

  await t.step("application_name, connect_timeout and options reach the server", async () => {
    await assertSameAsPsql(
      at("?application_name=ci-job&connect_timeout=5"),
      "SELECT current_setting('application_name')",
      "ci-job",
    );
    await assertSameAsPsql(
      at("?options=-c%20search_path%3Dwaitcmd_s"),
      "SELECT current_setting('search_path')",
      "waitcmd_s",
    );
  });

  await t.step("several hosts: tried in order, the first that answers is taken", async () => {
    const dead = freePort();
    await assertSameAsPsql(
      `postgres://app:${pw}@127.0.0.1:${dead},127.0.0.1:${pg.port}/app?target_session_attrs=read-write`,
      WHO,
      `app@app ${pg.port}`,
      " on a read-write server",
    );
  });

  await t.step("an unknown parameter: exit 2 naming it (psql refuses it too)", async () => {
    const url = at("?schema=public");
    const psql = await psqlSays(url, "SELECT 1");
    assertEquals([psql.ok, psql.text.includes('invalid URI query parameter: "schema"')], [
      false,
      true,
    ], psql.text);
    const r = await runCli(["postgres", url]);
    assertEquals([r.code, r.stdout], [2, ""]);
    assert(r.stderr.includes('unknown URL parameter "schema"'), r.stderr);
    assert(!r.stderr.includes(PG_PASSWORD) && !r.stdout.includes(PG_PASSWORD), r.stderr);
  });

  await t.step(
    "libpq's keyword/value strings: TCP, a socket directory, quoted values; the password masked where it stands",
    async () => {
      const kv =
        `host=127.0.0.1 port=${pg.port} dbname=app user=app password=${PG_PASSWORD} sslmode=disable`;
      await assertSameAsPsql(kv, WHO, `app@app ${pg.port}`);
      await assertSameAsPsql(
        `host = ${pg.dir} port=${pg.port} dbname = app user=app`,
        WHO,
        "app@app socket",
      );
      await assertSameAsPsql(
        `host=127.0.0.1 port=${pg.port} dbname=app user=app password='${PG_PASSWORD}' application_name='ci job \\'7\\''`,
        "SELECT current_setting('application_name')",
        "ci job '7'",
      );
      const shown =
        `host=127.0.0.1 port=${pg.port} dbname=app user=app password=*** sslmode=disable`;
      const r = await runJson([...FAST, "postgres", kv]);
      assertEquals([r.code, r.json.conditions[0]!.name], [0, `postgres ${shown}`]);
      const text = await runCli([...FAST, "postgres", kv]);
      assertEquals(text.code, 0);
      assert(text.stderr.includes(shown), text.stderr);
      for (const out of [r.stdout, r.stderr, text.stdout, text.stderr]) {
        assert(!out.includes(PG_PASSWORD), out);
      }
    },
  );

  await t.step(
    "keyword/value: an unknown keyword is exit 2 naming it (psql refuses it too)",
    async () => {
      const kv =
        `host=127.0.0.1 port=${pg.port} dbname=app user=app password=${PG_PASSWORD} schema=public`;
      const psql = await psqlSays(kv, "SELECT 1");
      assertEquals([psql.ok, psql.text.includes('invalid connection option "schema"')], [
        false,
        true,
      ], psql.text);
      const r = await runCli(["postgres", kv]);
      assertEquals([r.code, r.stdout], [2, ""]);
      assert(r.stderr.includes('unknown keyword "schema"'), r.stderr);
      assert(!r.stderr.includes(PG_PASSWORD), r.stderr);
    },
  );

  await t.step("a wrong password: the server's text, once", async () => {
    const r = await runJson([
      ...SHORT,
      "postgres",
      `postgres://app:wrong-pw@127.0.0.1:${pg.port}/app`,
    ]);
    assertEquals(r.code, 1);
    assertEquals(r.json.conditions[0]!.last_error, 'password authentication failed for user "app"');
  });
});

Deno.test({
  name: "postgres URL TLS as libpq: no sslmode is prefer, sslrootcert is the CA file",
  ignore: ignoreWithout(SERVICE.name, SERVICE.missing),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const pki = await makePki();
    const pg = await makePostgres({
      tls: { certFile: pki.server.certFile, keyFile: pki.server.keyFile },
    });
    try {
      const pw = encodeURIComponent(PG_PASSWORD);
      const byName = `postgres://app:${pw}@localhost:${pg.port}/app`;
      // psql takes these forms too (PGSSLMODE unset: libpq's default prefer).
      for (
        const url of [
          `postgres://app:${pw}@127.0.0.1:${pg.port}/app`,
          `${byName}?sslmode=verify-full&sslrootcert=${pki.ca.certFile}`,
        ]
      ) {
        const psql = await psqlSays(
          url,
          "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        );
        assertEquals([psql.ok, psql.text], [true, "t"], `psql ${url}`);
        const r = await runJson([...FAST, "postgres", url]);
        assertEquals(
          [r.code, r.json.conditions[0]!.detail],
          [0, "SELECT 1 answered as app@app over TLS"],
          url,
        );
      }
      // Another CA in sslrootcert: not trusted, pending, naming the parameter's file nowhere.
      const other = await makePki();
      try {
        const r = await runJson([
          ...SHORT,
          "postgres",
          `${byName}?sslmode=verify-full&sslrootcert=${other.ca.certFile}`,
        ]);
        assertEquals(r.code, 1);
        assert(
          r.json.conditions[0]!.last_error!.startsWith("certificate not trusted"),
          r.json.conditions[0]!.last_error,
        );
      } finally {
        await other.cleanup();
      }
      // A missing sslrootcert file is pending (it may be written late), naming the parameter.
      const missing = await runJson([
        ...SHORT,
        "postgres",
        `${byName}?sslmode=verify-full&sslrootcert=${pki.dir}/nope.pem`,
      ]);
      assertEquals(missing.code, 1);
      assert(
        missing.json.conditions[0]!.last_error!.startsWith(
          `cannot read sslrootcert=${pki.dir}/nope.pem`,
        ),
        missing.json.conditions[0]!.last_error,
      );
    } finally {
      await pg.remove();
      await pki.cleanup();
    }
  },
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
  const form =
    "postgres://[user[:password]@][host][:port][,host2[:port2]...][/database][?param=value&...] or 'host=... port=... dbname=... user=...' (libpq's keyword/value)";
  const cases: [string[], string][] = [
    [["postgres", "db:5432"], `${where}: expected ${form}, got "db:5432" ${see}`],
    [
      ["postgres", "mysql://a:sEcr3t@db/x"],
      `${where}: expected ${form}, got "mysql://a:***@db/x" ${see}`,
    ],
    [
      ["postgres", "postgres://db:99999/x"],
      `${where}: port must be from 1 to 65535, got "99999" ${see}`,
    ],
    [
      ["postgres", "postgres://db/x?sslmode=sometimes"],
      `${where}: sslmode: expected one of disable, allow, prefer, require, verify-ca, verify-full, no-verify, got "sometimes" ${see}`,
    ],
    [
      ["postgres", "postgres://db/x?schema=public"],
      `${where}: unknown URL parameter "schema" (neither libpq nor pg knows it; see the postgres kind's README for the parameters) ${see}`,
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
