/**
 * A mysql condition's target read as the driver reads it (url.ts: mysql2's
 * own parser, or the Go driver's DSN) and combined with its flags: what the
 * probe connects with. `validate` runs it to fail before any probe; the
 * probe runs it again.
 *
 * @module
 */

import type { Fail } from "../../engine/types.ts";
import { type ReachOptions, tlsChoice, type UrlTls } from "../_common/datastore.ts";
import { onePassword, tlsFlagInput } from "../_common/sqlurl.ts";
import type { MysqlOptions } from "./mod.ts";
import { type MysqlTarget, parseMysqlTarget } from "./url.ts";

/** What a mysql probe connects with. */
export interface MysqlResolved extends ReachOptions<string> {
  /** The target's user, else `root`. */
  readonly user: string;
  /** The target's database; undefined: none selected. */
  readonly database: string | undefined;
  readonly sql: MysqlOptions["sql"];
  /** The Unix socket to connect to (`socketPath`, `socket`, a DSN's `unix(...)`); undefined: TCP. */
  readonly socketPath: string | undefined;
  /** The URL's `ssl` options besides the verification: a profile's or inline CA, TLS versions. */
  readonly sslExtra: Readonly<Record<string, unknown>> | undefined;
  /** Driver options from the URL, passed as they are (`charset`, `timezone`, `connectTimeout`, ...). */
  readonly driver: Readonly<Record<string, unknown>>;
}

/**
 * Reads the condition's target and combines it with its flags; a problem is
 * `fail`'s usage error (the target's own at the target, a flag's at the flag).
 */
export function resolveMysql(o: MysqlOptions, fail: Fail): MysqlResolved {
  let t: MysqlTarget;
  try {
    t = parseMysqlTarget(o.url, o.shown);
  } catch (e) {
    return fail(undefined, (e as Error).message);
  }
  const ssl = t.ssl;
  const urlTls: UrlTls = ssl === undefined ? {} : {
    mode: ssl.prefer ? "prefer" : "on",
    verify: !ssl.rejectUnauthorized ? "none" : ssl.verifyIdentity ? "full" : "ca",
    said: ssl.said,
  };
  if (ssl?.ca !== undefined && o.tlsFlags.caFile !== undefined) {
    fail("ca-file", `cannot be combined with the CA certificates of ${ssl.said}`);
  }
  return {
    hp: t.hp,
    socketPath: t.socketPath,
    user: t.user ?? "root",
    database: t.database,
    password: onePassword(o, t.password, fail),
    tls: tlsChoice(tlsFlagInput(o, fail), urlTls, "--tls or ssl in the URL"),
    sslExtra: ssl === undefined
      ? undefined
      : { ...ssl.extra, ...(ssl.ca === undefined ? {} : { ca: ssl.ca }) },
    driver: t.driver,
    sql: o.sql,
  };
}
