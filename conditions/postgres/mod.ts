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
  dataStoreUrl,
  passwordSource,
  SESSION_READ_MAX,
  TLS_FLAGS,
  tlsChoice,
  type UrlTls,
} from "../_common/datastore.ts";
import type { ReachOptions } from "../_common/datastore.ts";
import { PASSWORD_FLAGS } from "../_common/dsurl.ts";
import { SQL_FLAGS, type SqlCheck, sqlCheck } from "../_common/sql.ts";

/** What a postgres condition needs. */
export interface PostgresOptions extends ReachOptions<string> {
  /** The role to log in as: the URL's user, else `postgres`. */
  readonly user: string;
  /** The URL's database, else the user's name (as libpq does). */
  readonly database: string;
  readonly sql: SqlCheck;
  /** --primary: pg_is_in_recovery() must be false. */
  readonly primary: boolean;
}

/** The URL's `sslmode` as a TLS mode and verification (libpq's meanings). */
const SSLMODES: Readonly<Record<string, UrlTls>> = {
  disable: { mode: "off" },
  allow: { mode: "prefer", verify: "none" },
  prefer: { mode: "prefer", verify: "none" },
  require: { mode: "on", verify: "none" },
  "verify-ca": { mode: "on", verify: "ca" },
  "verify-full": { mode: "on", verify: "full" },
};

/** The postgres kind. */
export const postgres = defineKind<PostgresOptions>({
  name: "postgres",
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
  parse: parseOptions,
  aliases: ["postgresql", "pg"],
  summary: "a PostgreSQL server takes the login and answers SELECT 1 or a query",
  description:
    "Connects, logs in and runs SELECT 1 (or --query) on each attempt, over one connection that is closed after it. With --expect, the first column of the first row, as the server writes it (t/f for booleans), must equal the text; with --min-rows, the query must return at least N rows; with --primary, the server must not be in recovery (pg_is_in_recovery() is false). Pending, with the server's own text: refused or reset connections, a server starting up, shutting down or in recovery, wrong credentials (\"authentication failed for user ...\": a user is often created late), a missing database, table, column or function (migrations not run yet), TLS failures. Fatal (exit 3): a statement the server can never run, such as an SQL syntax error (SQLSTATE class 42, except missing objects and privileges). The password comes from the URL, --password-env or --password-file, never from PG* variables or ~/.pgpass, and never shows. TLS follows the URL's sslmode (disable, allow/prefer: TLS when the server has it, require: unverified, verify-ca, verify-full) or --tls (verified); without either the connection is plain text.",
  target: {
    shape: "required",
    placeholder: "URL",
    description: "postgres://[user[:password]@]host[:port][/database][?sslmode=MODE] (port 5432)",
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
        "postgresql postgres://postgres@db-1/postgres?sslmode=verify-full --ca-file ca.pem --primary",
      description: "wait until a verified TLS login reaches a primary, not a standby",
    },
  ],
  load: () => import("./probe.ts").then((m) => m.create),
});

function parseOptions(input: KindInput): { target: string; options: PostgresOptions } {
  const url = dataStoreUrl(input, {
    schemes: ["postgres", "postgresql"],
    defaultPort: 5432,
    form: "postgres://[user[:password]@]host[:port][/database][?sslmode=MODE]",
  });
  let urlTls: UrlTls = {};
  for (const [name, value] of url.params) {
    if (name !== "sslmode") {
      input.fail(
        undefined,
        `unsupported URL parameter ${JSON.stringify(name)} (supported: sslmode)`,
      );
    }
    const mode = SSLMODES[value];
    if (!mode) {
      input.fail(
        undefined,
        `sslmode: expected one of ${Object.keys(SSLMODES).join(", ")}, got ${
          JSON.stringify(value)
        }`,
      );
    }
    urlTls = { ...mode, said: `sslmode=${value}` };
  }
  const password = passwordSource(input, url);
  const tls = tlsChoice(input, urlTls, "--tls or an sslmode other than disable");
  // require with a CA file verifies the chain, as libpq does with a root certificate.
  const verified = urlTls.said === "sslmode=require" && tls.caFile !== undefined
    ? { ...tls, verify: "ca" as const }
    : tls;
  const user = url.user ?? "postgres";
  return {
    target: url.display,
    options: {
      hp: url.hp,
      user,
      database: url.path ?? user,
      password,
      tls: verified,
      sql: sqlCheck(input),
      primary: input.bool("primary"),
    },
  };
}
