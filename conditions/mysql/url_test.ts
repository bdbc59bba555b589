/**
 * Parity of the mysql target with mysql2's own URL reading
 * (`ConnectionConfig.parseUrl`, the oracle): for URL forms from the
 * driver's documentation (its connection options, and the URL example
 * `mysql://user:pass@host/db?debug=true&charset=BIG5_CHINESE_CI&timezone=-0700`, whose
 * timezone mysql2 writes -07:00,
 * it inherits from mysqljs), what waitcmd reads equals what mysql2 reads.
 * The Go driver's DSN (go-sql-driver/mysql's documented forms) is checked
 * against the same URL read by mysql2.
 */

import { assert, assertEquals } from "../../tests/_assert.ts";
import { optionsOf, plan, usageError } from "../../tests/_kit.ts";
import type { MysqlOptions } from "./mod.ts";
import { type MysqlResolved, resolveMysql } from "./resolve.ts";
import { MYSQL2_OPTIONS, mysql2ParseUrl, parseMysqlTarget } from "./url.ts";

/** The options the probe connects with, for `args` (which must be valid). */
function resolved(args: readonly string[], env: Record<string, string> = {}): MysqlResolved {
  return resolveMysql(optionsOf<MysqlOptions>(args, env), (_flag, message) => {
    throw new Error(message);
  });
}

/** What a target means, as compared. */
interface Meaning {
  host: string;
  port: number;
  socketPath: string | undefined;
  user: string | undefined;
  password: string | undefined;
  database: string | undefined;
  tls: boolean;
  options: Record<string, unknown>;
}

const FORMS: string[] = [
  "mysql://user:pass@host/db",
  // mysqljs's example writes -0700, which mysql2 replaces by Z with a warning: its form is -07:00.
  "mysql://user:pass@host/db?debug=true&charset=BIG5_CHINESE_CI&timezone=-07:00",
  "mysql://app:secret@db.internal:3307/app?charset=utf8mb4",
  "mysql://app:secret@localhost/app?socketPath=/var/run/mysqld/mysqld.sock",
  "mysql://app@[::1]:3306/app",
  "mysql://app:p%40ss%2Fw@db/app",
  "mysql://db",
  "mysql://app@db/app?connectTimeout=5000",
  'mysql://app@db/app?ssl={"rejectUnauthorized":true}',
  'mysql://app@db/app?ssl={"rejectUnauthorized":false}',
  "mysql://app@db/app?ssl=Amazon%20RDS",
  "mysql://app@db/app?timezone=Z",
  "mysql://app@db/app?timezone=%2B05:30",
  "mysql://app@db/app?compress=true",
  "mysql://app@db/app?multipleStatements=true&dateStrings=true&supportBigNumbers=true",
  "mysql://app@db/app?flags=-FOUND_ROWS",
  "mysql://app@db/app?enableKeepAlive=false&charset=latin1",
  "mysql://app@db/app?insecureAuth=true&enableCleartextPlugin=true",
];

/** The oracle: mysql2's parseUrl, read into the compared shape. */
function oracle(url: string): Meaning {
  const o = mysql2ParseUrl(url);
  const options: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (MYSQL2_OPTIONS[k] === "pass") options[k] = v;
  if (typeof options.timezone === "string") options.timezone = options.timezone.replace(/^ /, "+");
  return {
    host: (o.host as string) || "localhost",
    port: Number.isInteger(o.port) ? o.port as number : 3306,
    socketPath: o.socketPath as string | undefined,
    user: (o.user as string) || undefined,
    password: (o.password as string) || undefined,
    database: (o.database as string) || undefined,
    tls: o.ssl !== undefined,
    options,
  };
}

function ours(text: string): Meaning {
  const t = parseMysqlTarget(text, JSON.stringify(text));
  return {
    host: t.hp.hostname,
    port: t.hp.port,
    socketPath: t.socketPath,
    user: t.user,
    password: t.password,
    database: t.database,
    tls: t.ssl !== undefined,
    options: { ...t.driver },
  };
}

Deno.test("mysql URL parity with mysql2's ConnectionConfig.parseUrl", async (t) => {
  assert(FORMS.length >= 15);
  for (const url of FORMS) await t.step(url, () => assertEquals(ours(url), oracle(url)));
  // mariadb:// is read as mysql://.
  assertEquals(ours("mariadb://app:pw@db:3307/app"), oracle("mysql://app:pw@db:3307/app"));
});

Deno.test("mysql options: the table names exactly mysql2's connection options", async () => {
  const dir = new URL("../../node_modules/.deno/", import.meta.url);
  let source: string | undefined;
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith("mysql2@")) {
      source = await Deno.readTextFile(
        new URL(`${e.name}/node_modules/mysql2/lib/connection_config.js`, dir),
      );
    }
  }
  assert(source !== undefined, "mysql2's source is in node_modules");
  const block = source.slice(source.indexOf("const validOptions = {"));
  const body = block.slice(0, block.indexOf("};"));
  const names = [...body.matchAll(/^\s+(\w+): 1,/gm)].map((m) => m[1]!).sort();
  assertEquals(Object.keys(MYSQL2_OPTIONS).sort(), names);
});

Deno.test("mysql Go DSN (wait4x, go-sql-driver/mysql) means what the same URL means to mysql2", async (t) => {
  const rows: [string, string][] = [
    ["app:secret@tcp(db.internal:3307)/app", "mysql://app:secret@db.internal:3307/app"],
    ["app:secret@tcp(db)/app?charset=utf8mb4", "mysql://app:secret@db:3306/app?charset=utf8mb4"],
    ["app@tcp([::1]:3306)/app", "mysql://app@[::1]:3306/app"],
    [
      "app:secret@unix(/run/mysqld/mysqld.sock)/app",
      "mysql://app:secret@localhost/app?socketPath=/run/mysqld/mysqld.sock",
    ],
    [
      "app:secret@tcp(db:3306)/app?timeout=5s",
      "mysql://app:secret@db:3306/app?connectTimeout=5000",
    ],
    ["app:s@cr:et@tcp(db:3306)/app", "mysql://app:s%40cr%3Aet@db:3306/app"],
  ];
  for (const [dsn, url] of rows) await t.step(dsn, () => assertEquals(ours(dsn), oracle(url)));
  // A DSN without an address is the Go driver's default, 127.0.0.1:3306.
  assertEquals(ours("app@/app").host, "127.0.0.1");
  assertEquals(ours("app:pw@tcp(db:3306)/app?tls=true").tls, true);
});

Deno.test("mysql target: an unknown or impossible option is a usage error naming it", async () => {
  const cases: [string, string][] = [
    ["mysql://db/app?bogus=1", 'unknown URL parameter "bogus"'],
    ["mysql://db/app?charset=klingon", 'charset: mysql2 knows no charset "klingon"'],
    ["mysql://db/app?timezone=Europe/Paris", "timezone: expected local, Z or +HH:MM"],
    // mysql2 would warn on stderr and use Z: refused here, saying why.
    ["mysql://db/app?timezone=-0700", "timezone: expected local, Z or +HH:MM"],
    ["mysql://db/app?ssl=true", "ssl: expected a JSON object of TLS options"],
    ["mysql://db/app?stream=1", 'URL parameter "stream": mysql2 takes code there'],
    ["mysql://db/app?password=x", 'URL parameter "password": mysql2 ignores it in the query'],
    ["mysql://db/app?connectTimeout=soon", "connectTimeout: expected milliseconds"],
    ["app:pw@tcp(db:3306)/app?sql_mode=ANSI", 'unknown DSN parameter "sql_mode"'],
    ["app:pw@tcp(db:3306)/app?tls=custom", "tls: expected true, false, skip-verify or preferred"],
    ["app:pw@pipe(x)/app", 'unknown network "pipe"'],
    ["app:pw@tcp(db:3306/app", "the address needs its closing"],
    ["postgres://db/app", "expected mysql://"],
  ];
  for (const [target, part] of cases) {
    const e = await usageError(["mysql", target]);
    assert(e.includes(part), `${target}: ${e}`);
    assert(!e.includes(":pw@"), e);
  }
});

Deno.test("mysql target options reach the probe; a DSN's password is masked and a secret", () => {
  const o = resolved([
    "mysql",
    "mysql://app@db/app?charset=utf8mb4&connectTimeout=5000&socket=/run/mysqld.sock",
  ]);
  assertEquals([o.driver, o.socketPath], [
    { charset: "utf8mb4", connectTimeout: 5000 },
    "/run/mysqld.sock",
  ]);
  const ssl = resolved(["mysql", 'mysql://db/app?ssl={"rejectUnauthorized":false}']);
  assertEquals([ssl.tls.mode, ssl.tls.verify], ["on", "none"]);
  const p = plan(["mysql", "app:s3cret-pw@tcp(db:3306)/app"]);
  assertEquals(p.conditions[0]!.name, "mysql app:***@tcp(db:3306)/app");
  assert(p.secrets.includes("s3cret-pw"), p.secrets.join(","));
});
