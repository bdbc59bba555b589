import { assert, assertEquals } from "../../tests/_assert.ts";
import { optionsOf, plan, usageError } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { describeMongoError } from "./errors.ts";
import { type HelloReply, judgeHello, roleOf } from "./judge.ts";
import type { MongodbOptions } from "./mod.ts";
import { driverOptions, SERVER_SELECTION_TIMEOUT_MS } from "./options.ts";

const where = "waitcmd: condition 1 (mongodb)";
const see = "(see: waitcmd help mongodb)";

Deno.test("mongodb parse() keeps the driver's URI and masks only the password", () => {
  const p = plan(["mongodb", "mongodb://app:m0ngo-pw@db-1:27017,db-2/app?replicaSet=rs0"]);
  assertEquals(
    p.conditions[0]!.name,
    "mongodb mongodb://app:***@db-1:27017,db-2/app?replicaSet=rs0",
  );
  assert(p.secrets.includes("m0ngo-pw"));
  const o = p.conditions[0]!.options as MongodbOptions;
  assertEquals(o.uri, "mongodb://app:m0ngo-pw@db-1:27017,db-2/app?replicaSet=rs0");
  assertEquals([o.user, o.password, o.primary, o.replicaSet], ["app", undefined, false, undefined]);
  const s = optionsOf<MongodbOptions>([
    ...["mongo", "mongodb+srv://app@cluster0.example.net", "--password-env", "PW", "--primary"],
    ...["--replica-set", "rs0"],
  ], { PW: "srv-pw-1" });
  assertEquals([s.password, s.primary, s.replicaSet, s.tls.mode], [
    { value: "srv-pw-1" },
    true,
    "rs0",
    "on",
  ]);
  assertEquals(optionsOf<MongodbOptions>(["mongo", "mongodb://h/?tls=true"]).tls.mode, "on");
  assertEquals(optionsOf<MongodbOptions>(["mongo", "mongodb://h", "--tls"]).tls.mode, "on");
});

Deno.test("mongodb parse() rejects bad URIs and combinations", (t) =>
  stepUsageErrors(t, "mongodb"));

Deno.test("mongodb validate() lets the driver reject the URI's options before any probe", async () => {
  assertEquals(
    await usageError(["mongodb", "mongodb://app:m0ngo-pw@h/?foo=bar"]),
    `${where}: the driver rejects the URI: option foo is not supported ${see}`,
  );
  assertEquals(
    await usageError(["mongodb", "mongodb://h/?tls=maybe"]),
    `${where}: the driver rejects the URI: tls/ssl must be either "true" or "false" ${see}`,
  );
  assertEquals(await usageError(["mongodb", "mongodb://h:27017/app?replicaSet=rs0"]), "");
});

Deno.test("driverOptions() keeps one short-lived client: small selection timeout, no retries", () => {
  const o = optionsOf<MongodbOptions>([
    ...["mongodb", "mongodb://app@h", "--password-env", "PW", "--tls", "--insecure"],
  ], {
    PW: "x",
  });
  const d = driverOptions(o, "pw", "CA PEM");
  assertEquals(d.serverSelectionTimeoutMS, SERVER_SELECTION_TIMEOUT_MS);
  assert(SERVER_SELECTION_TIMEOUT_MS <= 2000);
  assertEquals([d.maxPoolSize, d.retryReads, d.retryWrites], [1, false, false]);
  assertEquals(d.auth, { username: "app", password: "pw" });
  assertEquals([d.tls, d.ca, d.tlsInsecure], [true, "CA PEM", true]);
  const plain = driverOptions(
    optionsOf<MongodbOptions>(["mongodb", "mongodb://h"]),
    undefined,
    undefined,
  );
  assertEquals([plain.auth, plain.tls, plain.tlsInsecure], [undefined, undefined, undefined]);
});

// Replies shaped like MongoDB 7.0's own `hello` answers (documented fields; the
// protocol stand-in used by the e2e tests can only produce the standalone one).
const TOPO = { topologyVersion: { counter: 6 }, maxWireVersion: 21, minWireVersion: 0, ok: 1 };
const STANDALONE: HelloReply = { ...TOPO, isWritablePrimary: true, readOnly: false } as HelloReply;
const RS_HOSTS = ["db-1:27017", "db-2:27017", "db-3:27017"];
const PRIMARY = {
  ...TOPO,
  hosts: RS_HOSTS,
  setName: "rs0",
  setVersion: 1,
  isWritablePrimary: true,
  secondary: false,
  primary: "db-1:27017",
  me: "db-1:27017",
} as HelloReply;
const SECONDARY = {
  ...PRIMARY,
  isWritablePrimary: false,
  secondary: true,
  me: "db-2:27017",
} as HelloReply;
const ARBITER = {
  ...PRIMARY,
  isWritablePrimary: false,
  secondary: false,
  arbiterOnly: true,
  me: "db-3:27017",
} as HelloReply;
const NO_CONFIG = {
  ...TOPO,
  isWritablePrimary: false,
  secondary: false,
  info: "Does not have a valid replica set config",
  isreplicaset: true,
} as HelloReply;
const ELECTING = {
  ...TOPO,
  hosts: RS_HOSTS,
  setName: "rs0",
  isWritablePrimary: false,
  secondary: true,
  me: "db-2:27017",
} as HelloReply;
const MONGOS = { ...TOPO, isWritablePrimary: true, msg: "isdbgrid" } as HelloReply;
const LEGACY = { ismaster: true, maxWireVersion: 8, ok: 1 } as HelloReply;

Deno.test("roleOf() names what a hello reply says the server is (replies shaped like a real server's)", () => {
  assertEquals(roleOf(STANDALONE), "standalone");
  assertEquals(roleOf(PRIMARY), 'writable primary of replica set "rs0"');
  assertEquals(roleOf(SECONDARY), 'secondary of replica set "rs0"');
  assertEquals(roleOf({ ...SECONDARY, hidden: true }), 'hidden secondary of replica set "rs0"');
  assertEquals(roleOf(ARBITER), 'arbiter of replica set "rs0"');
  assertEquals(roleOf(NO_CONFIG), "replica-set member without a valid replica set config yet");
  assertEquals(roleOf(MONGOS), "mongos (sharded cluster router)");
  assertEquals(roleOf(LEGACY), "standalone");
});

Deno.test("judgeHello() decides --primary and --replica-set (replies shaped like a real server's)", async (t) => {
  const none = { primary: false, replicaSet: undefined };
  const rows: [
    string,
    HelloReply,
    { primary: boolean; replicaSet: string | undefined },
    unknown,
  ][] = [
    ["standalone, no flags", STANDALONE, none, { ok: true, role: "standalone" }],
    ["secondary, no flags", SECONDARY, none, { ok: true, role: 'secondary of replica set "rs0"' }],
    ["primary, --primary --replica-set rs0", PRIMARY, { primary: true, replicaSet: "rs0" }, {
      ok: true,
      role: 'writable primary of replica set "rs0"',
    }],
    ["secondary, --primary", SECONDARY, { primary: true, replicaSet: undefined }, {
      ok: false,
      error:
        'no writable primary answered: the server is a secondary of replica set "rs0" (it sees db-1:27017 as primary)',
    }],
    ["member during an election, --primary", ELECTING, { primary: true, replicaSet: "rs0" }, {
      ok: false,
      error: 'no writable primary answered: the server is a secondary of replica set "rs0"',
    }],
    ["arbiter, --primary", ARBITER, { primary: true, replicaSet: undefined }, {
      ok: false,
      error:
        'no writable primary answered: the server is an arbiter of replica set "rs0" (it sees db-1:27017 as primary)',
    }],
    ["primary of another set, --replica-set rs1", PRIMARY, { primary: false, replicaSet: "rs1" }, {
      ok: false,
      error: 'replica set is "rs0", expected "rs1"',
    }],
    ["standalone, --replica-set rs0", STANDALONE, { primary: false, replicaSet: "rs0" }, {
      ok: false,
      error: 'not a member of a replica set: standalone, expected "rs0"',
    }],
    ["member without a config yet, --replica-set rs0", NO_CONFIG, {
      primary: false,
      replicaSet: "rs0",
    }, {
      ok: false,
      error:
        'not a member of a replica set: replica-set member without a valid replica set config yet, expected "rs0"',
    }],
    ["mongos, --primary", MONGOS, { primary: true, replicaSet: undefined }, {
      ok: true,
      role: "mongos (sharded cluster router)",
    }],
    ["legacy isMaster reply, --primary", LEGACY, { primary: true, replicaSet: undefined }, {
      ok: true,
      role: "standalone",
    }],
  ];
  for (const [name, hello, wants, want] of rows) {
    await t.step(name, () => assertEquals(judgeHello(hello, wants), want));
  }
});

/** A server selection error as driver 7 builds it: a topology description with per-server state. */
function selectionError(
  message: string,
  type: string,
  servers: { address: string; type: string; setName?: string; error?: unknown }[],
): Error {
  const e = new Error(message);
  e.name = "MongoServerSelectionError";
  return Object.assign(e, {
    reason: { type, servers: new Map(servers.map((s) => [s.address, s])) },
  });
}

const ctx = { user: "app", hostname: "db-1", secrets: ["m0ngo-pw"] };

Deno.test("describeMongoError() gives the driver's failures short texts", async (t) => {
  const refused = (addr: string) =>
    Object.assign(new Error(`connect ECONNREFUSED ${addr}`), {
      name: "MongoNetworkError",
      cause: Object.assign(new Error(`connect ECONNREFUSED ${addr}`), { code: "ECONNREFUSED" }),
    });
  const rows: [unknown, string][] = [
    [
      Object.assign(new Error("Authentication failed."), {
        name: "MongoServerError",
        code: 18,
        codeName: "AuthenticationFailed",
      }),
      'authentication failed for user "app": Authentication failed.',
    ],
    [
      selectionError("connect ECONNREFUSED 127.0.0.1:27017", "Unknown", [
        { address: "db-1:27017", type: "Unknown", error: refused("127.0.0.1:27017") },
        { address: "db-2:27017", type: "Unknown", error: refused("127.0.0.2:27017") },
      ]),
      "connection refused (db-1:27017, db-2:27017)",
    ],
    [
      selectionError("Server selection timed out after 2000 ms", "ReplicaSetNoPrimary", [
        { address: "db-2:27017", type: "RSSecondary", setName: "rs0" },
        { address: "db-3:27017", type: "RSSecondary", setName: "rs0" },
      ]),
      'no primary: db-2:27017 is RSSecondary of "rs0", db-3:27017 is RSSecondary of "rs0"',
    ],
    [
      selectionError("Server selection timed out after 2000 ms", "ReplicaSetNoPrimary", []),
      "no primary: no server answered as a member of the replica set (server selection timed out after 2000 ms)",
    ],
    [
      selectionError("Server selection timed out after 2000 ms", "Unknown", [
        { address: "127.0.0.1:27017", type: "Unknown" },
      ]),
      "no answer from 127.0.0.1:27017 (server selection timed out after 2000 ms)",
    ],
    [
      Object.assign(new Error("The server is in quiesce mode and will shut down"), {
        name: "MongoServerError",
        code: 91,
        codeName: "ShutdownInProgress",
      }),
      "The server is in quiesce mode and will shut down (ShutdownInProgress)",
    ],
    [
      Object.assign(new Error("node is not in primary or recovering state"), {
        name: "MongoServerError",
        code: 13436,
      }),
      "node is not in primary or recovering state (NotPrimaryOrSecondary)",
    ],
    [
      Object.assign(new Error("no such command: 'saslStart'"), {
        name: "MongoServerError",
        code: 59,
        codeName: "CommandNotFound",
      }),
      "no such command: 'saslStart' (CommandNotFound)",
    ],
    [
      Object.assign(new Error("connection 1 to 127.0.0.1:27017 closed"), {
        name: "MongoNetworkError",
        cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      }),
      "connection reset by peer",
    ],
  ];
  for (const [e, want] of rows) {
    await t.step(want, () => assertEquals(describeMongoError(e, ctx), want));
  }
});

Deno.test("describeMongoError() scrubs the password and URIs from driver texts", () => {
  const e = Object.assign(new Error("bad uri mongodb://app:m0ngo-pw@h and m0ngo-pw"), {
    name: "MongoParseError",
  });
  assertEquals(describeMongoError(e, ctx), "bad uri mongodb://app:***@h and ***");
});
