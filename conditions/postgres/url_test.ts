/**
 * Parity of the postgres target with pg's own connection-string parser
 * (`pg-connection-string`, the oracle): for URL forms taken from libpq's
 * documentation ("Connection URIs" and the parameter keywords), what
 * waitcmd reads equals what pg's parser reads. Where libpq goes beyond
 * pg's parser (several hosts, an empty host, `dbname`), the expected
 * values are libpq's documented meaning, stated in the row.
 */

import { parse as pgParse } from "pg-connection-string";
import { assert, assertEquals, assertThrows } from "../../tests/_assert.ts";
import { optionsOf, usageError } from "../../tests/_kit.ts";
import type { PostgresOptions } from "./mod.ts";
import { type PgResolved, resolvePostgres } from "./resolve.ts";
import { DEFAULT_SOCKET_DIRS, parsePostgresUrl } from "./url.ts";

/** The options the probe connects with, for `args` (which must be valid). */
function resolved(args: readonly string[], env: Record<string, string> = {}): PgResolved {
  return resolvePostgres(optionsOf<PostgresOptions>(args, env), (_flag, message) => {
    throw new Error(message);
  });
}

/** What a connection string means, as compared. */
interface Meaning {
  hosts: string[];
  ports: number[];
  user: string | undefined;
  password: string | undefined;
  database: string | undefined;
  sslmode: string | undefined;
  application_name: string | undefined;
  options: string | undefined;
  connect_timeout: string | undefined;
}

const CA = Deno.makeTempFileSync({ prefix: "waitcmd-pgurl-ca-" });

/** libpq's documented forms (https://www.postgresql.org/docs/current/libpq-connect.html). */
const FORMS: string[] = [
  "postgresql://localhost",
  "postgresql://localhost:5433",
  "postgresql://localhost/mydb",
  "postgresql://user@localhost",
  "postgresql://user:secret@localhost",
  "postgresql://other@localhost/otherdb?connect_timeout=10&application_name=myapp",
  "postgresql:///mydb?host=localhost&port=5433",
  "postgresql://[2001:db8::1234]/database",
  "postgresql:///dbname?host=/var/lib/postgresql",
  "postgresql://%2Fvar%2Flib%2Fpostgresql/dbname",
  "postgresql://user@localhost:5433/mydb?options=-c%20synchronous_commit%3Doff",
  "postgres://app:p%40ss%2Fw@db.internal:6432/app?sslmode=require",
  "postgres://db/app?user=app&password=s3cret",
  "postgres://db/app?application_name=ci&connect_timeout=5",
  "postgres://db/app?sslmode=prefer",
  "postgres://db/app?sslmode=disable",
  "postgres://db/app?sslmode=verify-full&sslrootcert=" + CA,
  "postgres:///app?host=/cloudsql/project:region:instance",
  "postgres://app@[::1]:5433/app?target_session_attrs=read-write",
  "postgres://db/my%20db?client_encoding=UTF8&fallback_application_name=x",
];

/** The oracle: pg's parser, read into the compared shape. */
function oracle(url: string): Meaning {
  const c = pgParse(url) as Record<string, string | null | undefined>;
  const host = c.host ?? "";
  const hosts = host === "" ? [...DEFAULT_SOCKET_DIRS] : [host];
  const port = c.port ? Number(c.port) : 5432;
  const text = (v: string | null | undefined) =>
    v === null || v === "" ? undefined : v ?? undefined;
  return {
    hosts,
    ports: hosts.map(() => port),
    user: text(c.user),
    password: text(c.password),
    database: text(c.database),
    sslmode: text(c.sslmode),
    application_name: text(c.application_name),
    options: text(c.options),
    connect_timeout: text(c.connect_timeout),
  };
}

/** What waitcmd reads. */
function ours(url: string): Meaning {
  const u = parsePostgresUrl(url, JSON.stringify(url));
  return {
    hosts: u.endpoints.map((e) => e.hp.hostname),
    ports: u.endpoints.map((e) => e.hp.port),
    user: u.user,
    password: u.password,
    database: u.database,
    sslmode: u.sslmode,
    application_name: u.client.application_name,
    options: u.client.options,
    connect_timeout: u.connectTimeout === undefined ? undefined : String(u.connectTimeout),
  };
}

Deno.test("postgres URL parity with pg-connection-string on libpq's documented forms", async (t) => {
  assert(FORMS.length >= 15);
  for (const url of FORMS) {
    await t.step(url.replace(CA, "CA"), () => assertEquals(ours(url), oracle(url)));
  }
});

/**
 * libpq's keyword/value strings ("Keyword/Value Connection Strings"), each with the URI libpq's
 * documentation gives the same meaning: pg's parser has no reader of this form, so the oracle is
 * pg's parser on that URI.
 */
const KEYWORD_FORMS: [string, string][] = [
  [
    "host=localhost port=5432 dbname=mydb connect_timeout=10",
    "postgresql://localhost:5432/mydb?connect_timeout=10",
  ],
  [
    "host=localhost port=5432 dbname=app user=u password=p sslmode=disable",
    "postgresql://u:p@localhost:5432/app?sslmode=disable",
  ],
  ["host=localhost", "postgresql://localhost"],
  ["host=localhost port=5433", "postgresql://localhost:5433"],
  ["user=user host=localhost", "postgresql://user@localhost"],
  ["host = localhost  dbname = mydb", "postgresql://localhost/mydb"],
  [
    "user=other host=localhost dbname=otherdb connect_timeout=10 application_name=myapp",
    "postgresql://other@localhost/otherdb?connect_timeout=10&application_name=myapp",
  ],
  ["host=2001:db8::1234 dbname=database", "postgresql://[2001:db8::1234]/database"],
  ["host=/var/lib/postgresql dbname=dbname", "postgresql:///dbname?host=/var/lib/postgresql"],
  [
    "options='-c synchronous_commit=off' user=user host=localhost port=5433 dbname=mydb",
    "postgresql://user@localhost:5433/mydb?options=-c%20synchronous_commit%3Doff",
  ],
  ["host=db dbname='my db' password='it\\'s'", "postgres://:it's@db/my%20db"],
  ["host=db dbname=app sslmode=prefer", "postgres://db/app?sslmode=prefer"],
  [
    "host=db.internal port=6432 dbname=app user=app password=p@ss/w sslmode=require",
    "postgres://app:p%40ss%2Fw@db.internal:6432/app?sslmode=require",
  ],
  [
    "dbname=app host=/cloudsql/project:region:instance",
    "postgres:///app?host=/cloudsql/project:region:instance",
  ],
  ["host=db dbname=app client_encoding=UTF8", "postgres://db/app?client_encoding=UTF8"],
];

Deno.test("postgres keyword/value parity: each means what pg's parser reads in libpq's equivalent URI", async (t) => {
  assert(KEYWORD_FORMS.length >= 15);
  for (const [kv, uri] of KEYWORD_FORMS) {
    await t.step(kv, () => assertEquals(ours(kv), oracle(uri)));
  }
});

Deno.test("postgres keyword/value: what libpq reads beyond pg's parser", () => {
  // Several hosts with a port each; no host at all: libpq's default socket directory.
  const multi = ours("host=host1,host2 port=123,456 dbname=somedb target_session_attrs=any");
  assertEquals([multi.hosts, multi.ports, multi.database], [
    ["host1", "host2"],
    [123, 456],
    "somedb",
  ]);
  assertEquals(ours("dbname=app").hosts, [...DEFAULT_SOCKET_DIRS]);
  // A keyword given twice: the later wins, as in libpq.
  assertEquals(ours("host=a host=b port=1 port=2").hosts, ["b"]);
  assertEquals(ours("host=a host=b port=1 port=2").ports, [2]);
});

Deno.test("postgres keyword/value: unknown keywords and bad strings are usage errors", async () => {
  const cases: [string, string][] = [
    ["host=db bogus=1", 'unknown keyword "bogus" (neither libpq nor pg knows it'],
    ["host=db service=prod", 'keyword "service": waitcmd reads no connection service file'],
    ["host=db sslmode=maybe", "sslmode: expected one of disable, allow, prefer"],
    ["host=db port=99999", "port must be from 1 to 65535"],
    ["host=db dbname", 'libpq keyword/value string: missing "=" after "dbname"'],
    [
      "host=db password=two words",
      'libpq keyword/value string: missing "=" after a word that is no keyword (a value holding blanks is written in single quotes)',
    ],
    [
      "host=db password='open",
      "libpq keyword/value string: a single-quoted value has no closing quote",
    ],
    ["=x host=db", 'unknown keyword ""'],
  ];
  for (const [target, part] of cases) {
    const e = await usageError(["postgres", target]);
    assert(e.includes(part), `${target}: ${e}`);
    for (const secret of ["words", "open", "two"]) assert(!e.includes(secret), e);
  }
  const db = await usageError(["postgres", "db:5432"]);
  assert(db.includes("expected postgres://") && db.includes("(libpq's keyword/value)"), db);
});

Deno.test("postgres URL: what libpq reads beyond pg's parser", async (t) => {
  const rows: [string, Partial<Meaning>][] = [
    // Several hosts, each with its port (libpq's "host1:123,host2:456"); pg's parser takes one.
    ["postgresql://host1:123,host2:456/somedb?target_session_attrs=any&application_name=myapp", {
      hosts: ["host1", "host2"],
      ports: [123, 456],
      database: "somedb",
      application_name: "myapp",
    }],
    // The host parameter as a list, one port for all.
    ["postgres:///app?host=a,b&port=6000", { hosts: ["a", "b"], ports: [6000, 6000] }],
    // A port per host in the parameters.
    ["postgres:///app?host=a,/run/pg&port=6000,6001", {
      hosts: ["a", "/run/pg"],
      ports: [6000, 6001],
    }],
    // An empty host: libpq's default socket directory.
    ["postgresql://", { hosts: [...DEFAULT_SOCKET_DIRS], database: undefined }],
    // dbname as a parameter wins over the path, as a later keyword does in libpq.
    ["postgres://db/one?dbname=two", { database: "two" }],
    // A parameter's user and password win over the user-info, as in libpq.
    ["postgres://a:b@db/app?user=c&password=d", { user: "c", password: "d" }],
  ];
  for (const [url, want] of rows) {
    await t.step(url, () => {
      const got = ours(url);
      for (const [k, v] of Object.entries(want)) {
        assertEquals(got[k as keyof Meaning], v, `${k} of ${url}`);
      }
    });
  }
});

Deno.test("postgres URL: socket directories are Unix sockets, not host names", () => {
  const u = parsePostgresUrl("postgres:///db?host=/cloudsql/p:r:i&port=5433", "x");
  assertEquals(u.endpoints, [{
    socketDir: "/cloudsql/p:r:i",
    hp: { hostname: "/cloudsql/p:r:i", port: 5433 },
  }]);
  const tcp = parsePostgresUrl("postgres://db:5433/x", "x");
  assertEquals(tcp.endpoints, [{ hp: { hostname: "db", port: 5433 } }]);
});

Deno.test("postgres URL: an unknown or impossible parameter is a usage error naming it", async () => {
  const cases: [string, string][] = [
    ["postgres://db/app?bogus=1", 'unknown URL parameter "bogus"'],
    [
      "postgres://db/app?sslmode=maybe",
      'sslmode: expected one of disable, allow, prefer, require, verify-ca, verify-full, no-verify, got "maybe"',
    ],
    [
      "postgres://db/app?connect_timeout=soon",
      'connect_timeout: expected whole seconds, got "soon"',
    ],
    ["postgres://db/app?target_session_attrs=leader", "target_session_attrs: expected one of"],
    [
      "postgres://db/app?service=prod",
      'URL parameter "service": waitcmd reads no connection service file',
    ],
    ["postgres://db/app?gssencmode=require", 'URL parameter "gssencmode"'],
    ["postgres:///app?host=a,b,c&port=1,2", "could not match 2 port numbers to 3 hosts"],
    ["postgres://db:99999/app", "port must be from 1 to 65535"],
    ["mysql://db/app", "expected postgres://"],
  ];
  for (const [url, part] of cases) {
    const e = await usageError(["postgres", url]);
    assert(e.includes(part), `${url}: ${e}`);
  }
  assertThrows(() => parsePostgresUrl("postgres://db/app#frag", "x"), Error);
});

Deno.test("postgres URL parameters reach the options with libpq's meaning", async () => {
  const o = resolved([
    "postgres",
    "postgres://app@db/app?application_name=ci&connect_timeout=1&options=-c%20x%3D1&target_session_attrs=standby",
  ]);
  assertEquals(o.client, { application_name: "ci", options: "-c x=1" });
  // libpq counts a connect_timeout under 2 s as 2 s.
  assertEquals(o.connectTimeoutMs, 2000);
  assertEquals(o.targetSessionAttrs, "standby");
  const creds = resolved(["postgres", "postgres://db/app?user=u&password=pw"]);
  assertEquals([creds.user, creds.password], ["u", { value: "pw" }]);
  // A password as a parameter and a password flag: one source only.
  const both = await usageError([
    "postgres",
    "postgres://db/app?password=pw",
    "--password-env",
    "PW",
  ], {
    PW: "x",
  });
  assert(both.includes("cannot be combined with a password in the URL"), both);
  const root = resolved([
    "postgres",
    `postgres://db/app?sslmode=require&sslrootcert=${CA}`,
  ]);
  assertEquals([root.tls.mode, root.tls.verify, root.rootCertFile], ["on", "ca", CA]);
  const sys = resolved(["postgres", "postgres://db/app?sslrootcert=system"]);
  assertEquals([sys.tls.mode, sys.tls.verify], ["on", "full"]);
  const primary = await usageError([
    "postgres",
    "postgres://db/app?target_session_attrs=standby",
    "--primary",
  ]);
  assert(primary.includes("cannot be combined with target_session_attrs=standby"), primary);
});

Deno.test("postgres URL: credentials as parameters never show", async () => {
  const e = await usageError(["postgres", "postgres://db/app?password=s3cret-pw&bogus=1"]);
  assert(!e.includes("s3cret-pw"), e);
});
