/**
 * The mongodb kind end to end against a MongoDB PROTOCOL STAND-IN: no real
 * MongoDB server can be installed on the test machines, so the official
 * driver talks to mongo-java-server (in-memory backend, reporting MongoDB
 * 7.0.0) started on a loopback port. Here what is mongodb's own: --primary
 * on a standalone, another replica set asked for, and usage errors (the
 * driver's URI check included). Started late, restarted, refused, the human
 * line, the JSON report and the password in no output are the live
 * conformance suite's (tests/conformance/live_test.ts). Authentication,
 * secondaries and replica-set names are unit tests of the decision
 * (conditions/mongodb).
 */

import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { serverTest } from "../_kit.ts";
import { mongoMissing, type MongoStandIn, prepareMongo } from "../services/mongo.ts";
import { assertUsageErrors, cliTest, runJson, timing } from "./_cli.ts";

const FAST = ["--timeout", "60s", "--interval", "300ms"];
const PW = "M0ngo-S3cret";

/** The stand-in, made stopped; removing it stops it and deletes its directory. */
async function standIn(): Promise<MongoStandIn & { remove(): Promise<void> }> {
  const m = await prepareMongo();
  return Object.assign(m, { remove: () => m.stop() });
}

serverTest(
  "mongodb kind against a MongoDB protocol stand-in (mongo-java-server, not a real MongoDB)",
  { name: "mongo-java-server stand-in", missing: await mongoMissing(), make: standIn },
  async (m, t) => {
    await m.start();
    await t.step(
      "stand-in: --primary holds for a writable standalone (the alias mongo)",
      async () => {
        const j = await runJson([...FAST, "mongo", m.uri, "--primary"]);
        assertEquals([j.code, j.stderr], [0, ""]);
        const c = j.json.conditions[0]!;
        assertEquals([c.name, c.kind], [`mongo mongodb://127.0.0.1:${m.port}/`, "mongodb"]);
        assertEquals(c.detail, "ping ok: MongoDB 7.0.0, standalone");
      },
    );

    await t.step("stand-in: the driver's URI options are taken and passed on", async () => {
      const options = [
        "appName=ci-orders",
        "connectTimeoutMS=5000",
        "serverSelectionTimeoutMS=5000",
        "directConnection=true",
        "retryReads=true",
        "maxPoolSize=5",
        "readPreference=primaryPreferred",
        "w=majority",
        "authSource=admin",
      ].join("&");
      const j = await runJson([...FAST, "mongodb", `mongodb://127.0.0.1:${m.port}/app?${options}`]);
      assertEquals([j.code, j.stderr], [0, ""]);
      assertEquals(j.json.conditions[0]!.detail, "ping ok: MongoDB 7.0.0, standalone");
    });

    await t.step("stand-in: --replica-set on a standalone times out saying so", async () => {
      const r = await runJson([...timing("2s", "300ms"), "mongodb", m.uri, "--replica-set", "rs0"]);
      assertEquals(r.code, 1);
      assertEquals(
        r.json.conditions[0]!.last_error,
        'not a member of a replica set: standalone, expected "rs0"',
      );
    });
  },
);

cliTest(
  "mongodb kind: the URI's serverSelectionTimeoutMS bounds each attempt (a URI option wins over waitcmd's 2 s)",
  async () => {
    // Nothing listens on port 1: each attempt ends when server selection gives up.
    const r = await runJson([
      ...timing("1500ms", "100ms"),
      "mongodb",
      "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=200&appName=ci",
    ]);
    assertEquals([r.code, r.stderr], [1, ""]);
    const c = r.json.conditions[0]!;
    assert(c.attempts >= 3, `${c.attempts} attempts: ${c.last_error}`);
    assertMatch(c.last_error, /connection refused/);
  },
);

cliTest(
  "mongodb kind: usage errors through the CLI (the driver's URI check included), no password",
  async () => {
    const rows: [string[], string][] = [
      [["mongodb", `postgres://app:${PW}@h/`], "expected mongodb://"],
      [
        ["mongodb", `mongodb://app:${PW}@h/?foo=bar`],
        "the driver rejects the URI: option foo is not supported",
      ],
      [["mongo", `mongodb://app:${PW}@h/`, "--ca-file", "ca.pem"], "--ca-file: needs --tls"],
      [
        ["mongodb", `mongodb://app:${PW}@h/?authSource=admin&authMechanizm=SCRAM-SHA-256`],
        "the driver rejects the URI: option authmechanizm is not supported",
      ],
      [["mongodb", `mongodb+srv://app:${PW}@a,b/`], "mongodb+srv:// takes one host name"],
    ];
    await assertUsageErrors(rows, { secrets: [PW] });
  },
);
