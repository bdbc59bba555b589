/**
 * redis: the target's URL forms, read as node-redis (`@redis/client`,
 * `RedisClient.parseURL`) reads them (docs/contract.md §5 redis):
 *
 * - `redis://[[user]:password@]host[:port][/db]` and `rediss://` (TLS), the
 *   IANA redis scheme; `valkey://` and `valkeys://` mean the same;
 * - `unix://[[user]:password@]/path/to/socket[?db=N]`, a server's Unix
 *   socket.
 *
 * The client reads no query parameter of a `redis://` URL and only `db` of
 * a `unix://` one: any other is a usage error naming it (the client would
 * drop it silently). Pure; conditions/redis/url_test.ts checks every form
 * against the client's own parser.
 *
 * @module
 */

import type { KindInput } from "../../engine/types.ts";
import { dataStoreUrl } from "../_common/datastore.ts";
import { maskUrlPassword } from "../_common/dsurl.ts";
import type { HostPort } from "../_common/net.ts";

/** The network forms, for usage errors. */
export const FORM =
  "redis://[[user]:password@]host[:port][/db], rediss://... or unix://[[user]:password@]/path/to/socket[?db=N]";

/** What a redis target says. */
export interface RedisTarget {
  /** The host and port; undefined for a Unix socket. */
  readonly hp: HostPort | undefined;
  /** The Unix socket's path; undefined for a host. */
  readonly socket: string | undefined;
  /** The user name, decoded; undefined when the URL has none (the default user). */
  readonly user: string | undefined;
  /** The password, decoded; undefined when the URL has none. */
  readonly password: string | undefined;
  /** The database index: the path's (`/N`) or `db=N`'s, 0 by default. */
  readonly database: number;
  /** Whether the scheme asks for TLS (`rediss://`, `valkeys://`). */
  readonly tls: boolean;
  /** The URL as displayed (only the password masked). */
  readonly display: string;
}

/** The client's Unix form: `unix://[user[:password]@]/path[?query][#fragment]`. */
const UNIX = /^unix:\/\/(?:([^:@/]*)(?::([^@/]*))?@)?(\/[^?#]*)(?:\?([^#]*))?(#.*)?$/i;

/** Reads the target, registering its password as a secret before any usage error. */
export function parseRedisTarget(input: KindInput): RedisTarget {
  const text = input.target ?? "";
  if (/^unix:/i.test(text)) return unixTarget(input, text);
  const url = dataStoreUrl(input, {
    schemes: ["redis", "rediss", "valkey", "valkeys"],
    defaultPort: 6379,
    form: FORM,
  });
  rejectParams(
    input,
    url.params.keys(),
    [],
    "a redis:// URL takes none; the database is its path, /N",
  );
  return {
    hp: url.hp,
    socket: undefined,
    user: url.user,
    password: url.password,
    database: url.path === undefined ? 0 : databaseIndex(input, url.path, "after the host"),
    tls: url.scheme === "rediss" || url.scheme === "valkeys",
    display: url.display,
  };
}

/** `unix://[user[:password]@]/path[?db=N]`. */
function unixTarget(input: KindInput, text: string): RedisTarget {
  const masked = maskUrlPassword(text);
  for (const s of masked.secrets) input.secret(s);
  const shown = JSON.stringify(masked.display);
  const m = UNIX.exec(text);
  if (!m || m[3] === "/") input.fail(undefined, `expected ${FORM}, got ${shown}`);
  if (m[5] !== undefined) {
    input.fail(undefined, `a URL fragment (#...) has no meaning here: ${shown}`);
  }
  const password = m[2] === undefined || m[2] === "" ? undefined : decode(m[2]);
  if (password !== undefined) input.secret(password);
  const params = new URLSearchParams(m[4] ?? "");
  rejectParams(input, params.keys(), ["db"], "a unix:// URL takes only db=N");
  const db = params.get("db");
  return {
    hp: undefined,
    socket: decode(m[3]!),
    user: m[1] === undefined || m[1] === "" ? undefined : decode(m[1]),
    password,
    database: db === null ? 0 : databaseIndex(input, db, "in db="),
    tls: false,
    display: masked.display,
  };
}

/** Fails on the first query parameter the client does not read (not in `known`). */
function rejectParams(
  input: KindInput,
  names: Iterable<string>,
  known: readonly string[],
  why: string,
): void {
  for (const name of names) {
    if (known.includes(name)) continue;
    input.fail(undefined, `unknown URL parameter ${JSON.stringify(name)} (${why})`);
  }
}

/**
 * The database index as the client reads it (`Number(text)`, which must be
 * a number), and as the server's SELECT takes it: a whole number, 0 or more.
 */
function databaseIndex(input: KindInput, text: string, where: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isSafeInteger(n) || n < 0) {
    input.fail(undefined, `expected a database number ${where}, got ${JSON.stringify(text)}`);
  }
  return n;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
