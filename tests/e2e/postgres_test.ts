/**
 * The postgres kind end to end against real PostgreSQL 15 servers (Debian's
 * package, throwaway instances from tests/services/postgres.ts): a ready
 * server, one started late, one restarted during the run, a password fixed
 * late, a user, database and table created late, a standby promoted late,
 * TLS, a syntax error (fatal), timeouts, usage errors, and the password in
 * no output.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { freePort } from "../services/_util.ts";
import { makePostgres, PG_PASSWORD, type Postgres, postgresMissing } from "../services/postgres.ts";
import { makePki } from "../services/tls.ts";
import { runCli, runJson, runJsonl, runLate, usageErrorLine } from "./_cli.ts";
import { assertSecretsAbsent } from "./_datastore.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const missing = await postgresMissing();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "postgres kind against a real PostgreSQL server",
  ignore: ignoreWithout("PostgreSQL", missing),
  ...opts,
  fn: async (t) => {
    const pg: Postgres = await makePostgres();
    const url = pg.url();
    const shown = url.replace(PG_PASSWORD, "***");
    try {
      await t.step("a ready server: text on stderr only, one attempt, exits at once", async () => {
        const t0 = performance.now();
        const r = await runCli([...FAST, "postgres", url]);
        const wall = performance.now() - t0;
        assertEquals([r.code, r.stdout], [0, ""]);
        assertMatch(
          r.stderr,
          new RegExp(
            `\\[ok\\] postgres ${
              escape(shown)
            } attempt 1 \\(\\d+\\.\\ds\\): SELECT 1 answered as app@app`,
          ),
        );
        assert(!r.stderr.includes(PG_PASSWORD), r.stderr);
        assert(wall < 5000, `a satisfied run took ${wall.toFixed(0)} ms`);
      });

      await t.step(
        "nothing of the driver outlives the verdict: a then command runs undisturbed",
        async () => {
          const r = await runCli([
            "-o",
            "json",
            ...FAST,
            "postgres",
            url,
            "--",
            "then",
            "sh",
            "-c",
            "sleep 1; echo then-done",
          ]);
          assertEquals([r.code, r.stderr], [0, ""]);
          assert(r.stdout.trimEnd().endsWith("then-done"), r.stdout);
          assertStringIncludes(r.stdout, '"status": "satisfied"');
        },
      );

      await t.step("JSON report with an alias; stderr stays empty", async () => {
        for (const word of ["pg", "postgresql"]) {
          const r = await runJson([...FAST, word, url]);
          assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"]);
          const c = r.json.conditions[0]!;
          assertEquals([c.name, c.kind, c.target], [`${word} ${shown}`, "postgres", shown]);
          assertEquals([c.detail, c.last_error, c.attempts], [
            "SELECT 1 answered as app@app",
            "",
            1,
          ]);
        }
      });

      await t.step("--query with --expect and --min-rows, --primary on a primary", async () => {
        const e = await runJson([
          ...FAST,
          "postgres",
          url,
          "--query",
          "SELECT current_user, 2",
          "--expect",
          "app",
          "--primary",
        ]);
        assertEquals([e.code, e.stderr], [0, ""]);
        assertEquals(e.json.conditions[0]!.detail, 'query returned "app" as app@app on a primary');
        const m = await runJson([
          ...FAST,
          "postgres",
          url,
          "--query",
          "SELECT 1; SELECT * FROM generate_series(1, 3)",
          "--min-rows",
          "3",
        ]);
        assertEquals(m.code, 0);
        assertEquals(m.json.conditions[0]!.detail, "query returned 3 rows (at least 3) as app@app");
        const b = await runJson([
          "--timeout",
          "1s",
          "--interval",
          "200ms",
          "postgres",
          url,
          "--query",
          "SELECT false, NULL",
          "--expect",
          "t",
        ]);
        assertEquals(b.code, 1);
        assertEquals(b.json.conditions[0]!.last_error, 'query returned "f", expected "t"');
      });

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

      await t.step("a wrong password, then the password fixed on the server", async () => {
        await pg.psql("CREATE ROLE fixme LOGIN PASSWORD 'old-pw-1'");
        const r = await runLate(
          [...FAST, "postgres", pg.url("fixme", "new-pw-2", "postgres")],
          () => pg.psql("ALTER ROLE fixme PASSWORD 'new-pw-2'"),
        );
        assertEquals(r.code, 0);
        assertEquals(
          r.attempts[0]!.error,
          'authentication failed for user "fixme": password authentication failed for user "fixme"',
        );
        assertEquals(r.report.conditions[0]!.last_error, r.attempts[0]!.error);
        assertEquals(r.report.conditions[0]!.detail, "SELECT 1 answered as fixme@postgres");
      });

      await t.step("a user and a database created late", async () => {
        const u = await runLate(
          [...FAST, "postgres", pg.url("late1", "late-pw-1", "postgres")],
          () => pg.psql("CREATE ROLE late1 LOGIN PASSWORD 'late-pw-1'"),
        );
        assertEquals(u.code, 0);
        assertStringIncludes(u.attempts[0]!.error, 'authentication failed for user "late1"');
        const d = await runLate(
          [...FAST, "pg", pg.url("app", PG_PASSWORD, "lateapp")],
          () => pg.psql("CREATE DATABASE lateapp OWNER app"),
        );
        assertEquals(d.code, 0);
        assertEquals(d.attempts[0]!.error, 'database "lateapp" does not exist');
      });

      await t.step("an SQL syntax error is fatal at once (exit 3)", async () => {
        const r = await runJson([...FAST, "postgres", url, "--query", "SELEC 1"]);
        assertEquals([r.code, r.stderr, r.json.status], [3, "", "fatal"]);
        const c = r.json.conditions[0]!;
        assertEquals([c.fatal, c.attempts], [true, 1]);
        assertEquals(c.last_error, 'syntax error at or near "SELEC" (SQLSTATE 42601)');
        const text = await runCli([...FAST, "postgres", url, "--query", "SELECT 1 +"]);
        assertEquals(text.code, 3);
        assertStringIncludes(text.stderr, `waitcmd: fatal: postgres ${shown}: syntax error`);
      });

      await t.step("a missing column stays pending (migrations not run yet)", async () => {
        const r = await runJson([
          "--timeout",
          "1s",
          "--interval",
          "200ms",
          "postgres",
          url,
          "--query",
          "SELECT nope FROM pg_class",
        ]);
        assertEquals([r.code, r.json.status], [1, "timeout"]);
        assertEquals(r.json.conditions[0]!.last_error, 'column "nope" does not exist');
        assert(r.json.conditions[0]!.attempts >= 2);
      });

      await t.step("timeout: a wrong password until the deadline, in text and JSON", async () => {
        const args = [
          "--timeout",
          "1s",
          "--interval",
          "200ms",
          "postgres",
          pg.url("app", "wrong-pw"),
        ];
        const r = await runJson(args);
        assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
        assertEquals(
          r.json.conditions[0]!.last_error,
          'authentication failed for user "app": password authentication failed for user "app"',
        );
        const text = await runCli(args);
        assertEquals(text.code, 1);
        assertStringIncludes(
          text.stderr,
          `waitcmd: timed out after 1s; not satisfied: postgres ${
            pg.url("app", "***")
          }: authentication failed for user "app"`,
        );
        assert(!text.stderr.includes("wrong-pw"));
      });

      await t.step("--password-env and --password-file (read at each attempt)", async () => {
        const bare = `postgres://app@127.0.0.1:${pg.port}/app`;
        const env = await runJson([...FAST, "postgres", bare, "--password-env", "PGPW"], {
          env: { PGPW: PG_PASSWORD },
        });
        assertEquals(env.code, 0);
        assertEquals(env.json.conditions[0]!.name, `postgres ${bare}`);
        const file = `${pg.dir}/pw-late.txt`;
        const f = await runLate(
          [...FAST, "postgres", bare, "--password-file", file],
          () => Deno.writeTextFile(file, `${PG_PASSWORD}\n`),
        );
        assertEquals(f.code, 0);
        assertEquals(
          f.attempts[0]!.error,
          `cannot read --password-file ${file}: no such file or directory`,
        );
        const none = await runJson(["--timeout", "1s", "postgres", bare]);
        assertEquals(
          none.json.conditions[0]!.last_error,
          'authentication failed for user "app": the server asks for a password and none was given',
        );
      });

      await t.step("a plain server: sslmode=prefer falls back, --tls stays pending", async () => {
        const prefer = await runJson([...FAST, "postgres", `${url}?sslmode=prefer`]);
        assertEquals(prefer.code, 0);
        const tls = await runJson(["--timeout", "1s", "postgres", url, "--tls"]);
        assertEquals(tls.code, 1);
        assertEquals(
          tls.json.conditions[0]!.last_error,
          "the server does not support TLS (SSL) connections",
        );
      });
    } finally {
      await pg.remove();
    }
  },
});

Deno.test({
  name: "postgres kind waits for a server started late and one restarted during the run",
  ignore: ignoreWithout("PostgreSQL", missing),
  ...opts,
  fn: async (t) => {
    await t.step("started several seconds into the run", async () => {
      const pg = await makePostgres({ start: false });
      try {
        let started = 0;
        const r = await runJsonl(
          ["--timeout", "60s", "--interval", "250ms", "postgres", pg.url()],
          {
            onAttempt: async (a) => {
              if (a.ok || started) return;
              started = performance.now();
              await sleep(3000);
              await pg.start();
            },
          },
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.attempts[0]!.error, "connection refused");
        assert(r.attempts.length >= 5, `only ${r.attempts.length} attempts`);
        assert(r.report.elapsed_seconds >= 3, `satisfied after ${r.report.elapsed_seconds} s`);
        assert(r.attempts.at(-1)!.ok);
      } finally {
        await pg.remove();
      }
    });

    await t.step("restarted during the run: refused while down, then satisfied", async () => {
      const pg = await makePostgres();
      try {
        let phase = "up";
        const r = await runJsonl(
          [
            "--timeout",
            "60s",
            "--interval",
            "200ms",
            "postgres",
            pg.url(),
            "--query",
            "SELECT count(*) FROM jobs",
            "--expect",
            "1",
          ],
          {
            onAttempt: async (a) => {
              if (phase === "up" && !a.ok) {
                phase = "stopping";
                await pg.stop();
                phase = "down";
              } else if (phase === "down" && a.error === "connection refused") {
                phase = "starting";
                await pg.start();
                await pg.psql("CREATE TABLE jobs (id int); INSERT INTO jobs VALUES (1)", "app");
                await pg.psql("GRANT SELECT ON jobs TO app", "app");
                phase = "restarted";
              }
            },
          },
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        const errors = r.attempts.filter((a) => !a.ok).map((a) => a.error);
        assertEquals(errors[0], 'relation "jobs" does not exist');
        assert(errors.includes("connection refused"), errors.join("\n"));
        assertEquals(phase, "restarted");
        assertEquals(r.report.conditions[0]!.detail, 'query returned "1" as app@app');
      } finally {
        await pg.remove();
      }
    });
  },
});

Deno.test({
  name: "postgres --primary waits for a standby to be promoted",
  ignore: ignoreWithout("PostgreSQL", missing),
  ...opts,
  fn: async () => {
    const pg = await makePostgres({ standby: true });
    try {
      const r = await runLate([...FAST, "postgres", pg.url(), "--primary"], () => pg.promote());
      assertEquals([r.code, r.stderr], [0, ""]);
      assertEquals(r.attempts[0]!.error, "the server is in recovery (a standby), not a primary");
      assertEquals(r.report.conditions[0]!.detail, "SELECT 1 answered as app@app on a primary");
    } finally {
      await pg.remove();
    }
  },
});

Deno.test({
  name:
    "postgres over TLS: verified by name, chain only, unverified; untrusted or misnamed pending",
  ignore: ignoreWithout("PostgreSQL", missing),
  ...opts,
  fn: async () => {
    // The certificate names localhost only, not 127.0.0.1.
    const pki = await makePki({ server: { dnsNames: ["localhost"], ips: [] } });
    const other = await makePki({});
    const pg = await makePostgres({
      tls: { certFile: pki.server.certFile, keyFile: pki.server.keyFile },
    });
    try {
      const byIp = (q = "") => `${pg.url()}${q}`;
      const byName = (q = "") => `postgres://app:${PG_PASSWORD}@localhost:${pg.port}/app${q}`;
      const ok: string[][] = [
        [byName(), "--tls", "--ca-file", pki.ca.certFile],
        [byName("?sslmode=verify-full"), "--ca-file", pki.ca.certFile],
        [byIp("?sslmode=verify-ca"), "--ca-file", pki.ca.certFile],
        [byIp("?sslmode=require")],
        [byIp("?sslmode=prefer")],
        [byIp(), "--tls", "--insecure"],
      ];
      for (const args of ok) {
        const r = await runJson([...FAST, "postgres", ...args]);
        assertEquals([r.code, r.stderr], [0, ""], args.join(" "));
        assertEquals(r.json.conditions[0]!.detail, "SELECT 1 answered as app@app over TLS");
      }
      const pending: [string[], string][] = [
        [[byIp(), "--tls", "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
        [
          [byName("?sslmode=verify-full"), "--ca-file", other.ca.certFile],
          "certificate not trusted (unable to verify the first certificate)",
        ],
        [
          [byName(), "--tls"],
          "certificate not trusted (unable to verify the first certificate)",
        ],
      ];
      for (const [args, error] of pending) {
        const r = await runJson(["--timeout", "1s", "--interval", "200ms", "postgres", ...args]);
        assertEquals([r.code, r.json.status], [1, "timeout"], args.join(" "));
        assertEquals(r.json.conditions[0]!.last_error, error);
        assert(r.json.conditions[0]!.attempts >= 2, "TLS failures are retried");
      }
    } finally {
      await pg.remove();
      await pki.cleanup();
      await other.cleanup();
    }
  },
});

Deno.test({
  name: "postgres: the password shows in no output mode, on any path",
  ignore: ignoreWithout("PostgreSQL", missing),
  ...opts,
  fn: async () => {
    const mark = "Zq9Pg/Mark:7";
    const pg = await makePostgres();
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-pg-secret-" });
    try {
      await pg.psql(`CREATE ROLE marked LOGIN PASSWORD '${mark}'`);
      await Deno.writeTextFile(`${dir}/pw`, `${mark}\n`);
      const inUrl = pg.url("marked", mark, "postgres");
      const bare = `postgres://marked@127.0.0.1:${pg.port}/postgres`;
      const three = (extra: string[] = []) => [
        "postgres",
        inUrl,
        ...extra,
        "--",
        "postgres",
        bare,
        "--password-env",
        "MARK_PW",
        ...extra,
        "--",
        "postgres",
        bare,
        "--password-file",
        `${dir}/pw`,
        ...extra,
      ];
      const wrongUrl = `postgres://app:${encodeURIComponent(mark)}@127.0.0.1:${pg.port}/app`;
      await assertSecretsAbsent(
        [
          { name: "success", args: ["-t", "20s", ...three()], codes: [0] },
          {
            name: "pending then timeout (missing table)",
            args: ["-t", "1s", "-i", "200ms", ...three(["--query", "SELECT * FROM nope"])],
            codes: [1],
          },
          {
            name: "authentication failed then timeout",
            args: ["-t", "1s", "-i", "200ms", "postgres", wrongUrl],
            codes: [1],
          },
          {
            name: "fatal (syntax error)",
            args: ["-t", "20s", ...three(["--query", "SELEC 1"])],
            codes: [3],
          },
          {
            name: "usage error",
            args: ["postgres", inUrl, "--expect", "x"],
            codes: [2],
          },
        ],
        [mark, encodeURIComponent(mark)],
        { MARK_PW: mark },
      );
    } finally {
      await pg.remove();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("postgres: a dead port is pending with connection refused, and times out", async () => {
  const port = freePort();
  const r = await runJson([
    "--timeout",
    "1s",
    "--interval",
    "200ms",
    "postgres",
    `postgres://app:pw-dead-1@localhost:${port}/app`,
  ]);
  assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
  assertEquals(r.json.conditions[0]!.last_error, "connection refused");
  assert(r.json.conditions[0]!.attempts >= 2);
  assert(!r.stdout.includes("pw-dead-1"));
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
      `${where}: the host is missing in "postgres://***@/x" ${see}`,
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
  await Promise.all(cases.map(async ([args, line]) => {
    const r = await runCli(args, { env: { PW: "env-pw-zq" } });
    assertEquals(usageErrorLine(r), line, args.join(" "));
    assert(!r.stderr.includes("sEcr3t") && !r.stderr.includes("env-pw-zq"), r.stderr);
  }));
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
