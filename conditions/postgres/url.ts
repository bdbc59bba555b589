/**
 * postgres targets as libpq takes them (docs/contract.md §5 postgres,
 * "URL forms"): `postgres://` and `postgresql://` URIs with libpq's URI
 * parameters, and libpq's keyword/value strings (`host=db dbname=app`,
 * read as the URI of the same parameters), read by pg's own
 * connection-string parser
 * (`pg-connection-string`, the one `pg` uses). What this module adds to it
 * is what pg's parser leaves to libpq: several hosts (`h1:5432,h2:5433`,
 * `host=h1,h2`), the default socket directory of an empty host, the
 * `dbname` parameter, and the check that every parameter is one libpq or pg
 * knows. Files named by parameters (`sslrootcert`, `sslcert`, `sslkey`) are
 * read at each attempt, never here: they may still be being written.
 *
 * Pure: throws an `Error` whose message is the usage problem.
 *
 * @module
 */

import { parse as pgParse } from "pg-connection-string";
import { looksLikeKeywordValues, parseKeywordValues } from "../../engine/keyword_value.ts";
import { type HostPort, parseHostPort } from "../_common/net.ts";
import { POSTGRES_FORM } from "./mod.ts";

/** Where one host of the target is reached: a TCP host and port, or a Unix socket. */
export type PgEndpoint =
  | { readonly hp: HostPort; readonly socketDir?: undefined }
  | {
    /** The directory of the socket (libpq's `host=/dir`). */
    readonly socketDir: string;
    /** `socketDir` and the port, as the display and the error texts name it. */
    readonly hp: HostPort;
  };

/** What a postgres URL says, each value as libpq reads it. */
export interface PgUrl {
  /** The hosts in the order libpq tries them (`target_session_attrs` then chooses). */
  readonly endpoints: readonly PgEndpoint[];
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly database: string | undefined;
  /** `sslmode` as written (libpq's or pg's `no-verify`); undefined when absent. */
  readonly sslmode: string | undefined;
  /** pg's own `ssl=true|false` (an `sslmode` wins over it). */
  readonly ssl: boolean | undefined;
  /** `sslrootcert`: a CA file, or `system` (the system's CAs). */
  readonly sslrootcert: string | undefined;
  readonly sslcert: string | undefined;
  readonly sslkey: string | undefined;
  readonly sslpassword: string | undefined;
  /** `connect_timeout` in seconds (libpq: under 2 counts as 2; 0 is none). */
  readonly connectTimeout: number | undefined;
  readonly targetSessionAttrs: TargetSessionAttrs;
  readonly loadBalance: boolean;
  /** Parameters passed to pg's Client as they are (startup parameters, timeouts). */
  readonly client: Readonly<Record<string, string>>;
  /** TLS parameters passed to node:tls (`ssl_min_protocol_version` and friends). */
  readonly tlsExtra: Readonly<{ minVersion?: string; maxVersion?: string; sni?: boolean }>;
}

/** libpq's `target_session_attrs`. */
export type TargetSessionAttrs =
  | "any"
  | "read-write"
  | "read-only"
  | "primary"
  | "standby"
  | "prefer-standby";

const SESSION_ATTRS: readonly TargetSessionAttrs[] = [
  "any",
  "read-write",
  "read-only",
  "primary",
  "standby",
  "prefer-standby",
];

/** The sslmode values: libpq's six and pg's `no-verify`. */
export const SSLMODE_VALUES = [
  "disable",
  "allow",
  "prefer",
  "require",
  "verify-ca",
  "verify-full",
  "no-verify",
] as const;

/** Parameters pg's Client takes as they are: startup parameters and pg's timeouts. */
const CLIENT_PARAMS: ReadonlySet<string> = new Set([
  "application_name",
  "fallback_application_name",
  "options",
  "client_encoding",
  "replication",
  "statement_timeout",
  "lock_timeout",
  "idle_in_transaction_session_timeout",
  "query_timeout",
  "sslnegotiation",
]);

/** Parameters waitcmd reads itself (see `PgUrl`). */
const READ_PARAMS: ReadonlySet<string> = new Set([
  "host",
  "hostaddr",
  "port",
  "dbname",
  "user",
  "password",
  "sslmode",
  "ssl",
  "sslrootcert",
  "sslcert",
  "sslkey",
  "sslpassword",
  "connect_timeout",
  "target_session_attrs",
  "load_balance_hosts",
  "ssl_min_protocol_version",
  "ssl_max_protocol_version",
  "sslsni",
  "gssencmode",
  "channel_binding",
]);

/**
 * libpq keywords that change nothing for one probe connection (keepalives of
 * a connection that lives one attempt, a CRL, Kerberos names, pg's switch to
 * libpq's sslmode meanings, which waitcmd always applies): accepted, as
 * libpq accepts them.
 */
const NO_EFFECT_PARAMS: ReadonlySet<string> = new Set([
  "keepalives",
  "keepalives_idle",
  "keepalives_interval",
  "keepalives_count",
  "tcp_user_timeout",
  "sslcompression",
  "sslcrl",
  "sslcrldir",
  "sslcertmode",
  "sslkeylogfile",
  "requiressl",
  "krbsrvname",
  "gsslib",
  "gssdelegation",
  "min_protocol_version",
  "max_protocol_version",
  "uselibpqcompat",
]);

/**
 * libpq keywords whose meaning waitcmd cannot give: refusing says why
 * rather than connecting in another way than libpq would.
 */
const REFUSED_PARAMS: Readonly<Record<string, string>> = {
  service: "waitcmd reads no connection service file; write the service's host, port and dbname",
  passfile: "waitcmd reads no password file of libpq's format; use --password-file",
  require_auth: "pg cannot restrict the authentication methods",
  requirepeer: "pg cannot check the peer of a Unix socket",
  oauth_issuer: "pg has no OAuth authentication",
  oauth_client_id: "pg has no OAuth authentication",
  oauth_client_secret: "pg has no OAuth authentication",
  oauth_scope: "pg has no OAuth authentication",
  scram_client_key: "pg cannot log in with SCRAM keys",
  scram_server_key: "pg cannot log in with SCRAM keys",
};

/**
 * Parameters pg's parser is not given: the files it would read at once
 * (read at each attempt instead), and the TLS words it would warn about on
 * stderr (read here, with libpq's meanings).
 */
const NOT_FOR_PG: ReadonlySet<string> = new Set([
  "sslrootcert",
  "sslcert",
  "sslkey",
  "sslmode",
  "ssl",
]);

/** Where libpq looks for the server's socket when the host is empty (Debian's build, then upstream's). */
export const DEFAULT_SOCKET_DIRS: readonly string[] = ["/var/run/postgresql", "/tmp"];

/** Every URL parameter waitcmd accepts for postgres, for the docs and tests. */
export function knownParams(): string[] {
  return [
    ...READ_PARAMS,
    ...CLIENT_PARAMS,
    ...NO_EFFECT_PARAMS,
  ].sort();
}

/**
 * Parses a postgres target: a libpq URI, or a libpq keyword/value string
 * (`host=db port=5432 dbname=app`, libpq's "Keyword/Value Connection
 * Strings"), which carries the same keywords as the URI's parameters and is
 * read as the URI `postgresql://?keyword=value&...`. `shown` is the target
 * as usage errors may quote it (its password masked). Throws an `Error`
 * naming the problem.
 */
export function parsePostgresUrl(text: string, shown: string): PgUrl {
  if (looksLikeKeywordValues(text)) return parseUri(keywordValueUri(text), shown, "keyword");
  return parseUri(text, shown, "URL parameter");
}

/**
 * The URI that means what the keyword/value string `text` means: every
 * keyword as a URI parameter (libpq: "any of the connection parameters
 * ... can be specified in a URI"; a keyword given twice, the later wins).
 * pg's parser has no reader of this form, so the grammar is read by
 * `parseKeywordValues` (libpq's `conninfo_parse`, one pass).
 */
export function keywordValueUri(text: string): string {
  const r = parseKeywordValues(text);
  if ("error" in r) {
    // The word may be the rest of an unquoted value (a password with a blank): named only when
    // it is a keyword, which is never a secret.
    const known = r.word !== undefined && knownParams().includes(r.word);
    throw new Error(
      r.error === "unterminated quote"
        ? "libpq keyword/value string: a single-quoted value has no closing quote"
        : `libpq keyword/value string: missing "=" after ${
          known ? JSON.stringify(r.word) : "a word that is no keyword"
        } (a value holding blanks is written in single quotes)`,
    );
  }
  const params = new Map<string, string>();
  for (const p of r.pairs) {
    params.delete(p.keyword);
    params.set(p.keyword, p.value);
  }
  return `postgresql://?${new URLSearchParams([...params]).toString()}`;
}

function parseUri(text: string, shown: string, noun: string): PgUrl {
  const head = /^(postgres|postgresql):\/\/([^/?#]*)/i.exec(text);
  if (!head) throw new Error(`expected ${POSTGRES_FORM}, got ${shown}`);
  if (text.includes("#")) {
    throw new Error(`a URL fragment (#...) has no meaning here: ${shown}`);
  }
  const authority = head[2]!;
  const at = authority.lastIndexOf("@");
  const hostList = authority.slice(at + 1);
  const rest = text.slice(head[0].length);
  const q = rest.indexOf("?");
  const query = q < 0 ? "" : rest.slice(q + 1);
  const params = queryParams(query);
  checkNames(params, noun);
  // pg's parser takes one host; the others are libpq's (read below).
  const hosts = hostList === "" ? [] : hostList.split(",");
  // A port out of range is named before pg's parser (the WHATWG URL parser) refuses the URL.
  for (const h of hosts) readPort(splitHostPort(decodeHost(h)).port);
  const firstHost = hosts[0] ?? "";
  const forPg = `${head[1]}://${authority.slice(0, at + 1)}${firstHost}${
    q < 0 ? rest : rest.slice(0, q)
  }${withoutParamsNotForPg(query)}`;
  let config: Record<string, unknown>;
  try {
    config = pgParse(forPg) as Record<string, unknown>;
  } catch {
    throw new Error(`expected ${POSTGRES_FORM}, got ${shown}`);
  }
  const str = (name: string): string | undefined => {
    const v = config[name];
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const endpoints = readEndpoints(hosts, params, config);
  const sslmode = params.get("sslmode");
  if (sslmode !== undefined && !(SSLMODE_VALUES as readonly string[]).includes(sslmode)) {
    throw new Error(
      `sslmode: expected one of ${SSLMODE_VALUES.join(", ")}, got ${JSON.stringify(sslmode)}`,
    );
  }
  return {
    endpoints,
    user: str("user"),
    password: str("password"),
    // libpq's dbname parameter wins over the path, as a later keyword does in libpq.
    database: params.get("dbname") || (str("database") ?? undefined),
    sslmode,
    ssl: readSsl(params.get("ssl")),
    sslrootcert: params.get("sslrootcert") || undefined,
    sslcert: params.get("sslcert") || undefined,
    sslkey: params.get("sslkey") || undefined,
    sslpassword: params.get("sslpassword") || undefined,
    connectTimeout: readTimeout(params.get("connect_timeout")),
    targetSessionAttrs: oneOf("target_session_attrs", params, SESSION_ATTRS, "any"),
    loadBalance: oneOf("load_balance_hosts", params, ["disable", "random"], "disable") === "random",
    client: clientParams(params),
    tlsExtra: tlsExtra(params),
  };
}

/** The query's parameters as pg's parser reads them (URLSearchParams: `+` is a space). */
function queryParams(query: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(query)) out.set(name, value);
  return out;
}

/** An unknown or refused parameter is a usage error naming it (`noun`: "URL parameter" or "keyword"). */
function checkNames(params: ReadonlyMap<string, string>, noun: string): void {
  for (const name of params.keys()) {
    const why = REFUSED_PARAMS[name];
    if (why !== undefined) throw new Error(`${noun} ${JSON.stringify(name)}: ${why}`);
    if (READ_PARAMS.has(name) || CLIENT_PARAMS.has(name) || NO_EFFECT_PARAMS.has(name)) continue;
    throw new Error(
      `unknown ${noun} ${
        JSON.stringify(name)
      } (neither libpq nor pg knows it; see the postgres kind's README for the parameters)`,
    );
  }
  if (params.get("gssencmode") === "require") {
    throw new Error(
      `${noun} "gssencmode": pg has no GSSAPI encryption, so require cannot hold`,
    );
  }
  oneOf("gssencmode", params, ["disable", "prefer", "require"], "prefer");
  oneOf("channel_binding", params, ["disable", "prefer", "require"], "prefer");
}

/** The query without the parameters pg's parser is not given (`NOT_FOR_PG`). */
function withoutParamsNotForPg(query: string): string {
  if (query === "") return "";
  const kept = query.split("&").filter((pair) => {
    const [name] = [...new URLSearchParams(pair).keys()];
    return name === undefined || !NOT_FOR_PG.has(name);
  });
  return kept.length === 0 ? "" : `?${kept.join("&")}`;
}

/**
 * The hosts, each with its port: the URI's list or the `host` parameter's
 * (the parameter wins, as in libpq); one port applies to every host, else
 * there must be one per host. An empty host is libpq's default socket
 * directory; a host starting with `/` is a socket directory.
 */
function readEndpoints(
  uriHosts: readonly string[],
  params: ReadonlyMap<string, string>,
  config: Record<string, unknown>,
): PgEndpoint[] {
  const hostParam = params.get("host") ?? params.get("hostaddr");
  const portParam = params.get("port");
  let pairs: { host: string; port: string | undefined }[];
  if (hostParam !== undefined) {
    pairs = hostParam.split(",").map((host) => ({ host, port: undefined }));
  } else if (uriHosts.length > 1) {
    pairs = uriHosts.map((h) => splitHostPort(decodeHost(h)));
  } else {
    const host = typeof config.host === "string" ? config.host : "";
    const port = typeof config.port === "string" && config.port !== "" && portParam === undefined
      ? config.port
      : undefined;
    pairs = [{ host, port }];
  }
  if (portParam !== undefined) {
    const ports = portParam.split(",");
    if (ports.length !== 1 && ports.length !== pairs.length) {
      throw new Error(
        `could not match ${ports.length} port numbers to ${pairs.length} hosts (libpq's rule)`,
      );
    }
    pairs = pairs.map((p, i) => ({ ...p, port: ports[ports.length === 1 ? 0 : i] }));
  }
  const out: PgEndpoint[] = [];
  for (const { host, port } of pairs) {
    const n = readPort(port);
    if (host === "") {
      for (const dir of DEFAULT_SOCKET_DIRS) out.push(socketEndpoint(dir, n));
    } else if (host.startsWith("/")) {
      out.push(socketEndpoint(host, n));
    } else {
      out.push({ hp: parseHostPort(host.includes(":") ? `[${host}]` : host, n) });
    }
  }
  return out;
}

function socketEndpoint(dir: string, port: number): PgEndpoint {
  return { socketDir: dir, hp: { hostname: dir, port } };
}

/** One `host[:port]` of a URI host list (`[v6]:port` too). */
function splitHostPort(text: string): { host: string; port: string | undefined } {
  // A socket directory may hold colons (`/cloudsql/project:region:instance`).
  if (text.startsWith("/")) return { host: text, port: undefined };
  const v6 = /^\[([^\]]*)\](?::(.*))?$/.exec(text);
  if (v6) return { host: v6[1]!, port: v6[2] };
  const colon = text.lastIndexOf(":");
  return colon < 0
    ? { host: text, port: undefined }
    : { host: text.slice(0, colon), port: text.slice(colon + 1) };
}

function decodeHost(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function readPort(text: string | undefined): number {
  if (text === undefined || text === "") return 5432;
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= 65535)) {
    throw new Error(`port must be from 1 to 65535, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** pg's `ssl` parameter: `true`/`1` TLS verified, `false`/`0` plain text. */
function readSsl(text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  if (text === "true" || text === "1") return true;
  if (text === "false" || text === "0") return false;
  throw new Error(`ssl: expected true, false, 1 or 0, got ${JSON.stringify(text)}`);
}

/** `connect_timeout`: whole seconds, as libpq reads it. */
function readTimeout(text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  if (!/^\d{1,9}$/.test(text.trim())) {
    throw new Error(`connect_timeout: expected whole seconds, got ${JSON.stringify(text)}`);
  }
  return Number(text.trim());
}

function oneOf<T extends string>(
  name: string,
  params: ReadonlyMap<string, string>,
  values: readonly T[],
  fallback: T,
): T {
  const v = params.get(name);
  if (v === undefined) return fallback;
  if (!(values as readonly string[]).includes(v)) {
    throw new Error(`${name}: expected one of ${values.join(", ")}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

function clientParams(params: ReadonlyMap<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of params) if (CLIENT_PARAMS.has(name)) out[name] = value;
  if (out.sslnegotiation !== undefined && !["postgres", "direct"].includes(out.sslnegotiation)) {
    throw new Error(
      `sslnegotiation: expected postgres or direct, got ${JSON.stringify(out.sslnegotiation)}`,
    );
  }
  return out;
}

/** libpq's TLS versions are node's names (`TLSv1.2`). */
function tlsExtra(params: ReadonlyMap<string, string>): PgUrl["tlsExtra"] {
  const versions = ["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
  const version = (name: string) => {
    const v = params.get(name);
    if (v === undefined || v === "") return undefined;
    if (!versions.includes(v)) {
      throw new Error(`${name}: expected one of ${versions.join(", ")}, got ${JSON.stringify(v)}`);
    }
    return v;
  };
  const sni = params.get("sslsni");
  return {
    minVersion: version("ssl_min_protocol_version"),
    maxVersion: version("ssl_max_protocol_version"),
    ...(sni === undefined ? {} : { sni: sni !== "0" }),
  };
}
