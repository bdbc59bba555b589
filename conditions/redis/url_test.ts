/**
 * redis targets against node-redis's own URL parser (`RedisClient.parseURL`,
 * the oracle): for every form of the client's documentation, what waitcmd
 * extracts (host, port, socket, user, password, database, TLS) is what the
 * client extracts.
 */

import { RedisClient } from "@redis/client";
import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError } from "../../tests/_kit.ts";
import type { RedisOptions } from "./mod.ts";

/** What both sides say about a URL. */
interface Extracted {
  host: string | undefined;
  port: number;
  socket: string | undefined;
  user: string | undefined;
  password: string | undefined;
  database: number;
  tls: boolean;
}

/** The client's reading (its defaults filled in: port 6379, database 0). */
function oracle(url: string): Extracted {
  const p = RedisClient.parseURL(url) as {
    socket: { host?: string; port?: number; path?: string; tls?: boolean };
    username?: string;
    password?: string;
    database?: number;
  };
  return {
    host: p.socket.path === undefined ? p.socket.host : undefined,
    port: p.socket.path === undefined ? p.socket.port ?? 6379 : 0,
    socket: p.socket.path,
    user: p.username,
    password: p.password,
    database: p.database ?? 0,
    tls: p.socket.tls === true,
  };
}

/** waitcmd's reading. */
function ours(url: string): Extracted {
  const o = optionsOf<RedisOptions>(["redis", url]);
  return {
    host: o.socket === undefined ? o.hp.hostname : undefined,
    port: o.socket === undefined ? o.hp.port : 0,
    socket: o.socket,
    user: o.user,
    password: o.password !== undefined && "value" in o.password ? o.password.value : undefined,
    database: o.database,
    tls: o.tls.mode === "on",
  };
}

/** Forms of node-redis's documentation (README "Usage", client-configuration.md `url`). */
const FORMS = [
  "redis://localhost",
  "redis://localhost:6379",
  "redis://127.0.0.1:6380",
  "redis://cache.internal",
  "redis://[::1]:6379",
  "redis://:s3cret@localhost:6379",
  "redis://alice:foobared@awesome.redis.server:6380",
  "redis://alice:foobared@awesome.redis.server:6380/2",
  "redis://app:p%40ss%3Aw%2Frd@cache:6379/0",
  "redis://cache/15",
  "redis://cache:6379/",
  "redis://alice@cache:6379/1",
  "rediss://cache.example.com:6380",
  "rediss://app:pw@cache.example.com:6380/4",
  "rediss://:pw@[2001:db8::1]:6390/1",
  "unix:///run/redis/redis.sock",
  "unix:///tmp/redis.sock?db=3",
  "unix://:s3cret@/var/run/redis.sock",
  "unix://alice:foobared@/var/run/redis.sock?db=7",
  "unix:///var/run/my%20redis.sock",
];

Deno.test("redis targets: every documented form reads as node-redis's parseURL reads it", () => {
  for (const url of FORMS) assertEquals([url, ours(url)], [url, oracle(url)]);
});

Deno.test("redis targets: a query parameter the client does not read is a usage error naming it", () => {
  assertStringIncludes(
    parseError(["redis", "redis://cache/?db=2"]),
    'unknown URL parameter "db" (a redis:// URL takes none; the database is its path, /N)',
  );
  assertStringIncludes(
    parseError(["redis", "redis://cache?protocol=3"]),
    'unknown URL parameter "protocol"',
  );
  assertStringIncludes(
    parseError(["redis", "unix:///tmp/r.sock?db=1&timeout=5"]),
    'unknown URL parameter "timeout" (a unix:// URL takes only db=N)',
  );
});

Deno.test("redis targets: what the client refuses is a usage error (database, socket path)", () => {
  for (
    const [url, words] of [
      ["redis://cache/abc", 'expected a database number after the host, got "abc"'],
      ["redis://cache/-1", 'expected a database number after the host, got "-1"'],
      ["unix:///tmp/r.sock?db=x", 'expected a database number in db=, got "x"'],
      ["unix:///", "expected redis://"],
      ["unix://cache:6379", "expected redis://"],
      ["memcached://cache", "expected redis://"],
    ] as const
  ) {
    assertStringIncludes(parseError(["redis", url]), words);
  }
  assertStringIncludes(
    parseError(["redis", "unix:///tmp/r.sock", "--tls"]),
    "--tls: cannot be combined with a unix:// socket URL",
  );
});

Deno.test("redis targets: a socket URL's password is masked in the name", () => {
  const o = optionsOf<RedisOptions>(["redis", "unix://:s3cret@/tmp/r.sock?db=2"]);
  assertEquals([o.socket, o.database, o.password], ["/tmp/r.sock", 2, { value: "s3cret" }]);
  assertEquals(
    conditionOf(["redis", "unix://:s3cret@/tmp/r.sock?db=2"]).name,
    "redis unix://:***@/tmp/r.sock?db=2",
  );
  const e = parseError(["redis", "unix://:s3cret@/tmp/r.sock?db=2&x=1"]);
  assertStringIncludes(e, 'unknown URL parameter "x"');
  assertEquals(e.includes("s3cret"), false);
});
