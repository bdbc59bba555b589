/**
 * The mysql kind end to end against real MariaDB 10.11 servers (Debian's
 * package, throwaway instances from tests/services/mariadb.ts): a ready
 * server, one started late, one restarted during the run, a password fixed
 * late, a user, database and table created late, TLS, a syntax error
 * (fatal), timeouts, usage errors, and the password in no output.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { freePort } from "../services/_util.ts";
import { makeMariadb, type Mariadb, mariadbMissing, MY_PASSWORD } from "../services/mariadb.ts";
import { makePki } from "../services/tls.ts";
import { runCli, runJson, runJsonl, runLate, usageErrorLine } from "./_cli.ts";
import { assertSecretsAbsent } from "./_datastore.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const missing = await mariadbMissing();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "mysql kind against a real MariaDB server",
  ignore: ignoreWithout("MariaDB", missing),
  ...opts,
  fn: async (t) => {
    const db: Mariadb = await makeMariadb();
    const url = db.url();
    const shown = url.replace(MY_PASSWORD, "***");
    try {
      await t.step("a ready server: text on stderr only, one attempt, exits at once", async () => {
        const t0 = performance.now();
        const r = await runCli([...FAST, "mysql", url]);
        const wall = performance.now() - t0;
        assertEquals([r.code, r.stdout], [0, ""]);
        assertMatch(
          r.stderr,
          new RegExp(
            `\\[ok\\] mysql ${
              escape(shown)
            } attempt 1 \\(\\d+\\.\\ds\\): SELECT 1 answered as app@app`,
          ),
        );
        assert(!r.stderr.includes(MY_PASSWORD), r.stderr);
        assert(wall < 5000, `a satisfied run took ${wall.toFixed(0)} ms`);
      });

      await t.step(
        "nothing of the driver outlives the verdict: a then command runs undisturbed",
        async () => {
          const r = await runCli([
            "-o",
            "json",
            ...FAST,
            "mysql",
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

      await t.step("JSON report with the alias mariadb; stderr stays empty", async () => {
        const r = await runJson([...FAST, "mariadb", url]);
        assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"]);
        const c = r.json.conditions[0]!;
        assertEquals([c.name, c.kind, c.target], [`mariadb ${shown}`, "mysql", shown]);
        assertEquals([c.detail, c.last_error, c.attempts], ["SELECT 1 answered as app@app", "", 1]);
      });

      await t.step("--query with --expect and --min-rows", async () => {
        const e = await runJson([
          ...FAST,
          "mysql",
          url,
          "--query",
          "SELECT CURRENT_USER(), 2",
          "--expect",
          "app@%",
        ]);
        assertEquals([e.code, e.stderr], [0, ""]);
        assertEquals(e.json.conditions[0]!.detail, 'query returned "app@%" as app@app');
        const m = await runJson([
          ...FAST,
          "mysql",
          url,
          "--query",
          "SELECT 1; SELECT 'a' UNION SELECT 'b' UNION SELECT 'c'",
          "--min-rows",
          "3",
        ]);
        assertEquals(m.code, 0);
        assertEquals(m.json.conditions[0]!.detail, "query returned 3 rows (at least 3) as app@app");
        const n = await runJson([
          "--timeout",
          "1s",
          "--interval",
          "200ms",
          "mysql",
          url,
          "--query",
          "SELECT NULL",
          "--expect",
          "x",
        ]);
        assertEquals(n.code, 1);
        assertEquals(n.json.conditions[0]!.last_error, 'query returned NULL, expected "x"');
      });

      await t.step("a table created late: a missing table is pending, then satisfied", async () => {
        const r = await runLate(
          [...FAST, "mysql", url, "--query", "SELECT state FROM status", "--expect", "ready"],
          () =>
            db.sql("CREATE TABLE app.status (state text); INSERT INTO app.status VALUES ('ready')"),
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.attempts[0]!.error, "Table 'app.status' doesn't exist");
        assertEquals(r.report.conditions[0]!.detail, 'query returned "ready" as app@app');
      });

      await t.step("a wrong password, then the password fixed on the server", async () => {
        await db.sql("CREATE USER 'fixme'@'%' IDENTIFIED BY 'old-pw-1'");
        const r = await runLate(
          [...FAST, "mysql", db.url("fixme", "new-pw-2", "")],
          () => db.sql("ALTER USER 'fixme'@'%' IDENTIFIED BY 'new-pw-2'"),
        );
        assertEquals(r.code, 0);
        assertEquals(
          r.attempts[0]!.error,
          `authentication failed for user "fixme": Access denied for user 'fixme'@'127.0.0.1' (using password: YES)`,
        );
        assertEquals(r.report.conditions[0]!.detail, "SELECT 1 answered as fixme");
      });

      await t.step("a user and a database created late", async () => {
        const u = await runLate(
          [...FAST, "mysql", db.url("late1", "late-pw-1", "")],
          () => db.sql("CREATE USER 'late1'@'%' IDENTIFIED BY 'late-pw-1'"),
        );
        assertEquals(u.code, 0);
        assertStringIncludes(u.attempts[0]!.error, 'authentication failed for user "late1"');
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
        const r = await runJson([...FAST, "mysql", url, "--query", "SELEC 1"]);
        assertEquals([r.code, r.stderr, r.json.status], [3, "", "fatal"]);
        const c = r.json.conditions[0]!;
        assertEquals([c.fatal, c.attempts], [true, 1]);
        assertMatch(
          c.last_error,
          /^You have an error in your SQL syntax.*\(ER_PARSE_ERROR 1064\)$/,
        );
        const text = await runCli([...FAST, "mysql", url, "--query", "SELECT 1 +"]);
        assertEquals(text.code, 3);
        assertStringIncludes(text.stderr, `waitcmd: fatal: mysql ${shown}: You have an error`);
      });

      await t.step("a missing column stays pending (migrations not run yet)", async () => {
        const r = await runJson([
          "--timeout",
          "1s",
          "--interval",
          "200ms",
          "mysql",
          url,
          "--query",
          "SELECT nope FROM information_schema.tables",
        ]);
        assertEquals([r.code, r.json.status], [1, "timeout"]);
        assertEquals(r.json.conditions[0]!.last_error, "Unknown column 'nope' in 'SELECT'");
        assert(r.json.conditions[0]!.attempts >= 2);
      });

      await t.step("timeout: a wrong password until the deadline, in text and JSON", async () => {
        const args = ["--timeout", "1s", "--interval", "200ms", "mysql", db.url("app", "wrong-pw")];
        const r = await runJson(args);
        assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
        assertStringIncludes(
          r.json.conditions[0]!.last_error,
          'authentication failed for user "app"',
        );
        const text = await runCli(args);
        assertEquals(text.code, 1);
        assertStringIncludes(
          text.stderr,
          `waitcmd: timed out after 1s; not satisfied: mysql ${
            db.url("app", "***")
          }: authentication failed for user "app"`,
        );
        assert(!text.stderr.includes("wrong-pw"));
      });

      await t.step("--password-env and --password-file (read at each attempt)", async () => {
        const bare = `mysql://app@127.0.0.1:${db.port}/app`;
        const env = await runJson([...FAST, "mysql", bare, "--password-env", "MYPW"], {
          env: { MYPW: MY_PASSWORD },
        });
        assertEquals(env.code, 0);
        assertEquals(env.json.conditions[0]!.name, `mysql ${bare}`);
        const file = `${db.dir}/pw-late.txt`;
        const f = await runLate(
          [...FAST, "mysql", bare, "--password-file", file],
          () => Deno.writeTextFile(file, `${MY_PASSWORD}\n`),
        );
        assertEquals(f.code, 0);
        assertEquals(
          f.attempts[0]!.error,
          `cannot read --password-file ${file}: no such file or directory`,
        );
      });

      await t.step("--tls against a server without TLS stays pending", async () => {
        const r = await runJson(["--timeout", "1s", "mysql", url, "--tls", "--insecure"]);
        assertEquals(r.code, 1);
        assertEquals(
          r.json.conditions[0]!.last_error,
          "the server does not support TLS connections",
        );
      });
    } finally {
      await db.remove();
    }
  },
});

Deno.test({
  name: "mysql kind waits for a server started late and one restarted during the run",
  ignore: ignoreWithout("MariaDB", missing),
  ...opts,
  fn: async (t) => {
    await t.step("started several seconds into the run", async () => {
      const db = await makeMariadb({ start: false });
      try {
        let started = false;
        const r = await runJsonl(
          ["--timeout", "60s", "--interval", "250ms", "mysql", db.url()],
          {
            onAttempt: async (a) => {
              if (a.ok || started) return;
              started = true;
              await sleep(3000);
              await db.start();
            },
          },
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.attempts[0]!.error, "connection refused");
        assert(r.attempts.length >= 5, `only ${r.attempts.length} attempts`);
        assert(r.report.elapsed_seconds >= 3, `satisfied after ${r.report.elapsed_seconds} s`);
      } finally {
        await db.remove();
      }
    });

    await t.step("restarted during the run: refused while down, then satisfied", async () => {
      const db = await makeMariadb();
      try {
        let phase = "up";
        const r = await runJsonl(
          [
            "--timeout",
            "60s",
            "--interval",
            "200ms",
            "mysql",
            db.url(),
            "--query",
            "SELECT count(*) FROM jobs",
            "--expect",
            "1",
          ],
          {
            onAttempt: async (a) => {
              if (phase === "up" && !a.ok) {
                phase = "stopping";
                await db.stop();
                phase = "down";
              } else if (phase === "down" && a.error === "connection refused") {
                phase = "starting";
                await db.start();
                await db.sql("CREATE TABLE app.jobs (id int); INSERT INTO app.jobs VALUES (1)");
                phase = "restarted";
              }
            },
          },
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        const errors = r.attempts.filter((a) => !a.ok).map((a) => a.error);
        assertEquals(errors[0], "Table 'app.jobs' doesn't exist");
        assert(errors.includes("connection refused"), errors.join("\n"));
        assertEquals(phase, "restarted");
      } finally {
        await db.remove();
      }
    });
  },
});

Deno.test({
  name: "mysql over TLS: verified by name, unverified; untrusted or misnamed pending",
  ignore: ignoreWithout("MariaDB", missing),
  ...opts,
  fn: async () => {
    // The certificate names localhost only, not 127.0.0.1.
    const pki = await makePki({ server: { dnsNames: ["localhost"], ips: [] } });
    const other = await makePki({});
    const db = await makeMariadb({
      tls: { caFile: pki.ca.certFile, certFile: pki.server.certFile, keyFile: pki.server.keyFile },
    });
    try {
      const byIp = db.url();
      const byName = `mysql://app:${MY_PASSWORD}@localhost:${db.port}/app`;
      for (
        const args of [
          [byName, "--tls", "--ca-file", pki.ca.certFile],
          [byIp, "--tls", "--insecure"],
        ]
      ) {
        const r = await runJson([...FAST, "mysql", ...args]);
        assertEquals([r.code, r.stderr], [0, ""], args.join(" "));
        assertEquals(r.json.conditions[0]!.detail, "SELECT 1 answered as app@app over TLS");
      }
      const pending: [string[], string][] = [
        [[byIp, "--tls", "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
        [
          [byName, "--tls", "--ca-file", other.ca.certFile],
          "certificate not trusted (unable to verify the first certificate)",
        ],
        [
          [byName, "--tls"],
          "certificate not trusted (self-signed certificate in certificate chain)",
        ],
      ];
      for (const [args, error] of pending) {
        const r = await runJson(["--timeout", "1s", "--interval", "200ms", "mysql", ...args]);
        assertEquals([r.code, r.json.status], [1, "timeout"], args.join(" "));
        assertEquals(r.json.conditions[0]!.last_error, error);
        assert(r.json.conditions[0]!.attempts >= 2, "TLS failures are retried");
      }
    } finally {
      await db.remove();
      await pki.cleanup();
      await other.cleanup();
    }
  },
});

Deno.test({
  name: "mysql: the password shows in no output mode, on any path",
  ignore: ignoreWithout("MariaDB", missing),
  ...opts,
  fn: async () => {
    const mark = "Zq9My/Mark:7";
    const db = await makeMariadb();
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-my-secret-" });
    try {
      await db.sql(`CREATE USER 'marked'@'%' IDENTIFIED BY '${mark}'`);
      await Deno.writeTextFile(`${dir}/pw`, `${mark}\n`);
      const inUrl = db.url("marked", mark, "");
      const bare = `mysql://marked@127.0.0.1:${db.port}/`;
      const three = (extra: string[] = []) => [
        "mysql",
        inUrl,
        ...extra,
        "--",
        "mysql",
        bare,
        "--password-env",
        "MARK_PW",
        ...extra,
        "--",
        "mysql",
        bare,
        "--password-file",
        `${dir}/pw`,
        ...extra,
      ];
      const wrongUrl = `mysql://app:${encodeURIComponent(mark)}@127.0.0.1:${db.port}/app`;
      await assertSecretsAbsent(
        [
          { name: "success", args: ["-t", "20s", ...three()], codes: [0] },
          {
            name: "pending then timeout (missing table)",
            args: ["-t", "1s", "-i", "200ms", ...three(["--query", "SELECT * FROM mysql.nope"])],
            codes: [1],
          },
          {
            name: "authentication failed then timeout",
            args: ["-t", "1s", "-i", "200ms", "mysql", wrongUrl],
            codes: [1],
          },
          {
            name: "fatal (syntax error)",
            args: ["-t", "20s", ...three(["--query", "SELEC 1"])],
            codes: [3],
          },
          { name: "usage error", args: ["mysql", inUrl, "--min-rows", "1"], codes: [2] },
        ],
        [mark, encodeURIComponent(mark)],
        { MARK_PW: mark },
      );
    } finally {
      await db.remove();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("mysql: a dead port is pending with connection refused, and times out", async () => {
  const port = freePort();
  const r = await runJson([
    "--timeout",
    "1s",
    "--interval",
    "200ms",
    "mysql",
    `mysql://app:pw-dead-1@localhost:${port}/app`,
  ]);
  assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
  assertEquals(r.json.conditions[0]!.last_error, "connection refused");
  assert(r.json.conditions[0]!.attempts >= 2);
  assert(!r.stdout.includes("pw-dead-1"));
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
  await Promise.all(cases.map(async ([args, line]) => {
    const r = await runCli(args);
    assertEquals(usageErrorLine(r), line, args.join(" "));
    assert(!r.stderr.includes("sEcr3t"), r.stderr);
  }));
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
