/**
 * rabbitmq targets against amqplib's reading of a URL (the oracle): its
 * exported `credentialsFromUrl` for the login, and for the rest what its
 * `connect` does with a URL string (node's URL for host and port, the path
 * unescaped as the vhost, `/` when empty, the query parsed by
 * node:querystring, first value winning, and read by `openFrames`).
 */

import { URL } from "node:url";
import QS from "node:querystring";
import { createRequire } from "node:module";
import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { optionsOf, parseError } from "../../tests/_kit.ts";
import type { RabbitmqOptions } from "./mod.ts";

/** amqplib's own login reading (lib/connect.js; the package exports no subpath, so by file). */
const { credentialsFromUrl } = createRequire(import.meta.url)(
  new URL("../../node_modules/amqplib/lib/connect.js", import.meta.url).pathname,
) as {
  credentialsFromUrl(parts: URL): { response(): { toString(): string } };
};

/** What both sides say about a URL. */
interface Extracted {
  host: string;
  port: number;
  tls: boolean;
  user: string;
  password: string;
  vhost: string;
  options: Record<string, string | number>;
}

/** The numeric options `openFrames` reads with `parseInt`, and the locale. */
const NUMERIC = ["frameMax", "channelMax", "heartbeat", "maxFrameSize"];

/** amqplib's reading of a URL string (lib/connect.js). */
function oracle(url: string): Extracted {
  const parts = new URL(url);
  const tls = parts.protocol === "amqps:";
  const path = parts.pathname ? parts.pathname.substring(1) : "";
  const query = QS.parse(parts.search ? parts.search.slice(1) : "");
  const options: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(query)) {
    const first = Array.isArray(v) ? v[0]! : v!;
    options[k] = NUMERIC.includes(k) ? parseInt(first, 10) : first;
  }
  const [, user, password] = credentialsFromUrl(parts).response().toString().split("\0");
  return {
    host: parts.hostname.replace(/^\[|\]$/g, ""),
    port: parseInt(parts.port, 10) || (tls ? 5671 : 5672),
    tls,
    user: user!,
    password: password!,
    vhost: path ? QS.unescape(path) : "/",
    options,
  };
}

/** waitcmd's reading. */
function ours(url: string): Extracted {
  const o = optionsOf<RabbitmqOptions>(["rabbitmq", url]);
  return {
    host: o.hp.hostname,
    port: o.hp.port,
    tls: o.tls.mode === "on",
    user: o.user,
    password: o.password !== undefined && "value" in o.password ? o.password.value : "",
    vhost: o.vhost,
    options: { ...o.tuning },
  };
}

/** Forms of amqplib's documentation (channel_api `connect`) and RabbitMQ's URI spec. */
const FORMS = [
  "amqp://localhost",
  "amqp://localhost:5672",
  "amqp://127.0.0.1/",
  "amqp://guest:guest@localhost:5672/",
  "amqp://user:pass@host.domain:10000/vhost",
  "amqp://user%61:%61pass@ho%61st:10000/v%2fhost",
  "amqp://app:s%40cr%3At@mq/%2F",
  "amqp://app:pw@mq/%2Fprod",
  "amqp://app:pw@mq/prod%2Forders",
  "amqp://app@mq/prod",
  "amqp://[::1]:5673/dev",
  "amqps://mq.example.com",
  "amqps://app:pw@mq.example.com:5671/prod",
  "amqp://localhost?heartbeat=30",
  "amqp://localhost/?frameMax=8192",
  "amqp://app:pw@mq/prod?heartbeat=10&channelMax=16&frameMax=131072",
  "amqp://mq/?locale=en_US",
  "amqp://mq/?maxFrameSize=262144&heartbeat=0",
  "amqps://app:pw@[2001:db8::5]:5999/a%20b?locale=de_DE&frameMax=4096",
];

Deno.test("rabbitmq targets: every documented form reads as amqplib reads it", () => {
  for (const url of FORMS) assertEquals([url, ours(url)], [url, oracle(url)]);
});

Deno.test("rabbitmq targets: a parameter amqplib does not read is a usage error naming it", () => {
  for (const name of ["connection_timeout", "frame_max", "auth_mechanism", "FRAMEMAX"]) {
    assertStringIncludes(
      parseError(["rabbitmq", `amqp://mq/?${name}=1`]),
      `unknown URL parameter "${name}" (amqplib reads frameMax, channelMax, heartbeat, maxFrameSize, locale)`,
    );
  }
  assertStringIncludes(
    parseError(["rabbitmq", "amqp://mq/?heartbeat=soon"]),
    'URL parameter heartbeat: expected a whole number, got "soon"',
  );
  assertStringIncludes(
    parseError(["rabbitmq", "amqp://mq/?maxFrameSize=100"]),
    "URL parameter maxFrameSize: amqplib takes 0 (no limit) or at least 4096, got 100",
  );
  assertStringIncludes(
    parseError(["rabbitmq", "amqp://mq/?locale="]),
    "URL parameter locale: expected a value, got an empty string",
  );
});
