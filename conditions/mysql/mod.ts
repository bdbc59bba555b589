/**
 * mysql (alias mariadb): a MySQL or MariaDB server takes a login and answers
 * `SELECT 1` or the user's query (docs/contract.md §5 mysql).
 *
 * The probe talks to the server with `npm:mysql2`, imported only by
 * probe.ts; `errors.ts` decides which server errors a retry can fix.
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
} from "../_common/datastore.ts";
import type { ReachOptions } from "../_common/datastore.ts";
import { PASSWORD_FLAGS } from "../_common/dsurl.ts";
import { SQL_FLAGS, type SqlCheck, sqlCheck } from "../_common/sql.ts";

/** What a mysql condition needs. */
export interface MysqlOptions extends ReachOptions<string> {
  /** The URL's user, else `root`. */
  readonly user: string;
  /** The URL's database; undefined: none selected. */
  readonly database: string | undefined;
  readonly sql: SqlCheck;
}

/** The mysql kind. */
export const mysql = defineKind<MysqlOptions>({
  name: "mysql",
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
  parse: parseOptions,
  aliases: ["mariadb"],
  summary: "a MySQL or MariaDB server takes the login and answers SELECT 1 or a query",
  description:
    'Connects, logs in and runs SELECT 1 (or --query) on each attempt, over one connection that is closed after it. With --expect, the first column of the first row, as the server writes it, must equal the text; with --min-rows, the query must return at least N rows. Pending, with the server\'s own text: refused or reset connections, a server starting or shutting down, too many connections, wrong credentials or an unknown user ("authentication failed for user ...": a user is often created late), a missing database, table or column (migrations not run yet), missing privileges, TLS failures. Fatal (exit 3): a statement the server can never run: a syntax error (ER_PARSE_ERROR 1064, ER_SYNTAX_ERROR 1149), an ambiguous column (1052), a wrong number of columns (1222, 1241), an empty query (1065). The password comes from the URL, --password-env or --password-file and never shows. --tls (verified: chain and host name) or --insecure; without them the connection is plain text.',
  target: {
    shape: "required",
    placeholder: "URL",
    description: "mysql://[user[:password]@]host[:port][/database] (port 3306; mariadb:// too)",
  },
  flags: [...SQL_FLAGS, ...PASSWORD_FLAGS, ...TLS_FLAGS],
  examples: [
    {
      args: "mysql mysql://app@db:3306/app --password-env DB_PASSWORD",
      description: "wait until the app's user can log in to its database",
    },
    {
      args:
        "mariadb mysql://app@db/app --password-file /run/secrets/db --query 'SELECT 1 FROM users LIMIT 1' --min-rows 1",
      description: "wait until the users table exists and has a row",
    },
    {
      args: "mysql mysql://monitor@db.internal/ --password-env DB_PASSWORD --tls --ca-file ca.pem",
      description: "wait for a verified TLS login",
    },
  ],
  load: () => import("./probe.ts").then((m) => m.create),
});

function parseOptions(input: KindInput): { target: string; options: MysqlOptions } {
  const url = dataStoreUrl(input, {
    schemes: ["mysql", "mariadb"],
    defaultPort: 3306,
    form: "mysql://[user[:password]@]host[:port][/database]",
  });
  for (const name of url.params.keys()) {
    input.fail(
      undefined,
      `unsupported URL parameter ${
        JSON.stringify(name)
      } (TLS is set with --tls, --ca-file and --insecure)`,
    );
  }
  return {
    target: url.display,
    options: {
      hp: url.hp,
      user: url.user ?? "root",
      database: url.path,
      password: passwordSource(input, url),
      tls: tlsChoice(input, {}, "--tls"),
      sql: sqlCheck(input),
    },
  };
}
