/**
 * nats targets against the official client's reading of a server list (the
 * oracle): nats.js's own `Servers` (the pool its connect builds from
 * `servers`) for the hosts and ports, in order. nats.js takes no credentials
 * or TLS from a URL, so those are the NATS clients' documented meaning (the
 * Go client's and the `nats` CLI's, docs.nats.io "Connecting"): user-info
 * with a password is a user and password, user-info alone a token, and a
 * `tls://` server asks for TLS.
 */

import { Servers } from "@nats-io/transport-node/lib/nats-base-client.js";
import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, plan } from "../../tests/_kit.ts";
import type { NatsOptions } from "./mod.ts";
import { everyServer } from "./probe.ts";

/** What both sides say about a target. */
interface Extracted {
  servers: [string, number][];
  user: string | undefined;
  password: string | undefined;
  token: string | undefined;
  tls: boolean;
}

/** A row: the target, and the meaning of its user-info and scheme as the NATS docs give it. */
type Row = [target: string, credentials: Omit<Extracted, "servers">];

const NONE = { user: undefined, password: undefined, token: undefined, tls: false };

/** Forms of the NATS documentation ("Connecting": servers, authentication in the URL, TLS). */
const ROWS: Row[] = [
  ["nats://localhost:4222", NONE],
  ["nats://demo.nats.io", NONE],
  ["localhost:4222", NONE],
  ["nats://127.0.0.1:1234", NONE],
  ["nats://[::1]:4222", NONE],
  ["nats://localhost:1222,nats://localhost:1223,nats://localhost:1224", NONE],
  ["nats://a:4222, nats://b:4222", NONE],
  ["nats://a:4222,b:5222,tls://c", { ...NONE, tls: true }],
  ["tls://demo.nats.io:4443", { ...NONE, tls: true }],
  ["nats://myname:password@127.0.0.1:4222", { ...NONE, user: "myname", password: "password" }],
  ["nats://derek:s3cr%40t@a:4222,nats://b:4222", { ...NONE, user: "derek", password: "s3cr@t" }],
  [
    "nats://u:p@a:4222,nats://u:p@b:4222",
    { ...NONE, user: "u", password: "p" },
  ],
  ["nats://s3cr3t@127.0.0.1:4222", { ...NONE, token: "s3cr3t" }],
  ["nats://dag0HTXl4RGg7dXdaJwbC8@localhost:4222", { ...NONE, token: "dag0HTXl4RGg7dXdaJwbC8" }],
  ["tls://tok%2Fen@[2001:db8::1]", { ...NONE, token: "tok/en", tls: true }],
  ["nats://app:pw@localhost", { ...NONE, user: "app", password: "pw" }],
  ["nats://localhost:4222/", NONE],
];

/**
 * The client's pool for the same list. nats.js reads no user-info (it takes
 * `user:pass@host:port` for an IPv6 address and throws), so it gets the
 * list without it.
 */
function oracleServers(target: string): [string, number][] {
  const pool = new Servers();
  pool.setServers(target.split(",").map((s) => s.replace(/^(\s*[a-z]+:\/\/)[^@/]*@/, "$1")));
  return pool.getServers().map((s: { hostname: string; port: number }) => [s.hostname, s.port]);
}

/** waitcmd's reading. */
function ours(target: string): Extracted {
  const o = optionsOf<NatsOptions>(["nats", target]);
  return {
    servers: o.servers.map((s) => [s.hostname, s.port]),
    user: o.user,
    password: o.password !== undefined && "value" in o.password ? o.password.value : undefined,
    token: o.token,
    tls: o.tls.mode === "on",
  };
}

Deno.test("nats targets: every documented form reads as the NATS clients read it", () => {
  for (const [target, credentials] of ROWS) {
    assertEquals([target, ours(target)], [target, {
      servers: oracleServers(target),
      ...credentials,
    }]);
  }
});

Deno.test("nats targets: a token in the user-info is a secret, masked in the name", () => {
  const p = plan(["nats", "nats://s3cr3t-tok@a:4222,nats://b"]);
  assertEquals(p.conditions[0]!.name, "nats nats://***@a:4222,nats://b");
  assertEquals(p.secrets.includes("s3cr3t-tok"), true);
  assertEquals(
    conditionOf(["nats", "nats://app:pw@a,nats://b"]).name,
    "nats nats://app:***@a,nats://b",
  );
  // With a password flag, user-info alone is the user.
  const u = optionsOf<NatsOptions>(["nats", "nats://app@a", "--password-env", "PW"], { PW: "x" });
  assertEquals([u.user, u.token, u.password], ["app", undefined, { value: "x" }]);
});

Deno.test("nats targets: what no NATS client reads is a usage error naming it", () => {
  assertStringIncludes(
    parseError(["nats", "nats://a:4222,nats://b:4222?timeout=2"]),
    'unknown URL parameter "timeout"',
  );
  assertStringIncludes(
    parseError(["nats", "nats://s3cr3t-tok@a", "--token-env", "T"], { T: "other" }),
    "--token-env: cannot be combined with user-info in the URL",
  );
  assertEquals(parseError(["nats", "nats://s3cr3t-tok@a?x=1"]).includes("s3cr3t-tok"), false);
});

Deno.test("nats server list: tried in order until one answers; none: each server's failure", async () => {
  const o = optionsOf<NatsOptions>(["nats", "nats://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"]);
  const tried: number[] = [];
  const refused = () => Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  const judge = (e: unknown) => ({ status: "pending" as const, error: (e as Error).message });
  // deno-lint-ignore require-await
  const up = (port: number) => (hp: { port: number }) => async () => {
    tried.push(hp.port);
    if (hp.port !== port) throw refused();
    return { status: "satisfied" as const, detail: `port ${hp.port}` };
  };
  const signal = new AbortController().signal;
  assertEquals(await everyServer(o, signal, up(2), judge), {
    status: "satisfied",
    detail: "port 2",
  });
  assertEquals(tried, [1, 2]);
  const none = await everyServer(o, signal, up(0), judge);
  assertEquals(
    none.status === "pending" ? none.error : none.status,
    "127.0.0.1:1: connect ECONNREFUSED; 127.0.0.1:2: connect ECONNREFUSED; 127.0.0.1:3: connect ECONNREFUSED",
  );
});
