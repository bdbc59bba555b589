/**
 * mysql targets as the driver takes them (docs/contract.md §5 mysql, "URL
 * forms"): a `mysql://` (or `mariadb://`) URL read by mysql2's own
 * `ConnectionConfig.parseUrl`, its query parameters being the driver's
 * connection options (`charset`, `timezone`, `connectTimeout`, `ssl`,
 * `socketPath`, ...); and the Go driver's DSN that wait4x and Go services
 * pass (`user:pw@tcp(host:port)/db`, `user:pw@unix(/path/mysqld.sock)/db`),
 * read by a port of go-sql-driver/mysql's `ParseDSN` (there is no JS one).
 *
 * Throws an `Error` whose message is the usage problem.
 *
 * @module
 */

import mysql2 from "mysql2";
import { type HostPort, parseHostPort } from "../_common/net.ts";

/** What the target says, each value as the driver reads it. */
export interface MysqlTarget {
  /** TCP host and port; for a socket, `localhost` and 3306 (what the driver would show). */
  readonly hp: HostPort;
  /** The Unix socket (`socketPath`), or undefined for TCP. */
  readonly socketPath: string | undefined;
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly database: string | undefined;
  /**
   * TLS from the target: undefined when it says nothing; else the mysql2
   * `ssl` options (a profile's CA, `rejectUnauthorized`, ...).
   */
  readonly ssl: MysqlSsl | undefined;
  /** Driver options passed as they are (`charset`, `timezone`, `connectTimeout`, `compress`, ...). */
  readonly driver: Readonly<Record<string, unknown>>;
  /** Further passwords of multi-factor logins (`password2`, `password3`): secrets. */
  readonly secrets: readonly string[];
}

/** The `ssl` option: TLS on; verification off only with `rejectUnauthorized: false`. */
export interface MysqlSsl {
  readonly rejectUnauthorized: boolean;
  /** mysql2's `verifyIdentity` (the host name is checked too); false unless said, as in mysql2. */
  readonly verifyIdentity: boolean;
  /** The Go driver's `tls=preferred`: TLS when the server offers it, else plain text. */
  readonly prefer?: boolean;
  /** Inline CA certificates (from a profile such as `Amazon RDS`, or the JSON). */
  readonly ca: string | readonly string[] | undefined;
  /** Other node:tls options given in the JSON (`minVersion`, `cert`, `key`, ...). */
  readonly extra: Readonly<Record<string, unknown>>;
  /** How the target said it, for usage errors. */
  readonly said: string;
}

/** The forms shown in usage errors. */
export const MYSQL_FORM =
  "mysql://[user[:password]@]host[:port][/database][?option=value&...], or user:password@tcp(host:port)/database or user:password@unix(/path/mysqld.sock)/database";

/**
 * mysql2's connection options (its `validOptions`) a URL can carry, by what
 * they do here. `pass`: given to the driver with their meaning. `none`:
 * options about results, pools, prepared statements or logging, which a
 * probe that reads every column as text over one connection overrides or has
 * no use for; accepted, as the driver accepts them. `code`: options whose
 * value is a function or an object of code, which a URL cannot carry.
 */
export const MYSQL2_OPTIONS: Readonly<Record<string, "pass" | "none" | "code" | "read">> = {
  // Read here: they place the connection.
  host: "read",
  port: "read",
  user: "read",
  password: "read",
  password1: "read",
  database: "read",
  socketPath: "read",
  ssl: "read",
  // Given to the driver.
  charset: "pass",
  charsetNumber: "pass",
  timezone: "pass",
  connectTimeout: "pass",
  compress: "pass",
  flags: "pass",
  insecureAuth: "pass",
  enableCleartextPlugin: "pass",
  localAddress: "pass",
  connectAttributes: "pass",
  password2: "pass",
  password3: "pass",
  passwordSha1: "pass",
  // No effect on one text-only probe connection.
  bigNumberStrings: "none",
  dateStrings: "none",
  debug: "none",
  decimalNumbers: "none",
  enableKeepAlive: "none",
  keepAliveInitialDelay: "none",
  maxPreparedStatements: "none",
  multipleStatements: "none",
  namedPlaceholders: "none",
  nestTables: "none",
  rowsAsArray: "none",
  stringifyObjects: "none",
  supportBigNumbers: "none",
  trace: "none",
  typeCast: "none",
  disableEval: "none",
  jsonStrings: "none",
  gracefulEnd: "none",
  connectionLimit: "none",
  maxIdle: "none",
  idleTimeout: "none",
  queueLimit: "none",
  resetOnRelease: "none",
  waitForConnections: "none",
  // Code, not a value.
  authPlugins: "code",
  authSwitchHandler: "code",
  infileStreamFactory: "code",
  isServer: "code",
  pool: "code",
  Promise: "code",
  queryFormat: "code",
  stream: "code",
  uri: "code",
};

/**
 * Prisma's and the mysql command-line clients' name of the socket, taken
 * as mysql2's `socketPath` (the form Prisma documents:
 * `mysql://u:p@localhost/db?socket=/run/mysqld/mysqld.sock`).
 */
const SOCKET_ALIAS = "socket";

type ConnectionConfigStatics = {
  parseUrl(url: string): Record<string, unknown>;
  getCharsetNumber(charset: string): number;
  getSSLProfile(name: string): { ca: string[] };
};

const config = (mysql2 as unknown as { ConnectionConfig: ConnectionConfigStatics })
  .ConnectionConfig;

/** mysql2's own reading of a URL (the parity tests' oracle too). */
export function mysql2ParseUrl(url: string): Record<string, unknown> {
  return config.parseUrl(url);
}

/**
 * Parses a mysql target: a `mysql://`/`mariadb://` URL or a Go DSN.
 * `shown` is the target as usage errors may quote it (password masked).
 */
export function parseMysqlTarget(text: string, shown: string): MysqlTarget {
  if (/^(mysql|mariadb):\/\//i.test(text)) return fromUrl(text, shown);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || !text.includes("/")) {
    throw new Error(`expected ${MYSQL_FORM}, got ${shown}`);
  }
  return fromDsn(text, shown);
}

function fromUrl(text: string, shown: string): MysqlTarget {
  if (text.includes("#")) throw new Error(`a URL fragment (#...) has no meaning here: ${shown}`);
  let parsed: Record<string, unknown>;
  // mysql2 reads `mariadb:` the same way: only the scheme's name differs.
  const url = text.replace(/^mariadb:/i, "mysql:");
  try {
    parsed = config.parseUrl(url);
  } catch {
    throw new Error(`expected ${MYSQL_FORM}, got ${shown}`);
  }
  const query = new URL(url).searchParams;
  for (const name of query.keys()) checkOption(name);
  const str = (v: unknown) => typeof v === "string" && v !== "" ? v : undefined;
  const socket = optionText(parsed, "socketPath") ?? optionText(parsed, SOCKET_ALIAS);
  if (parsed.socketPath !== undefined && parsed[SOCKET_ALIAS] !== undefined) {
    throw new Error(`socket and socketPath name the same thing: give one`);
  }
  const host = str(parsed.host) ?? "localhost";
  const port = Number.isInteger(parsed.port) ? parsed.port as number : 3306;
  const hp = hostPort(host, port);
  const driver: Record<string, unknown> = {};
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (MYSQL2_OPTIONS[name] !== "pass") continue;
    driver[name] = value;
    if (/^password[23]$|^passwordSha1$/.test(name)) secrets.push(String(value));
  }
  checkDriverValues(driver);
  return {
    hp,
    socketPath: socket,
    user: str(parsed.user),
    password: str(parsed.password) ?? optionText(parsed, "password1"),
    database: str(parsed.database),
    ssl: readSsl(parsed.ssl),
    driver,
    secrets,
  };
}

/** A query parameter mysql2 does not take, or cannot take from a URL, is a usage error. */
function checkOption(name: string): void {
  if (name === SOCKET_ALIAS) return;
  const kind = MYSQL2_OPTIONS[name];
  if (kind === undefined) {
    throw new Error(
      `unknown URL parameter ${
        JSON.stringify(name)
      } (mysql2 has no such connection option; see the mysql kind's README for the options)`,
    );
  }
  if (kind === "code") {
    throw new Error(`URL parameter ${JSON.stringify(name)}: mysql2 takes code there, not a value`);
  }
  if (["host", "port", "user", "password", "database"].includes(name)) {
    throw new Error(
      `URL parameter ${
        JSON.stringify(name)
      }: mysql2 ignores it in the query (it reads the URL's own ${name}); write it there`,
    );
  }
}

/** The values mysql2 would refuse or replace with a warning on stderr. */
function checkDriverValues(driver: Record<string, unknown>): void {
  const charset = driver.charset;
  if (charset !== undefined) {
    try {
      config.getCharsetNumber(String(charset));
    } catch {
      throw new Error(`charset: mysql2 knows no charset ${JSON.stringify(String(charset))}`);
    }
  }
  const tz = driver.timezone;
  if (tz !== undefined) {
    // URLSearchParams reads `+` as a space; mysql2 turns a leading space back into `+`.
    const text = String(tz).replace(/^ /, "+");
    if (!/^(?:local|Z|[+-]\d\d:\d\d)$/.test(text)) {
      throw new Error(`timezone: expected local, Z or +HH:MM / -HH:MM, got ${JSON.stringify(tz)}`);
    }
    driver.timezone = text;
  }
  const ms = driver.connectTimeout;
  if (ms !== undefined && !(typeof ms === "number" && Number.isInteger(ms) && ms >= 0)) {
    throw new Error(`connectTimeout: expected milliseconds, got ${JSON.stringify(ms)}`);
  }
}

/** mysql2's `ssl`: a JSON object of TLS options, or the name of one of its SSL profiles. */
function readSsl(value: unknown): MysqlSsl | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") {
    let profile: { ca: string[] };
    try {
      profile = config.getSSLProfile(value);
    } catch {
      throw new Error(
        `ssl: expected a JSON object of TLS options (ssl={} or ssl={"rejectUnauthorized":false}) or an SSL profile of mysql2 (ssl=Amazon RDS), got ${
          JSON.stringify(value)
        }`,
      );
    }
    return {
      rejectUnauthorized: true,
      verifyIdentity: false,
      ca: profile.ca,
      extra: {},
      said: `ssl=${value}`,
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(
      `ssl: expected a JSON object of TLS options (ssl={} or ssl={"rejectUnauthorized":false}) or an SSL profile of mysql2 (ssl=Amazon RDS), got ${
        JSON.stringify(value)
      }`,
    );
  }
  const { rejectUnauthorized, verifyIdentity, ca, ...extra } = value as Record<string, unknown>;
  return {
    rejectUnauthorized: rejectUnauthorized !== false,
    verifyIdentity: verifyIdentity === true && rejectUnauthorized !== false,
    ca: typeof ca === "string" || Array.isArray(ca) ? ca as string | string[] : undefined,
    extra,
    said: "ssl",
  };
}

function optionText(parsed: Record<string, unknown>, name: string): string | undefined {
  const v = parsed[name];
  return v === undefined || v === "" ? undefined : String(v);
}

function hostPort(host: string, port: number): HostPort {
  if (!(port >= 1 && port <= 65535)) {
    throw new Error(`port must be from 1 to 65535, got ${JSON.stringify(String(port))}`);
  }
  return parseHostPort(host.includes(":") ? `[${host}]` : host, port);
}

/**
 * The Go driver's parameters (go-sql-driver/mysql's DSN): `tls`, `charset`
 * and `timeout` have their meaning here; the others are about results,
 * packets or the Go side, accepted without effect. A parameter outside this
 * list is, for the Go driver, a system variable to SET: waitcmd sets none,
 * so it is a usage error.
 */
const GO_PARAMS: ReadonlySet<string> = new Set([
  "tls",
  "charset",
  "timeout",
  "collation",
  "allowAllFiles",
  "allowCleartextPasswords",
  "allowFallbackToPlaintext",
  "allowNativePasswords",
  "allowOldPasswords",
  "checkConnLiveness",
  "clientFoundRows",
  "columnsWithAlias",
  "connectionAttributes",
  "interpolateParams",
  "loc",
  "timeTruncate",
  "maxAllowedPacket",
  "multiStatements",
  "parseTime",
  "readTimeout",
  "rejectReadOnly",
  "serverPubKey",
  "writeTimeout",
]);

/**
 * The Go driver's DSN, `[user[:password]@][net[(addr)]]/dbname[?params]`,
 * read as its `ParseDSN` does: the last `/` ends the address, the last `@`
 * before it the user-info, whose first `:` splits user and password (the
 * password is not percent-decoded, as in Go).
 */
function fromDsn(text: string, shown: string): MysqlTarget {
  const slash = text.lastIndexOf("/", firstQuery(text));
  const left = text.slice(0, slash);
  const at = left.lastIndexOf("@");
  const info = at < 0 ? undefined : left.slice(0, at);
  const colon = info?.indexOf(":") ?? -1;
  const user = info === undefined ? undefined : colon < 0 ? info : info.slice(0, colon);
  const password = info === undefined || colon < 0 ? undefined : info.slice(colon + 1);
  const netAddr = left.slice(at + 1);
  const paren = netAddr.indexOf("(");
  if (paren >= 0 && !netAddr.endsWith(")")) {
    throw new Error(`expected ${MYSQL_FORM}, got ${shown} (the address needs its closing ")")`);
  }
  const net = paren < 0 ? netAddr : netAddr.slice(0, paren);
  const addr = paren < 0 ? "" : netAddr.slice(paren + 1, -1);
  const rest = text.slice(slash + 1);
  const q = rest.indexOf("?");
  let database: string;
  try {
    database = decodeURIComponent(q < 0 ? rest : rest.slice(0, q));
  } catch {
    throw new Error(`expected ${MYSQL_FORM}, got ${shown}`);
  }
  const params = new URLSearchParams(q < 0 ? "" : rest.slice(q + 1));
  let socketPath: string | undefined;
  let hp: HostPort = { hostname: "127.0.0.1", port: 3306 };
  if (net === "unix") {
    socketPath = addr === "" ? "/tmp/mysql.sock" : addr;
    hp = { hostname: "localhost", port: 3306 };
  } else if (net === "" || net === "tcp" || net === "tcp4" || net === "tcp6") {
    if (addr !== "") {
      try {
        hp = parseHostPort(addr, 3306);
      } catch (e) {
        throw new Error(`${(e as Error).message.replace(/HOST:PORT/, "HOST[:PORT]")} in ${shown}`);
      }
    }
  } else {
    throw new Error(`unknown network ${JSON.stringify(net)} in ${shown} (tcp or unix)`);
  }
  const driver: Record<string, unknown> = {};
  let ssl: MysqlSsl | undefined;
  for (const [name, value] of params) {
    if (!GO_PARAMS.has(name)) {
      throw new Error(
        `unknown DSN parameter ${
          JSON.stringify(name)
        } (not one of the Go driver's; as a system variable to SET, waitcmd does not set it)`,
      );
    }
    if (name === "tls") ssl = goTls(value);
    if (name === "charset") driver.charset = value.split(",")[0];
    if (name === "collation") driver.charset = value;
    if (name === "timeout") driver.connectTimeout = goDuration(value);
  }
  checkDriverValues(driver);
  return {
    hp,
    socketPath,
    user: user === "" ? undefined : user,
    password,
    database: database === "" ? undefined : database,
    ssl,
    driver,
    secrets: [],
  };
}

/** Where the query starts after the address (the address may hold `?` in a socket path). */
function firstQuery(text: string): number {
  const close = text.lastIndexOf(")");
  const q = text.indexOf("?", close < 0 ? 0 : close);
  return q < 0 ? text.length : q;
}

/** The Go driver's `tls`: true, false, skip-verify, preferred (a registered config name cannot be). */
function goTls(value: string): MysqlSsl | undefined {
  const v = value.toLowerCase();
  if (v === "false" || v === "0") return undefined;
  if (v === "true" || v === "1") {
    return {
      rejectUnauthorized: true,
      verifyIdentity: true,
      ca: undefined,
      extra: {},
      said: "tls=true",
    };
  }
  if (v === "skip-verify" || v === "preferred") {
    return {
      rejectUnauthorized: false,
      verifyIdentity: false,
      prefer: v === "preferred",
      ca: undefined,
      extra: {},
      said: `tls=${v}`,
    };
  }
  throw new Error(
    `tls: expected true, false, skip-verify or preferred, got ${
      JSON.stringify(value)
    } (a TLS config registered in Go code does not exist here: use --tls and --ca-file)`,
  );
}

/** A Go duration (`5s`, `500ms`, `1m30s`) in milliseconds. */
function goDuration(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = text;
  while (rest !== "") {
    const m = /^(\d{1,9}(?:\.\d{1,9})?)(ms|s|m|h)/.exec(rest);
    if (!m) {
      throw new Error(`timeout: expected a Go duration such as 5s, got ${JSON.stringify(text)}`);
    }
    total += Number(m[1]) * units[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  if (text === "") throw new Error(`timeout: expected a Go duration such as 5s, got ""`);
  return Math.round(total);
}
