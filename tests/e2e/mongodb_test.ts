/**
 * The mongodb kind end to end against a MongoDB PROTOCOL STAND-IN: no real
 * MongoDB server can be installed on the test machines, so the official
 * driver talks to mongo-java-server (in-memory backend, reporting MongoDB
 * 7.0.0) started on a loopback port. It covers what the stand-in can
 * produce: started late, ready (a standalone, writable), restarted during a
 * run, refused, another replica set asked for, usage errors, and the
 * password in no output. Authentication, secondaries and replica-set names
 * are tested as unit tests of the decision (conditions/mongodb).
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { mongoMissing, type MongoStandIn, prepareMongo } from "../services/mongo.ts";
import { runCli, runJson, runJsonl, usageErrorLine } from "./_cli.ts";

const FAST = ["--timeout", "60s", "--interval", "300ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const EXIT_AFTER_VERDICT_MS = 2000;
const PW = "M0ngo-S3cret";

function assertNoSecret(texts: string[], secret: string) {
  for (const t of texts) assert(!t.includes(secret), `the password leaked:\n${t}`);
}

Deno.test({
  name: "mongodb kind against a MongoDB protocol stand-in (mongo-java-server, not a real MongoDB)",
  ignore: ignoreWithout("mongo-java-server stand-in", await mongoMissing()),
  ...opts,
  fn: mongoTests,
});

async function mongoTests(t: Deno.TestContext) {
  const m: MongoStandIn = await prepareMongo();
  try {
    await t.step(
      "stand-in started late: connection refused, then satisfied; exit at once",
      async () => {
        const r = await runJsonl(
          [...FAST, "mongodb", m.uri],
          { onAttempt: (a) => (a.attempt === 1 && !a.ok ? m.start() : undefined) },
        );
        assertEquals(r.code, 0, r.stderr);
        assertEquals(r.stderr, "");
        assertEquals(r.attempts[0]!.error, `connection refused (127.0.0.1:${m.port})`);
        assertEquals(r.report.conditions[0]!.detail, "ping ok: MongoDB 7.0.0, standalone");
        assert(
          (r.exitedAt - r.lastAttemptAt) < EXIT_AFTER_VERDICT_MS,
          `${(r.exitedAt - r.lastAttemptAt)} ms`,
        );
      },
    );

    await t.step(
      "stand-in ready: --primary holds for a writable standalone; text and JSON",
      async () => {
        const r = await runCli([...FAST, "mongo", m.uri, "--primary"]);
        assertEquals([r.code, r.stdout], [0, ""]);
        assertMatch(
          r.stderr,
          new RegExp(
            `\\[ok\\] mongo mongodb://127\\.0\\.0\\.1:${m.port}/ attempt 1 \\(\\d+\\.\\ds\\): ping ok: MongoDB 7\\.0\\.0, standalone`,
          ),
        );
        const j = await runJson([...FAST, "mongodb", m.uri]);
        assertEquals([j.code, j.stderr], [0, ""]);
        assertEquals(j.json.conditions[0]!.kind, "mongodb");
      },
    );

    await t.step("stand-in: --replica-set on a standalone times out saying so", async () => {
      const r = await runJson([
        "--timeout",
        "2s",
        "--interval",
        "300ms",
        "mongodb",
        m.uri,
        "--replica-set",
        "rs0",
      ]);
      assertEquals(r.code, 1);
      assertEquals(
        r.json.conditions[0]!.last_error,
        'not a member of a replica set: standalone, expected "rs0"',
      );
    });

    await t.step(
      "stand-in restarted during the run: the streak breaks and starts over",
      async () => {
        let restart: Promise<void> | undefined;
        const r = await runJsonl(
          ["--timeout", "90s", "--interval", "300ms", "--successes", "8", "mongodb", m.uri],
          {
            onAttempt: (a) => {
              if (a.ok && restart === undefined) {
                restart = (async () => {
                  await m.halt();
                  // Longer than the driver's server selection (SERVER_SELECTION_TIMEOUT_MS, 2 s),
                  // which would otherwise wait through the outage inside one attempt.
                  await new Promise((res) => setTimeout(res, 3500));
                  await m.start();
                })();
                return restart;
              }
            },
          },
        );
        assertEquals(r.code, 0, r.stderr);
        const firstFail = r.attempts.findIndex((a) => !a.ok);
        assert(
          firstFail > 0,
          `no failed attempt after the first success: ${JSON.stringify(r.attempts)}`,
        );
        assertMatch(r.attempts[firstFail]!.error, /connection (refused|reset|closed)|closed/);
        assert(r.attempts.slice(firstFail).filter((a) => a.ok).length >= 8);
        assert(
          (r.exitedAt - r.lastAttemptAt) < EXIT_AFTER_VERDICT_MS,
          `${(r.exitedAt - r.lastAttemptAt)} ms`,
        );
      },
    );

    await t.step(
      "stand-in: a password in the URI never shows (it has no authentication)",
      async () => {
        const uri = `mongodb://app:${PW}@127.0.0.1:${m.port}/app`;
        const args = ["--timeout", "1500ms", "--interval", "300ms", "mongodb", uri];
        const text = await runCli(args);
        const json = await runJson(args);
        const jsonl = await runJsonl(args, { onAttempt: () => {} });
        assertEquals([text.code, json.code, jsonl.code], [1, 1, 1]);
        // The stand-in answers the login with "no such command: 'saslStart'".
        assertStringIncludes(json.json.conditions[0]!.last_error, "saslStart");
        assertEquals(
          json.json.conditions[0]!.name,
          `mongodb mongodb://app:***@127.0.0.1:${m.port}/app`,
        );
        assertEquals(json.stderr, "");
        assertNoSecret([text.stdout, text.stderr, json.stdout, jsonl.stdout, jsonl.stderr], PW);
      },
    );
  } finally {
    await m.stop();
  }
}

Deno.test({
  name: "mongodb kind: usage errors through the CLI (the driver's URI check included), no password",
  ...opts,
  fn: async (t) => {
    const rows: [string[], string][] = [
      [["mongodb", `postgres://app:${PW}@h/`], "expected mongodb://"],
      [
        ["mongodb", `mongodb://app:${PW}@h/?foo=bar`],
        "the driver rejects the URI: option foo is not supported",
      ],
      [["mongo", `mongodb://app:${PW}@h/`, "--ca-file", "ca.pem"], "--ca-file: needs --tls"],
      [["mongodb", `mongodb+srv://app:${PW}@a,b/`], "mongodb+srv:// takes one host name"],
    ];
    for (const [args, fragment] of rows) {
      await t.step(args.join(" ").replace(PW, "***"), async () => {
        const line = usageErrorLine(await runCli(args));
        assertStringIncludes(line, fragment);
        assert(!line.includes(PW), line);
      });
    }
  },
});

Deno.test({
  name: "mongodb kind: a refused port times out with the connection error",
  ...opts,
  fn: async () => {
    const r = await runJson([
      "--timeout",
      "3s",
      "--interval",
      "300ms",
      "mongodb",
      "mongodb://127.0.0.1:1/",
    ]);
    assertEquals([r.code, r.stderr], [1, ""]);
    assertEquals(r.json.conditions[0]!.last_error, "connection refused (127.0.0.1:1)");
  },
});
