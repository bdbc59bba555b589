import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, plan } from "../../tests/_kit.ts";
import { judgeError } from "./errors.ts";
import type { MysqlOptions } from "./mod.ts";
import { type MysqlResolved, resolveMysql } from "./resolve.ts";

/** The options the probe connects with, for `args` (which must be valid). */
function resolved(args: readonly string[], env: Record<string, string> = {}): MysqlResolved {
  return resolveMysql(optionsOf<MysqlOptions>(args, env), (_flag, message) => {
    throw new Error(message);
  });
}

const ctx = { user: "app", hostname: "db", secrets: ["s3cret-pw"] };

/** A server error as mysql2 gives it: errno, its name as code, an SQLSTATE. */
function serverError(errno: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { errno, code, sqlState: "42000" });
}

Deno.test("mysql parse() splits the URL; user root and no database by default", () => {
  const o = resolved(["mysql", "mysql://db"]);
  assertEquals([o.hp, o.user, o.database, o.password], [
    { hostname: "db", port: 3306 },
    "root",
    undefined,
    undefined,
  ]);
  const m = resolved(["mariadb", "mariadb://app:pw%2F1@db:3307/shop"]);
  assertEquals([m.hp, m.user, m.database, m.password], [
    { hostname: "db", port: 3307 },
    "app",
    "shop",
    { value: "pw/1" },
  ]);
  assertEquals(m.tls, { mode: "off", verify: "full", caFile: undefined });
  assertEquals(
    resolved(["mysql", "mysql://db", "--tls", "--ca-file", "ca.pem"]).tls,
    { mode: "on", verify: "full", caFile: "ca.pem" },
  );
});

Deno.test("mysql display name keeps the user and masks only the password", () => {
  assertEquals(
    conditionOf(["mariadb", "mysql://app:s3cret@db:3306/app"]).name,
    "mariadb mysql://app:***@db:3306/app",
  );
  const p = plan(["mysql", "mysql://app:s3cret@db/app"]);
  assert(p.secrets.includes("s3cret"));
});

Deno.test("mysql judgeError(): refused logins are pending, naming the user", () => {
  for (
    const [errno, code, message, error] of [
      [
        1045,
        "ER_ACCESS_DENIED_ERROR",
        "Access denied for user 'app'@'10.0.0.2' (using password: YES)",
        // The user once.
        `authentication failed for user "app" from '10.0.0.2' (using password: YES)`,
      ],
      [
        1698,
        "ER_ACCESS_DENIED_NO_PASSWORD_ERROR",
        "Access denied for user 'app'@'10.0.0.2'",
        `authentication failed for user "app" from '10.0.0.2'`,
      ],
      [
        1820,
        "ER_MUST_CHANGE_PASSWORD",
        "You must reset your password using ALTER USER statement before executing this statement.",
        'authentication failed for user "app": You must reset your password using ALTER USER statement before executing this statement.',
      ],
    ] as const
  ) {
    assertEquals(judgeError(serverError(errno, code, message), ctx), { status: "pending", error });
  }
});

Deno.test("mysql judgeError(): missing database, table, column and privileges stay pending", () => {
  const pending: [number, string, string][] = [
    [1049, "ER_BAD_DB_ERROR", "Unknown database 'app'"],
    [1044, "ER_DBACCESS_DENIED_ERROR", "Access denied for user 'app'@'%' to database 'app'"],
    [1146, "ER_NO_SUCH_TABLE", "Table 'app.jobs' doesn't exist"],
    [1054, "ER_BAD_FIELD_ERROR", "Unknown column 'done' in 'SELECT'"],
    [
      1142,
      "ER_TABLEACCESS_DENIED_ERROR",
      "SELECT command denied to user 'app'@'%' for table 'jobs'",
    ],
    [1040, "ER_CON_COUNT_ERROR", "Too many connections"],
    [1053, "ER_SERVER_SHUTDOWN", "Server shutdown in progress"],
  ];
  for (const [errno, code, message] of pending) {
    assertEquals(judgeError(serverError(errno, code, message), ctx), {
      status: "pending",
      error: message,
    });
  }
});

Deno.test("mysql judgeError(): a statement the server can never run is fatal", () => {
  assertEquals(
    judgeError(serverError(1064, "ER_PARSE_ERROR", "You have an error in your SQL syntax"), ctx),
    { status: "fatal", error: "You have an error in your SQL syntax (ER_PARSE_ERROR 1064)" },
  );
  assertEquals(
    judgeError(
      serverError(1052, "ER_NON_UNIQ_ERROR", "Column 'id' in field list is ambiguous"),
      ctx,
    )
      .status,
    "fatal",
  );
});

Deno.test("mysql judgeError(): network, TLS and driver failures are pending", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:3306"), {
    code: "ECONNREFUSED",
    errno: -111,
  });
  assertEquals(judgeError(refused, ctx), { status: "pending", error: "connection refused" });
  const lost = Object.assign(new Error("Connection lost: The server closed the connection."), {
    code: "PROTOCOL_CONNECTION_LOST",
  });
  assertEquals(judgeError(lost, ctx), {
    status: "pending",
    error: "the server closed the connection",
  });
  const tls = (message: string) =>
    judgeError(Object.assign(new Error(message), { code: "HANDSHAKE_SSL_ERROR" }), ctx);
  assertEquals(tls("self-signed certificate in certificate chain"), {
    status: "pending",
    error: "certificate not trusted (self-signed certificate in the chain)",
  });
  assertEquals(tls("Hostname/IP does not match certificate's altnames: Host: db."), {
    status: "pending",
    error: "certificate is not valid for db",
  });
  const leaky = judgeError(new Error("bad password s3cret-pw"), ctx);
  assert(leaky.status === "pending" && !leaky.error.includes("s3cret-pw"));
});
