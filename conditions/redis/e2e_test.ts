/**
 * The redis kind end to end against real Redis 7 servers (Debian's package,
 * throwaway instances from conditions/redis/_service.ts, ACL users only), for
 * what is redis's own: a key set late (--key), then its value (--equals), a
 * value matched by wait4x's --expect-key KEY=REGEX,
 * pending states (no credentials: NOAUTH; a database the server does not
 * have; --tls on a plain server), a server loading its dataset, a replica
 * promoted late, and usage errors. A server started late or restarted, a
 * wrong password, a user created late, --password-env and --password-file,
 * the human line, the JSON report, the password in no output and TLS
 * (rediss:// verified, unverified, untrusted, misnamed) are the live
 * conformance suite's (tests/conformance/live_test.ts).
 */

import { assert, assertEquals } from "../../tests/_assert.ts";
import { serverTest } from "../../tests/_kit.ts";
import { makeRedis, REDIS_PASSWORD, redisMissing } from "./_service.ts";
import { assertUsageErrors, runJson, runLate, timing } from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const SERVICE = { name: "Redis", missing: await redisMissing(), make: makeRedis };

serverTest("redis kind against a real Redis server", SERVICE, async (r0, t) => {
  const url = r0.url();
  const shown = url.replace(REDIS_PASSWORD, "***");
  await t.step("--role master with the alias valkey", async () => {
    const r = await runJson([...FAST, "valkey", url, "--role", "master"]);
    assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"]);
    const c = r.json.conditions[0]!;
    assertEquals([c.name, c.kind, c.target], [`valkey ${shown}`, "redis", shown]);
    assertEquals(c.detail, "PONG, role master");
  });

  await t.step("a key set late (--key), then its value (--equals)", async () => {
    const k = await runLate(
      [...FAST, "redis", r0.url(undefined, undefined, 2), "--key", "app:ready"],
      () => r0.cli("-n", "2", "SET", "app:ready", "1"),
    );
    assertEquals([k.code, k.stderr], [0, ""]);
    assertEquals(k.attempts[0]!.error, 'key "app:ready" does not exist');
    assertEquals(k.report.conditions[0]!.detail, 'PONG, key "app:ready" exists');
    await r0.cli("SET", "schema:version", "6");
    const v = await runLate(
      [...FAST, "redis", url, "--key", "schema:version", "--equals", "7"],
      () => r0.cli("SET", "schema:version", "7"),
    );
    assertEquals(v.code, 0);
    assertEquals(v.attempts[0]!.error, 'key "schema:version" is "6", expected "7"');
    assertEquals(v.report.conditions[0]!.detail, 'PONG, key "schema:version" is "7"');
  });

  await t.step(
    "--expect-key KEY=REGEX (wait4x's form): the value matches, late, never",
    async () => {
      await r0.cli("SET", "deploy:status", "running");
      await r0.cli("HSET", "deploy:hash", "f", "v");
      const now = await runJson([
        ...FAST,
        ...["redis", url, "--expect-key", "deploy:status=^run"],
        ...["--", "redis", url, "--expect-key", "deploy:hash"], // KEY alone: exists, any type
      ]);
      assertEquals([now.code, now.stderr], [0, ""]);
      assertEquals(now.json.conditions.map((c) => c.detail), [
        'PONG, key "deploy:status" matches /^run/',
        'PONG, key "deploy:hash" exists',
      ]);
      const late = await runLate(
        [...FAST, "redis", url, "--expect-key", "deploy:status=^(done|ok)$"],
        () => r0.cli("SET", "deploy:status", "done"),
      );
      assertEquals([late.code, late.stderr], [0, ""]);
      assertEquals(
        late.attempts[0]!.error,
        'key "deploy:status" is "running", which does not match /^(done|ok)$/',
      );
      assertEquals(
        late.report.conditions[0]!.detail,
        'PONG, key "deploy:status" matches /^(done|ok)$/',
      );
      // The value is the server's text: the run's secret (the URL's password) is masked in it.
      await r0.cli("SET", "deploy:note", `failed with ${REDIS_PASSWORD} set`);
      const never = await runJson([
        ...timing("4s", "500ms"),
        ...["redis", url, "--expect-key", "deploy:note=^ok"],
        ...["--", "redis", url, "--expect-key", "deploy:hash=x"],
        ...["--", "redis", url, "--expect-key", "deploy:none=x"],
      ]);
      assertEquals([never.code, never.stderr, never.json.status], [1, "", "timeout"]);
      assertEquals(never.json.conditions.map((c) => c.last_error), [
        'key "deploy:note" is "failed with *** set", which does not match /^ok/',
        'key "deploy:hash" holds no string value: WRONGTYPE Operation against a key holding the wrong kind of value',
        'key "deploy:none" does not exist',
      ]);
      assert(!JSON.stringify(never.json).includes(REDIS_PASSWORD));
    },
  );

  await t.step(
    "pending: no credentials (the default user is off), a database it does not have, --tls on a plain server",
    async () => {
      const r = await runJson([
        ...timing("1s", "200ms"),
        ...["redis", `redis://127.0.0.1:${r0.port}`],
        ...["--", "redis", r0.url(undefined, undefined, 99)],
        ...["--", "redis", url, "--tls", "--insecure"],
      ]);
      assertEquals([r.code, r.stderr], [1, ""]);
      assertEquals(r.json.conditions.map((c) => c.last_error), [
        'authentication failed for user "default": NOAUTH Authentication required.',
        "ERR DB index is out of range",
        // The server waits for a line that a TLS ClientHello never ends: the attempt hangs.
        "no answer before the deadline (attempt 1 still running)",
      ]);
    },
  );
});

serverTest(
  "redis kind waits for a server loading its dataset (LOADING, then PONG)",
  SERVICE,
  async (r0) => {
    await r0.cli("DEBUG", "POPULATE", "3000");
    await r0.cli("SAVE");
    await r0.stop();
    // 1 ms per key: about 3 s of loading, answering LOADING meanwhile.
    await r0.launch(["key-load-delay 1000", "loading-process-events-interval-bytes 1024"]);
    const r = await runJson(["--timeout", "60s", "--interval", "200ms", "redis", r0.url()]);
    assertEquals([r.code, r.stderr], [0, ""]);
    const c = r.json.conditions[0]!;
    assertEquals(c.last_error, "LOADING Redis is loading the dataset in memory");
    assert(c.attempts >= 2);
  },
);

serverTest("redis --role: a replica, then promoted late", SERVICE, async (primary) => {
  const replica = await makeRedis({ replicaOf: { port: primary.port } });
  try {
    const ok = await runJson([...FAST, "redis", replica.url(), "--role", "replica"]);
    assertEquals([ok.code, ok.json.conditions[0]!.detail], [0, "PONG, role replica"]);
    const r = await runLate(
      [...FAST, "redis", replica.url(), "--role", "master"],
      () => replica.cli("REPLICAOF", "NO", "ONE"),
    );
    assertEquals([r.code, r.stderr], [0, ""]);
    assertEquals(r.attempts[0]!.error, "role is replica, expected master");
    assertEquals(r.report.conditions[0]!.detail, "PONG, role master");
  } finally {
    await replica.remove();
  }
});

serverTest(
  "redis kind over a Unix socket (unix:///path, as wait4x passes it), with a database index, and a user without a password",
  SERVICE,
  async (r0) => {
    const info = `app:${REDIS_PASSWORD}@`;
    const r = await runJson([...FAST, "redis", `unix://app@${r0.socket}`, "--password-env", "PW"], {
      env: { PW: REDIS_PASSWORD },
    });
    assertEquals([r.code, r.stderr], [0, ""]);
    assertEquals(r.json.conditions[0]!.target, `unix://app@${r0.socket}`);
    assertEquals(r.json.conditions[0]!.detail, "PONG");
    // The key is in database 3 only: seen through ?db=3 (the socket) and /3 (TCP), not in 0.
    const k = await runLate(
      [...FAST, "redis", `unix://${info}${r0.socket}?db=3`, "--key", "sock:ready"],
      () => r0.cli("-n", "3", "SET", "sock:ready", "1"),
    );
    assertEquals([k.code, k.stderr], [0, ""]);
    assertEquals(k.attempts[0]!.error, 'key "sock:ready" does not exist');
    assertEquals(k.report.conditions[0]!.name, `redis unix://app:***@${r0.socket}?db=3`);
    const both = await runJson([
      ...timing("1s", "200ms"),
      ...["redis", r0.url(undefined, undefined, 3), "--key", "sock:ready"],
      ...["--", "redis", `unix://${info}${r0.socket}`, "--key", "sock:ready"],
      ...["--", "redis", `unix://${info}${r0.dir}/missing.sock`],
    ]);
    assertEquals(both.code, 1);
    const [tcp, db0, missing] = both.json.conditions;
    assertEquals([tcp!.satisfied, db0!.last_error], [true, 'key "sock:ready" does not exist']);
    assertEquals(missing!.satisfied, false);
    assertEquals(missing!.last_error, `no such file or directory: ${r0.dir}/missing.sock`);
    assert(!JSON.stringify(both.json).includes(REDIS_PASSWORD));
    // A user without a password logs in with an empty one, as node-redis does: a nopass ACL user.
    await r0.cli("ACL", "SETUSER", "probe", "on", "nopass", "~*", "+@all");
    const nopass = await runJson([
      ...FAST,
      ...["redis", `redis://probe@127.0.0.1:${r0.port}/3`, "--key", "sock:ready"],
      ...["--", "redis", `unix://probe@${r0.socket}?db=3`, "--key", "sock:ready"],
    ]);
    assertEquals([nopass.code, nopass.stderr], [0, ""]);
  },
);

Deno.test("redis kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (redis)";
  const see = "(see: waitcmd help redis)";
  const form =
    "redis://[[user]:password@]host[:port][/db], rediss://... or unix://[[user]:password@]/path/to/socket[?db=N]";
  const cases: [string[], string][] = [
    [["redis", "cache:6379"], `${where}: expected ${form}, got "cache:6379" ${see}`],
    [
      ["redis", "redis://cache/x"],
      `${where}: expected a database number after the host, got "x" ${see}`,
    ],
    [
      ["redis", "redis://cache/0?timeout=3"],
      `${where}: unknown URL parameter "timeout" (a redis:// URL takes none; the database is its path, /N) ${see}`,
    ],
    [
      ["redis", "redis://:sEcr3t@cache", "--password-env", "PW"],
      `${where}: --password-env: cannot be combined with a password in the URL ${see}`,
    ],
    [
      ["redis", "unix:///run/redis.sock?db=1&timeout=3"],
      `${where}: unknown URL parameter "timeout" (a unix:// URL takes only db=N) ${see}`,
    ],
    [["redis", "redis://cache", "--equals", "v"], `${where}: --equals: needs --key ${see}`],
    [
      ["redis", "redis://cache", "--key", ""],
      `${where}: --key: expected a key, got an empty string ${see}`,
    ],
    [
      ["redis", "redis://cache", "--expect-key", "=^ok$"],
      `${where}: --expect-key: expected KEY or KEY=REGEX, got "=^ok$" ${see}`,
    ],
    [
      ["redis", "redis://cache", "--expect-key", ""],
      `${where}: --expect-key: expected KEY or KEY=REGEX, got "" ${see}`,
    ],
    [
      ["redis", "redis://cache", "--expect-key", "k=(ok"],
      `${where}: --expect-key: invalid regular expression /(ok/: unterminated group ${see}`,
    ],
    [
      ["redis", "redis://cache", "--expect-key", "k=(?=ok)"],
      `${where}: --expect-key: not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): invalid or unsupported Perl syntax: (?= ${see}`,
    ],
    [
      ["redis", "redis://cache", "--expect-key", "k=ok", "--key", "k"],
      `${where}: --expect-key: cannot be combined with --key ${see}`,
    ],
    [
      ["redis", "redis://cache", "--expect-key", "k", "--equals", "v"],
      `${where}: --expect-key: cannot be combined with --equals ${see}`,
    ],
    [
      ["redis", "redis://cache", "--role", "primary"],
      `${where}: --role: expected one of master, replica, got "primary" ${see}`,
    ],
    [
      ["redis", "redis://cache", "--ca-file", "ca.pem"],
      `${where}: --ca-file: needs --tls or a rediss:// URL ${see}`,
    ],
  ];
  await assertUsageErrors(cases, { exact: true, env: { PW: "env-pw-zq" }, secrets: ["sEcr3t"] });
});
