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
import { SESSION_READ_MAX, TLS_FLAGS } from "../_common/datastore.ts";
import { looksLikeKeywordValues, maskKeywordValues } from "../../engine/keyword_value.ts";
import { isCredentialName } from "../../engine/typed_secrets.ts";
import { type MaskedUrl, maskUrlPassword, PASSWORD_FLAGS } from "../_common/dsurl.ts";
import { SQL_FLAGS, type SqlCheck, sqlCheck } from "../_common/sql.ts";
import { type TargetAndFlags, targetAndFlags } from "../_common/sqlurl.ts";

/** The form shown in usage errors (the declaration's own: it loads no library). */
export const POSTGRES_FORM =
  "postgres://[user[:password]@][host][:port][,host2[:port2]...][/database][?param=value&...]";

/** libpq's keyword/value form, as usage errors name it. */
export const POSTGRES_KEYWORD_FORM =
  "'host=... port=... dbname=... user=...' (libpq's keyword/value)";

/**
 * A keyword/value target as shown: the values of credential keywords
 * (`password`, `sslpassword`) masked where they stand, and registered. A
 * malformed string is shown masked as a whole from its first credential
 * keyword on (validate names the problem).
 */
function maskKeywordTarget(text: string): MaskedUrl {
  const kv = maskKeywordValues(text, isCredentialName, "***");
  if (kv !== undefined) {
    return { display: kv.display, user: undefined, password: undefined, secrets: kv.secrets };
  }
  // From the start of the first word holding "pass" (password, sslpassword) on.
  const pass = text.toLowerCase().indexOf("pass");
  const at = pass < 0
    ? -1
    : Math.max(text.lastIndexOf(" ", pass), text.lastIndexOf("\t", pass)) + 1;
  return {
    display: at < 0 ? text : `${text.slice(0, at)} ***`.trimStart(),
    user: undefined,
    password: undefined,
    secrets: at < 0 ? [] : [text.slice(at).trim()],
  };
}

/**
 * What a postgres condition is given: the URL as written and the flags. The URL is read by pg's
 * parser in `validate` (exit 2 before any probe) and again by the probe (resolve.ts), so that
 * the declaration loads no library: help and usage errors stay as fast as before.
 */
export interface PostgresOptions extends TargetAndFlags {
  readonly sql: SqlCheck;
  /** --primary: target_session_attrs=primary. */
  readonly primary: boolean;
}

/** The postgres kind. */
export const postgres = defineKind<PostgresOptions>({
  name: "postgres",
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
  parse: parseOptions,
  aliases: ["postgresql", "pg"],
  summary: "a PostgreSQL server takes the login and answers SELECT 1 or a query",
  description:
    "Connects, logs in and runs SELECT 1 (or --query) on each attempt, over one connection that is closed after it. The target is a libpq connection URI, read by pg's own parser, or libpq's keyword/value string (host=db port=5432 dbname=app user=app sslmode=disable; values with blanks in single quotes), read as the URI of the same keywords, with libpq's parameters and meanings: user, password and dbname as parameters, host naming a socket directory (host=/run/postgresql, or the directory percent-encoded as the host; an empty host is libpq's default directory), several hosts tried in order (h1:5432,h2:5433; target_session_attrs, load_balance_hosts), sslmode, application_name, connect_timeout, options and the rest; a parameter neither libpq nor pg knows is a usage error. With --expect, the first column of the first row, as the server writes it (t/f for booleans), must equal the text; with --min-rows, the query must return at least N rows; with --primary (target_session_attrs=primary), the server must not be in recovery. Pending, with the server's own text: refused or reset connections, a server starting up, shutting down or in recovery, wrong credentials (\"password authentication failed for user ...\": a user is often created late), a missing database, table, column or function (migrations not run yet), TLS failures. Fatal (exit 3): a statement the server can never run, such as an SQL syntax error (SQLSTATE class 42, except missing objects and privileges). The password comes from the URL (user-info or password=), --password-env or --password-file, never from PG* variables or ~/.pgpass, and never shows. TLS follows sslmode as libpq: without it, prefer (TLS when the server has it, unverified, else plain text); disable, allow/prefer, require (unverified), verify-ca, verify-full; sslrootcert, sslcert and sslkey name files read at each attempt. --tls requires verified TLS.",
  target: {
    shape: "required",
    placeholder: "URL",
    description:
      "postgres://[user[:password]@][host][:port][,host2[:port2]...][/database][?param=value&...] (libpq's URI; port 5432), or libpq's keyword/value string 'host=db port=5432 dbname=app user=app' (the same keywords; a value with blanks in single quotes)",
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
  async validate(options, fail) {
    const { resolvePostgres } = await import("./resolve.ts");
    resolvePostgres(options, fail);
  },
  load: () => import("./probe.ts").then((m) => m.create),
});

function parseOptions(input: KindInput): { target: string; options: PostgresOptions } {
  const text = input.target ?? "";
  // The URL's password and credential parameters (password, sslpassword) are secrets at once.
  const masked = looksLikeKeywordValues(text) ? maskKeywordTarget(text) : maskUrlPassword(text);
  for (const s of masked.secrets) input.secret(s);
  const shown = JSON.stringify(masked.display);
  if (!/^postgres(ql)?:\/\//i.test(text) && !looksLikeKeywordValues(text)) {
    input.fail(undefined, `expected ${POSTGRES_FORM} or ${POSTGRES_KEYWORD_FORM}, got ${shown}`);
  }
  return {
    target: masked.display,
    options: {
      ...targetAndFlags(input, masked),
      sql: sqlCheck(input),
      primary: input.bool("primary"),
    },
  };
}
