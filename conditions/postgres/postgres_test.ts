import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, plan } from "../../tests/_kit.ts";
import { judgeRows } from "../_common/sql.ts";
import { judgeError } from "./errors.ts";
import type { PostgresOptions } from "./mod.ts";
import { type PgResolved, resolvePostgres } from "./resolve.ts";

/** The options the probe connects with, for `args` (which must be valid). */
function resolved(args: readonly string[], env: Record<string, string> = {}): PgResolved {
  return resolvePostgres(optionsOf<PostgresOptions>(args, env), (_flag, message) => {
    throw new Error(message);
  });
}

const ctx = { user: "app", hostname: "db", secrets: ["s3cret-pw"] };

/** A server error as `pg` gives it: a message, a severity and a SQLSTATE. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: "ERROR" });
}

Deno.test("postgres parse() splits the URL; user postgres and database = user by default", () => {
  const o = resolved(["postgres", "postgres://db"]);
  assertEquals([o.hp, o.user, o.database, o.password], [
    { hostname: "db", port: 5432 },
    "postgres",
    "postgres",
    undefined,
  ]);
  // No sslmode: libpq's default, prefer (TLS when the server has it, unverified).
  assertEquals(o.tls, { mode: "prefer", verify: "none", caFile: undefined });
  assertEquals(o.sql, { query: undefined, expect: undefined, minRows: undefined });
  const full = resolved([
    "pg",
    "postgresql://app%40corp:p%40ss%2Bw@[::1]:6432/my%20db",
  ]);
  assertEquals([full.hp, full.user, full.database, full.password], [
    { hostname: "::1", port: 6432 },
    "app@corp",
    "my db",
    { value: "p@ss+w" },
  ]);
});

Deno.test("postgres display name keeps the user and masks only the password", () => {
  const c = conditionOf(["postgres", "postgres://app:s3cret@db:5432/app?sslmode=require"]);
  assertEquals(c.name, "postgres postgres://app:***@db:5432/app?sslmode=require");
  assertEquals(conditionOf(["pg", "postgres://app@db/app"]).name, "pg postgres://app@db/app");
  const p = plan(["postgres", "postgres://app:p%40ss@db/app"]);
  assert(p.secrets.includes("p@ss") && p.secrets.includes("p%40ss"), p.secrets.join(","));
});

Deno.test("postgres sslmode and the TLS flags give the TLS mode and verification", async (t) => {
  const cases: [string[], PgResolved["tls"]][] = [
    [["postgres://db?sslmode=disable"], { mode: "off", verify: "full", caFile: undefined }],
    [["postgres://db?sslmode=prefer"], { mode: "prefer", verify: "none", caFile: undefined }],
    [["postgres://db?sslmode=allow"], { mode: "prefer", verify: "none", caFile: undefined }],
    [["postgres://db?sslmode=require"], { mode: "on", verify: "none", caFile: undefined }],
    [["postgres://db?sslmode=require", "--ca-file", "ca.pem"], {
      mode: "on",
      verify: "ca",
      caFile: "ca.pem",
    }],
    [["postgres://db?sslmode=verify-ca"], { mode: "on", verify: "ca", caFile: undefined }],
    [["postgres://db?sslmode=verify-full"], { mode: "on", verify: "full", caFile: undefined }],
    [["postgres://db", "--tls"], { mode: "on", verify: "full", caFile: undefined }],
    [["postgres://db", "--tls", "--insecure"], { mode: "on", verify: "none", caFile: undefined }],
    [["postgres://db?sslmode=prefer", "--tls"], { mode: "on", verify: "none", caFile: undefined }],
  ];
  for (const [args, tls] of cases) {
    await t.step(args.join(" "), () => {
      assertEquals(resolved(["postgres", ...args]).tls, tls);
    });
  }
});

Deno.test("postgres --password-env registers the value as a secret", () => {
  const p = plan(["postgres", "postgres://app@db/app", "--password-env", "PW"], { PW: "env-pw-1" });
  assertEquals(
    resolvePostgres(p.conditions[0]!.options as PostgresOptions, () => {
      throw new Error("invalid");
    }).password,
    { value: "env-pw-1" },
  );
  assert(p.secrets.includes("env-pw-1"));
  const f = resolved(["postgres", "postgres://db", "--password-file", "/x"]);
  assertEquals(f.password, { file: "/x" });
});

Deno.test("postgres parse() errors never show the password", () => {
  const e = parseError(["postgres", "mysql://u:s3cret-pw@db/x"]);
  assert(e.includes("mysql://u:***@db/x") && !e.includes("s3cret-pw"), e);
});

Deno.test("postgres judgeError(): refused credentials are pending, naming the user", () => {
  assertEquals(
    judgeError(serverError("28P01", 'password authentication failed for user "app"'), ctx),
    {
      status: "pending",
      error: 'password authentication failed for user "app"',
    },
  );
  assertEquals(
    judgeError(
      serverError("28000", 'no pg_hba.conf entry for host "10.0.0.1", user "app"'),
      ctx,
    ).status,
    "pending",
  );
  assertEquals(
    judgeError(
      new Error("SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string"),
      ctx,
    ),
    {
      status: "pending",
      error:
        'authentication failed for user "app": the server asks for a password and none was given',
    },
  );
});

Deno.test("postgres judgeError(): what a later server state fixes is pending with its text", () => {
  const pending: [string, string][] = [
    ["57P03", "the database system is starting up"],
    ["57P03", "the database system is in recovery mode"],
    ["57P01", "terminating connection due to administrator command"],
    ["3D000", 'database "app" does not exist'],
    ["53300", "sorry, too many clients already"],
    ["42P01", 'relation "jobs" does not exist'],
    ["42703", 'column "done" does not exist'],
    ["42883", "function app_ready() does not exist"],
    ["42501", "permission denied for table jobs"],
    ["3F000", 'schema "app" does not exist'],
    ["22012", "division by zero"],
  ];
  for (const [code, message] of pending) {
    assertEquals(judgeError(serverError(code, message), ctx), {
      status: "pending",
      error: message,
    });
  }
});

Deno.test("postgres judgeError(): a statement the server can never run is fatal", () => {
  assertEquals(judgeError(serverError("42601", 'syntax error at or near "SELEC"'), ctx), {
    status: "fatal",
    error: 'syntax error at or near "SELEC" (SQLSTATE 42601)',
  });
  assertEquals(
    judgeError(serverError("42702", 'column reference "id" is ambiguous'), ctx).status,
    "fatal",
  );
});

Deno.test("postgres judgeError(): network and TLS failures are pending, secrets scrubbed", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:5432"), {
    code: "ECONNREFUSED",
  });
  assertEquals(judgeError(refused, ctx), { status: "pending", error: "connection refused" });
  assertEquals(judgeError(new Error("Connection terminated unexpectedly"), ctx), {
    status: "pending",
    error: "connection terminated unexpectedly",
  });
  assertEquals(judgeError(new Error("The server does not support SSL connections"), ctx), {
    status: "pending",
    error: "the server does not support TLS (SSL) connections",
  });
  const cert = Object.assign(new Error("self-signed certificate"), {
    code: "DEPTH_ZERO_SELF_SIGNED_CERT",
  });
  assertEquals(judgeError(cert, ctx), {
    status: "pending",
    error: "certificate not trusted (self-signed certificate)",
  });
  const leaky = new Error("cannot use postgres://app:s3cret-pw@db/app (s3cret-pw)");
  const text = judgeError(leaky, ctx);
  assert(text.status === "pending" && !text.error.includes("s3cret-pw"), JSON.stringify(text));
});

Deno.test("judgeRows() for SELECT 1, --expect and --min-rows", () => {
  const q = (expect?: string, minRows?: number) => ({ query: "SELECT x", expect, minRows });
  assertEquals(judgeRows({ query: undefined, expect: undefined, minRows: undefined }, [["1"]]), {
    ok: true,
    detail: "SELECT 1 answered",
  });
  assertEquals(judgeRows(q("ok"), [["ok", "x"]]), { ok: true, detail: 'query returned "ok"' });
  assertEquals(judgeRows(q("ok"), []), {
    ok: false,
    error: 'query returned no rows, expected "ok"',
  });
  assertEquals(judgeRows(q("ok"), [[null]]), {
    ok: false,
    error: 'query returned NULL, expected "ok"',
  });
  assertEquals(judgeRows(q("ok"), [["no"]]), {
    ok: false,
    error: 'query returned "no", expected "ok"',
  });
  assertEquals(judgeRows(q(undefined, 2), [["a"]]), {
    ok: false,
    error: "query returned 1 row, expected at least 2",
  });
  assertEquals(judgeRows(q(undefined, 2), [["a"], ["b"]]), {
    ok: true,
    detail: "query returned 2 rows (at least 2)",
  });
  assertEquals(judgeRows(q(), []), { ok: true, detail: "query answered (0 rows)" });
});
