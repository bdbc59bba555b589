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
import { SESSION_READ_MAX, TLS_FLAGS } from "../_common/datastore.ts";
import { type MaskedUrl, maskUrlPassword, PASSWORD_FLAGS } from "../_common/dsurl.ts";
import { SQL_FLAGS, type SqlCheck, sqlCheck } from "../_common/sql.ts";
import { type TargetAndFlags, targetAndFlags } from "../_common/sqlurl.ts";

/**
 * What a mysql condition is given: the target as written and the flags. The target is read by
 * mysql2's parser in `validate` (exit 2 before any probe) and again by the probe (resolve.ts),
 * so that the declaration loads no library: help and usage errors stay as fast as before.
 */
export interface MysqlOptions extends TargetAndFlags {
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
    "Connects, logs in and runs SELECT 1 (or --query) on each attempt, over one connection that is closed after it. The target is a mysql:// URL read by mysql2's own parser, its parameters the driver's connection options (charset, timezone, connectTimeout, ssl, socketPath or Prisma's socket, compress, ...), or the Go driver's DSN that wait4x takes (user:pw@tcp(host:port)/db, user:pw@unix(/path/mysqld.sock)/db, with its tls, charset and timeout); an option the driver does not know is a usage error. With --expect, the first column of the first row, as the server writes it, must equal the text; with --min-rows, the query must return at least N rows. Pending, with the server's own text: refused or reset connections, a server starting or shutting down, too many connections, wrong credentials or an unknown user (\"authentication failed for user ...\": a user is often created late), a missing database, table or column (migrations not run yet), missing privileges, TLS failures. Fatal (exit 3): a statement the server can never run: a syntax error (ER_PARSE_ERROR 1064, ER_SYNTAX_ERROR 1149), an ambiguous column (1052), a wrong number of columns (1222, 1241), an empty query (1065). The password comes from the URL, --password-env or --password-file and never shows. TLS: the URL's ssl option (a JSON object such as {\"rejectUnauthorized\":false}, or a profile such as Amazon RDS), the DSN's tls, or --tls (verified: chain and host name) with --ca-file or --insecure; without them the connection is plain text.",
  target: {
    shape: "required",
    placeholder: "URL",
    description:
      "mysql://[user[:password]@]host[:port][/database][?option=value&...] (port 3306; mariadb:// too), or the Go DSN user:pw@tcp(host:port)/db, user:pw@unix(/path)/db",
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
      args: "mysql 'mysql://app@localhost/app?socketPath=/run/mysqld/mysqld.sock&charset=utf8mb4'",
      description: "wait for a server on its Unix socket",
    },
    {
      args: "mysql mysql://monitor@db.internal/ --password-env DB_PASSWORD --tls --ca-file ca.pem",
      description: "wait for a verified TLS login",
    },
  ],
  async validate(options, fail) {
    const { resolveMysql } = await import("./resolve.ts");
    resolveMysql(options, fail);
  },
  load: () => import("./probe.ts").then((m) => m.create),
});

function parseOptions(input: KindInput): { target: string; options: MysqlOptions } {
  const text = input.target ?? "";
  const masked = maskTarget(text);
  for (const s of masked.secrets) input.secret(s);
  return {
    target: masked.display,
    options: {
      ...targetAndFlags(input, masked),
      sql: sqlCheck(input),
    },
  };
}

/**
 * The target as displayed, its password masked: a URL by the data-store
 * rule, a Go DSN (`user:***@tcp(db:3306)/app`) by the same rule on its
 * user-info (up to the last `@` before the address).
 */
function maskTarget(text: string): MaskedUrl {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return maskUrlPassword(text);
  const slash = text.lastIndexOf("/", text.includes(")") ? text.lastIndexOf(")") + 1 : undefined);
  const at = text.lastIndexOf("@", slash < 0 ? undefined : slash);
  const colon = text.indexOf(":");
  if (at < 0 || colon < 0 || colon > at) {
    return { display: text, user: undefined, password: undefined, secrets: [] };
  }
  const password = text.slice(colon + 1, at);
  return {
    display: `${text.slice(0, colon)}:***${text.slice(at)}`,
    user: text.slice(0, colon),
    password,
    secrets: password === "" ? [] : [password],
  };
}
