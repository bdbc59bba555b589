/**
 * redis (alias valkey): a Redis or Valkey server answers PING with PONG,
 * and optionally holds a key, a value, or a replication role
 * (docs/contract.md §5 redis).
 *
 * The probe talks to the server with node-redis (`npm:@redis/client`),
 * imported only by probe.ts; `errors.ts` decides what a retry can fix.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import { passwordSource, SESSION_READ_MAX, TLS_FLAGS, tlsChoice } from "../_common/datastore.ts";
import type { ReachOptions } from "../_common/datastore.ts";
import { PASSWORD_FLAGS } from "../_common/dsurl.ts";
import { checkRegexSyntax, validateRegex } from "../_common/textmatch.ts";
import { parseRedisTarget } from "./url.ts";

/** What a redis condition needs. */
export interface RedisOptions extends ReachOptions<string | undefined> {
  /** The ACL user; undefined: the default user. */
  readonly user: string | undefined;
  /** A Unix socket's path (a unix:// URL); `hp` is then unused. */
  readonly socket: string | undefined;
  /** The database number of the URL's path (or a unix:// URL's db=N), 0 by default. */
  readonly database: number;
  /** --key: the key must exist. */
  readonly key: string | undefined;
  /** --equals: the key's value must be this. */
  readonly equals: string | undefined;
  /** --expect-key KEY=REGEX: the key's value (a string) must match this (RE2, search). */
  readonly matches: string | undefined;
  /** --role: the server's replication role. */
  readonly role: "master" | "replica" | undefined;
}

/** The redis kind. */
export const redis = defineKind<RedisOptions>({
  name: "redis",
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
  parse: parseOptions,
  aliases: ["valkey"],
  summary: "a Redis or Valkey server answers PING, and holds a key or a role",
  description:
    "Connects (one connection per attempt, closed after it, never reconnecting by itself), logs in (AUTH with the URL's user as an ACL user, with an empty password when none is given, as node-redis does, else the default user), selects the URL's database and sends PING, which must answer PONG. With --key the key must exist; with --equals its value must be that text; --expect-key KEY (wait4x's form) is --key KEY, and --expect-key KEY=REGEX also wants the key's string value to match REGEX (RE2, searched in its first 64 Ki characters); with --role the server's replication role (ROLE) must be master or replica. Pending, with the server's own text: refused or reset connections, a server loading its dataset (LOADING), wrong credentials or an unknown user (\"authentication failed for user ...\"), a missing key or another value, another role, a command the user may not run (NOPERM), TLS failures. The password comes from the URL, --password-env or --password-file and never shows. TLS with rediss:// or --tls (verified: chain and host name), --ca-file and --insecure.",
  target: {
    shape: "required",
    placeholder: "URL",
    description:
      "redis://[[user]:password@]host[:port][/db] or rediss:// for TLS (port 6379; valkey:// and valkeys:// too), or unix://[[user]:password@]/path/to/socket[?db=N]",
  },
  flags: [
    { name: "key", type: "string", placeholder: "KEY", description: "the key exists" },
    {
      name: "equals",
      type: "string",
      placeholder: "TEXT",
      description: "with --key: the key's value (a string) is TEXT",
    },
    {
      name: "expect-key",
      type: "string",
      placeholder: "KEY[=REGEX]",
      description:
        "the key exists; with =REGEX its value (a string) matches REGEX (split at the first =)",
    },
    {
      name: "role",
      type: "enum",
      values: ["master", "replica"],
      placeholder: "ROLE",
      description: "the server's replication role is master or replica",
    },
    ...PASSWORD_FLAGS,
    ...TLS_FLAGS,
  ],
  examples: [
    { args: "redis redis://cache:6379", description: "wait until Redis answers PING" },
    {
      args: "redis redis://cache:6379 --expect-key 'deploy:status=^(done|ok)$'",
      description: "wait until the key deploy:status holds done or ok",
    },
    {
      args: "valkey rediss://app@cache.internal:6380/2 --password-env DB_PASSWORD --key app:ready",
      description: "wait until an ACL user sees a key, over TLS",
    },
    {
      args: "redis unix:///run/redis/redis.sock?db=2 --key app:ready",
      description: "over the server's Unix socket, in database 2",
    },
    {
      args:
        "redis redis://cache --password-file /run/secrets/redis --key schema:version --equals 7 --role master",
      description: "wait until the primary holds the expected schema version",
    },
  ],
  validate: (options, fail) => validateRegex(options.matches, fail, "", "expect-key"),
  load: () => import("./probe.ts").then((m) => m.create),
});

/**
 * `--key`/`--equals`, or wait4x's `--expect-key KEY[=REGEX]` (split at the first `=`, as
 * wait4x splits it: a key with `=` in its name needs `--key`).
 */
function keyCheck(input: KindInput): Pick<RedisOptions, "key" | "equals" | "matches"> {
  const key = input.string("key");
  if (key === "") input.fail("key", "expected a key, got an empty string");
  const equals = input.string("equals");
  if (equals !== undefined && key === undefined && !input.has("expect-key")) {
    input.fail("equals", "needs --key");
  }
  const expect = input.string("expect-key");
  if (expect === undefined) return { key, equals, matches: undefined };
  for (const f of ["key", "equals"]) {
    if (input.has(f)) input.fail("expect-key", `cannot be combined with --${f}`);
  }
  const eq = expect.indexOf("=");
  const name = eq < 0 ? expect : expect.slice(0, eq);
  if (name === "") {
    input.fail("expect-key", `expected KEY or KEY=REGEX, got ${JSON.stringify(expect)}`);
  }
  if (eq < 0) return { key: name, equals: undefined, matches: undefined };
  const matches = expect.slice(eq + 1);
  checkRegexSyntax(input, "expect-key", matches);
  return { key: name, equals: undefined, matches };
}

function parseOptions(input: KindInput): { target: string; options: RedisOptions } {
  const url = parseRedisTarget(input);
  const password = passwordSource(input, url);
  if (url.socket !== undefined) {
    for (const f of ["tls", "ca-file", "insecure"]) {
      if (input.has(f)) input.fail(f, "cannot be combined with a unix:// socket URL");
    }
  }
  const tls = tlsChoice(input, url.tls ? { mode: "on" } : {}, "--tls or a rediss:// URL");
  const { key, equals, matches } = keyCheck(input);
  return {
    target: url.display,
    options: {
      // A socket has no host: the path stands in where a host name is shown (errors).
      hp: url.hp ?? { hostname: url.socket ?? "", port: 0 },
      socket: url.socket,
      user: url.user,
      password,
      database: url.database,
      tls,
      key,
      equals,
      matches,
      role: input.string("role") as RedisOptions["role"],
    },
  };
}
