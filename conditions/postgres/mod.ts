/**
 * postgres (aliases postgresql, pg): a PostgreSQL server takes a login and
 * answers `SELECT 1` or the user's query (docs/contract.md §5 postgres).
 *
 * The probe talks to the server with `npm:pg`, imported only by probe.ts;
 * `errors.ts` decides which server errors a retry can fix.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import {
  passwordSource,
  TLS_FLAGS,
  type TlsChoice,
  tlsChoice,
  type UrlTls,
} from "../_common/datastore.ts";
import type { ReachOptions } from "../_common/datastore.ts";
import { maskUrlPassword, PASSWORD_FLAGS } from "../_common/dsurl.ts";
import { SQL_FLAGS, type SqlCheck, sqlCheck } from "../_common/sql.ts";
import { parsePostgresUrl, type PgEndpoint, type PgUrl, type TargetSessionAttrs } from "./url.ts";

/** What a postgres condition needs. */
export interface PostgresOptions extends ReachOptions<string> {
  /** The role to log in as: the URL's user, else `postgres`. */
  readonly user: string;
  /** The URL's database, else the user's name (as libpq does). */
  readonly database: string;
  readonly sql: SqlCheck;
  /** The hosts in libpq's order (`hp` is the first); a socket directory or a host and port. */
  readonly endpoints: readonly PgEndpoint[];
  /** `load_balance_hosts=random`: the hosts in a random order at each attempt. */
  readonly loadBalance: boolean;
  /** `target_session_attrs` (`--primary` is `primary`). */
  readonly targetSessionAttrs: TargetSessionAttrs;
  /** `sslrootcert`: the CA file, read at each attempt (as `--ca-file` is). */
  readonly rootCertFile: string | undefined;
  /** `sslcert`, `sslkey` and `sslpassword`: a client certificate, read at each attempt. */
  readonly clientCert:
    | { readonly certFile?: string; readonly keyFile?: string; readonly passphrase?: string }
    | undefined;
  /** `ssl_min_protocol_version`, `ssl_max_protocol_version`, `sslsni`. */
  readonly tlsExtra: PgUrl["tlsExtra"];
  /** URL parameters pg's Client takes as they are (application_name, options, ...). */
  readonly client: Readonly<Record<string, string>>;
  /** `connect_timeout` in milliseconds (at least 2 s, as libpq); undefined: none. */
  readonly connectTimeoutMs: number | undefined;
}

/** The URL's `sslmode` as a TLS mode and verification (libpq's meanings). */
const SSLMODES: Readonly<Record<string, UrlTls>> = {
  disable: { mode: "off" },
  allow: { mode: "prefer", verify: "none" },
  prefer: { mode: "prefer", verify: "none" },
  require: { mode: "on", verify: "none" },
  "verify-ca": { mode: "on", verify: "ca" },
  "verify-full": { mode: "on", verify: "full" },
  // pg's own: TLS, nothing verified.
  "no-verify": { mode: "on", verify: "none" },
};

/** The postgres kind. */
export const postgres = defineKind<PostgresOptions>({
  name: "postgres",
  isolate: true,
  parse: parseOptions,
  aliases: ["postgresql", "pg"],
  summary: "a PostgreSQL server takes the login and answers SELECT 1 or a query",
  description:
    "Connects, logs in and runs SELECT 1 (or --query) on each attempt, over one connection that is closed after it. The target is a libpq connection URI, read by pg's own parser, with libpq's parameters and meanings: user, password and dbname as parameters, host naming a socket directory (host=/run/postgresql, or the directory percent-encoded as the host; an empty host is libpq's default directory), several hosts tried in order (h1:5432,h2:5433; target_session_attrs, load_balance_hosts), sslmode, application_name, connect_timeout, options and the rest; a parameter neither libpq nor pg knows is a usage error. With --expect, the first column of the first row, as the server writes it (t/f for booleans), must equal the text; with --min-rows, the query must return at least N rows; with --primary (target_session_attrs=primary), the server must not be in recovery. Pending, with the server's own text: refused or reset connections, a server starting up, shutting down or in recovery, wrong credentials (\"password authentication failed for user ...\": a user is often created late), a missing database, table, column or function (migrations not run yet), TLS failures. Fatal (exit 3): a statement the server can never run, such as an SQL syntax error (SQLSTATE class 42, except missing objects and privileges). The password comes from the URL (user-info or password=), --password-env or --password-file, never from PG* variables or ~/.pgpass, and never shows. TLS follows sslmode as libpq: without it, prefer (TLS when the server has it, unverified, else plain text); disable, allow/prefer, require (unverified), verify-ca, verify-full; sslrootcert, sslcert and sslkey name files read at each attempt. --tls requires verified TLS.",
  target: {
    shape: "required",
    placeholder: "URL",
    description:
      "postgres://[user[:password]@][host][:port][,host2[:port2]...][/database][?param=value&...] (libpq's URI; port 5432)",
  },
  flags: [
    ...SQL_FLAGS,
    {
      name: "primary",
      type: "boolean",
      description: "the server is a primary: not in recovery (pg_is_in_recovery() is false)",
    },
    ...PASSWORD_FLAGS,
    ...TLS_FLAGS,
  ],
  examples: [
    {
      args: "postgres postgres://app@db:5432/app --password-env DB_PASSWORD",
      description: "wait until the app's role can log in to its database",
    },
    {
      args:
        "pg postgres://app@db/app --password-file /run/secrets/db --query 'SELECT max(version) FROM schema_migrations' --expect 20261101",
      description: "wait until the migrations have run",
    },
    {
      args:
        "postgres 'postgres:///app?host=/cloudsql/project:region:db&user=app' --password-env DB_PASSWORD",
      description: "wait for a server behind a Unix socket directory (Cloud SQL's proxy)",
    },
    {
      args:
        "postgresql postgres://postgres@db-1/postgres?sslmode=verify-full --ca-file ca.pem --primary",
      description: "wait until a verified TLS login reaches a primary, not a standby",
    },
  ],
  load: () => import("./probe.ts").then((m) => m.create),
});

function parseOptions(input: KindInput): { target: string; options: PostgresOptions } {
  const text = input.target ?? "";
  const masked = maskUrlPassword(text);
  for (const s of masked.secrets) input.secret(s);
  let url: PgUrl;
  try {
    url = parsePostgresUrl(text, JSON.stringify(masked.display));
  } catch (e) {
    return input.fail(undefined, (e as Error).message);
  }
  if (url.password !== undefined) input.secret(url.password);
  if (url.sslpassword !== undefined) input.secret(url.sslpassword);
  const password = passwordSource(input, url);
  const { tls, rootFile } = tlsOf(input, url);
  const user = url.user ?? "postgres";
  const attrs = sessionAttrs(input, url.targetSessionAttrs);
  return {
    target: masked.display,
    options: {
      hp: url.endpoints[0]!.hp,
      endpoints: url.endpoints,
      loadBalance: url.loadBalance,
      user,
      database: url.database ?? user,
      password,
      tls,
      rootCertFile: rootFile,
      clientCert: url.sslcert === undefined && url.sslkey === undefined ? undefined : {
        certFile: url.sslcert,
        keyFile: url.sslkey,
        passphrase: url.sslpassword,
      },
      tlsExtra: url.tlsExtra,
      client: url.client,
      connectTimeoutMs: url.connectTimeout === undefined || url.connectTimeout === 0
        ? undefined
        : Math.max(2, url.connectTimeout) * 1000,
      sql: sqlCheck(input),
      targetSessionAttrs: attrs,
    },
  };
}

/**
 * The TLS choice: the URL's `sslmode` (else pg's `ssl`), then the flags; a
 * URL that says nothing about TLS and no TLS flag is libpq's default,
 * `prefer`. `sslrootcert` is the CA file (with `require`, the chain is
 * verified, as libpq does with a root certificate); `system` means the
 * system's CAs and `verify-full`.
 */
function tlsOf(
  input: KindInput,
  url: PgUrl,
): { tls: TlsChoice; rootFile: string | undefined } {
  const flags = ["tls", "ca-file", "insecure"].some((f) => input.has(f));
  let urlTls: UrlTls = url.sslmode !== undefined
    ? { ...SSLMODES[url.sslmode], said: `sslmode=${url.sslmode}` }
    : url.ssl === true
    ? { mode: "on", verify: "full", said: "ssl=true" }
    : url.ssl === false
    ? { mode: "off", said: "ssl=false" }
    : flags
    ? {}
    : { mode: "prefer", verify: "none" };
  const root = url.sslrootcert;
  if (root === "system") {
    if (url.sslmode !== undefined && url.sslmode !== "verify-full") {
      input.fail(
        undefined,
        `sslrootcert=system needs sslmode=verify-full, got sslmode=${url.sslmode}`,
      );
    }
    urlTls = { mode: "on", verify: "full", said: "sslrootcert=system" };
  }
  if (root !== undefined && root !== "system" && input.has("ca-file")) {
    input.fail("ca-file", "cannot be combined with sslrootcert in the URL");
  }
  const tls = tlsChoice(input, urlTls, "--tls or an sslmode other than disable");
  const rootFile = root !== undefined && root !== "system" && tls.mode !== "off" ? root : undefined;
  // require with a CA file verifies the chain, as libpq does with a root certificate.
  const verify = urlTls.said === "sslmode=require" && (tls.caFile ?? rootFile) !== undefined
    ? "ca" as const
    : tls.verify;
  return { tls: { ...tls, verify }, rootFile };
}

/** `--primary` is `target_session_attrs=primary`; the two must agree. */
function sessionAttrs(input: KindInput, fromUrl: TargetSessionAttrs): TargetSessionAttrs {
  if (!input.bool("primary")) return fromUrl;
  if (fromUrl !== "any" && fromUrl !== "primary") {
    input.fail("primary", `cannot be combined with target_session_attrs=${fromUrl}`);
  }
  return "primary";
}
