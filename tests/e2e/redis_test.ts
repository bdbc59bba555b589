/**
 * The redis kind end to end against real Redis 7 servers (Debian's package,
 * throwaway instances from tests/services/redis.ts, ACL users only): a ready
 * server, one started late, one restarted during the run, one loading its
 * dataset, a password fixed late, a user created late, a key set late, a
 * replica promoted late, TLS, timeouts, usage errors, and the password in no
 * output.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { freePort } from "../services/_util.ts";
import { makeRedis, type Redis, REDIS_PASSWORD, redisMissing } from "../services/redis.ts";
import { makePki } from "../services/tls.ts";
import { runCli, runJson, runJsonl, runLate, usageErrorLine } from "./_cli.ts";
import { assertSecretsAbsent } from "./_datastore.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const missing = await redisMissing();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "redis kind against a real Redis server",
  ignore: ignoreWithout("Redis", missing),
  ...opts,
  fn: async (t) => {
    const r0: Redis = await makeRedis();
    const url = r0.url();
    const shown = url.replace(REDIS_PASSWORD, "***");
    try {
      await t.step("a ready server: text on stderr only, one attempt, exits at once", async () => {
        const t0 = performance.now();
        const r = await runCli([...FAST, "redis", url]);
        const wall = performance.now() - t0;
        assertEquals([r.code, r.stdout], [0, ""]);
        assertMatch(
          r.stderr,
          new RegExp(`\\[ok\\] redis ${escape(shown)} attempt 1 \\(\\d+\\.\\ds\\): PONG`),
        );
        assert(!r.stderr.includes(REDIS_PASSWORD), r.stderr);
        assert(wall < 5000, `a satisfied run took ${wall.toFixed(0)} ms`);
      });

      await t.step(
        "nothing of the driver outlives the verdict: a then command runs undisturbed",
        async () => {
          const r = await runCli([
            "-o",
            "json",
            ...FAST,
            "redis",
            url,
            "--",
            "then",
            "sh",
            "-c",
            "sleep 1; echo then-done",
          ]);
          assertEquals([r.code, r.stderr], [0, ""]);
          assert(r.stdout.trimEnd().endsWith("then-done"), r.stdout);
          assertStringIncludes(r.stdout, '"status": "satisfied"');
        },
      );

      await t.step("JSON report with the alias valkey; stderr stays empty", async () => {
        const r = await runJson([...FAST, "valkey", url, "--role", "master"]);
        assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"]);
        const c = r.json.conditions[0]!;
        assertEquals([c.name, c.kind, c.target], [`valkey ${shown}`, "redis", shown]);
        assertEquals([c.detail, c.last_error, c.attempts], ["PONG, role master", "", 1]);
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

      await t.step("a wrong password, then the password fixed on the server", async () => {
        await r0.cli("ACL", "SETUSER", "fixme", "on", ">old-pw-1", "~*", "+@all");
        const r = await runLate(
          [...FAST, "redis", r0.url("fixme", "new-pw-2")],
          () => r0.cli("ACL", "SETUSER", "fixme", "resetpass", ">new-pw-2"),
        );
        assertEquals(r.code, 0);
        assertEquals(
          r.attempts[0]!.error,
          'authentication failed for user "fixme": WRONGPASS invalid username-password pair or user is disabled.',
        );
        assertEquals(r.report.conditions[0]!.last_error, r.attempts[0]!.error);
      });

      await t.step("a user created late", async () => {
        const r = await runLate(
          [...FAST, "redis", r0.url("late1", "late-pw-1")],
          () => r0.cli("ACL", "SETUSER", "late1", "on", ">late-pw-1", "~*", "+@all"),
        );
        assertEquals(r.code, 0);
        assertStringIncludes(r.attempts[0]!.error, 'authentication failed for user "late1"');
      });

      await t.step("no credentials: the default user is off, NOAUTH is pending", async () => {
        const r = await runJson([
          "--timeout",
          "1s",
          "--interval",
          "200ms",
          "redis",
          `redis://127.0.0.1:${r0.port}`,
        ]);
        assertEquals([r.code, r.stderr], [1, ""]);
        assertEquals(
          r.json.conditions[0]!.last_error,
          'authentication failed for user "default": NOAUTH Authentication required.',
        );
      });

      await t.step("timeout: a wrong password until the deadline, in text", async () => {
        const args = ["--timeout", "1s", "--interval", "200ms", "redis", r0.url("app", "wrong-pw")];
        const text = await runCli(args);
        assertEquals(text.code, 1);
        assertStringIncludes(
          text.stderr,
          `waitcmd: timed out after 1s; not satisfied: redis ${
            r0.url("app", "***")
          }: authentication failed for user "app": WRONGPASS`,
        );
        assert(!text.stderr.includes("wrong-pw"));
      });

      await t.step("a database number the server does not have stays pending", async () => {
        const r = await runJson(["--timeout", "1s", "redis", r0.url(undefined, undefined, 99)]);
        assertEquals(r.code, 1);
        assertEquals(r.json.conditions[0]!.last_error, "ERR DB index is out of range");
      });

      await t.step("--password-env and --password-file (read at each attempt)", async () => {
        const bare = `redis://app@127.0.0.1:${r0.port}`;
        const env = await runJson([...FAST, "redis", bare, "--password-env", "RPW"], {
          env: { RPW: REDIS_PASSWORD },
        });
        assertEquals(env.code, 0);
        assertEquals(env.json.conditions[0]!.name, `redis ${bare}`);
        const file = `${r0.dir}/pw-late.txt`;
        const f = await runLate(
          [...FAST, "redis", bare, "--password-file", file],
          () => Deno.writeTextFile(file, `${REDIS_PASSWORD}\n`),
        );
        assertEquals(f.code, 0);
        assertEquals(
          f.attempts[0]!.error,
          `cannot read --password-file ${file}: no such file or directory`,
        );
      });

      await t.step("--tls against a server without TLS stays pending", async () => {
        const r = await runJson(["--timeout", "1s", "redis", url, "--tls", "--insecure"]);
        assertEquals(r.code, 1);
        // The server waits for a line that a TLS ClientHello never ends: the attempt hangs.
        assertEquals(
          r.json.conditions[0]!.last_error,
          "no answer before the deadline (attempt 1 still running)",
        );
      });
    } finally {
      await r0.remove();
    }
  },
});

Deno.test({
  name: "redis kind waits for a server started late, restarted, or loading its dataset",
  ignore: ignoreWithout("Redis", missing),
  ...opts,
  fn: async (t) => {
    await t.step("started several seconds into the run", async () => {
      const r0 = await makeRedis({ start: false });
      try {
        let started = false;
        const r = await runJsonl(
          ["--timeout", "60s", "--interval", "250ms", "redis", r0.url()],
          {
            onAttempt: async (a) => {
              if (a.ok || started) return;
              started = true;
              await sleep(3000);
              await r0.start();
            },
          },
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.attempts[0]!.error, "connection refused");
        assert(r.attempts.length >= 5, `only ${r.attempts.length} attempts`);
        assert(r.report.elapsed_seconds >= 3, `satisfied after ${r.report.elapsed_seconds} s`);
      } finally {
        await r0.remove();
      }
    });

    await t.step("restarted during the run: refused while down, then satisfied", async () => {
      const r0 = await makeRedis();
      try {
        let phase = "up";
        const r = await runJsonl(
          ["--timeout", "60s", "--interval", "200ms", "redis", r0.url(), "--key", "booted"],
          {
            onAttempt: async (a) => {
              if (phase === "up" && !a.ok) {
                phase = "stopping";
                await r0.stop();
                phase = "down";
              } else if (phase === "down" && a.error === "connection refused") {
                phase = "starting";
                await r0.start();
                await r0.cli("SET", "booted", "yes");
                phase = "restarted";
              }
            },
          },
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        const errors = r.attempts.filter((a) => !a.ok).map((a) => a.error);
        assertEquals(errors[0], 'key "booted" does not exist');
        assert(errors.includes("connection refused"), errors.join("\n"));
        assertEquals(phase, "restarted");
      } finally {
        await r0.remove();
      }
    });

    await t.step("loading its dataset (LOADING) is pending, then PONG", async () => {
      const r0 = await makeRedis();
      try {
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
      } finally {
        await r0.remove();
      }
    });
  },
});

Deno.test({
  name: "redis --role: a replica, then promoted late",
  ignore: ignoreWithout("Redis", missing),
  ...opts,
  fn: async () => {
    const primary = await makeRedis();
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
      await primary.remove();
    }
  },
});

Deno.test({
  name: "redis over TLS: rediss:// verified by name, unverified; untrusted or misnamed pending",
  ignore: ignoreWithout("Redis", missing),
  ...opts,
  fn: async () => {
    // The certificate names localhost only, not 127.0.0.1.
    const pki = await makePki({ server: { dnsNames: ["localhost"], ips: [] } });
    const other = await makePki({});
    const r0 = await makeRedis({
      tls: { caFile: pki.ca.certFile, certFile: pki.server.certFile, keyFile: pki.server.keyFile },
    });
    try {
      const byIp = r0.url();
      const byName = `rediss://app:${REDIS_PASSWORD}@localhost:${r0.port}`;
      assert(byIp.startsWith("rediss://"));
      for (
        const args of [
          [byName, "--ca-file", pki.ca.certFile],
          [byName.replace("rediss:", "redis:"), "--tls", "--ca-file", pki.ca.certFile],
          [byIp, "--insecure"],
        ]
      ) {
        const r = await runJson([...FAST, "redis", ...args]);
        assertEquals([r.code, r.stderr], [0, ""], args.join(" "));
        assertEquals(r.json.conditions[0]!.detail, "PONG, TLS");
      }
      const pending: [string[], string][] = [
        [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
        [
          [byName, "--ca-file", other.ca.certFile],
          "certificate not trusted (unable to verify the first certificate)",
        ],
      ];
      for (const [args, error] of pending) {
        const r = await runJson(["--timeout", "1s", "--interval", "200ms", "redis", ...args]);
        assertEquals([r.code, r.json.status], [1, "timeout"], args.join(" "));
        assertEquals(r.json.conditions[0]!.last_error, error);
        assert(r.json.conditions[0]!.attempts >= 2, "TLS failures are retried");
      }
    } finally {
      await r0.remove();
      await pki.cleanup();
      await other.cleanup();
    }
  },
});

Deno.test({
  name: "redis: the password shows in no output mode, on any path",
  ignore: ignoreWithout("Redis", missing),
  ...opts,
  fn: async () => {
    const mark = "Zq9Rd/Mark:7";
    const r0 = await makeRedis();
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-redis-secret-" });
    try {
      await r0.cli("ACL", "SETUSER", "marked", "on", `>${mark}`, "~*", "+@all");
      await Deno.writeTextFile(`${dir}/pw`, `${mark}\n`);
      const inUrl = r0.url("marked", mark);
      const bare = `redis://marked@127.0.0.1:${r0.port}`;
      const three = (extra: string[] = []) => [
        "redis",
        inUrl,
        ...extra,
        "--",
        "redis",
        bare,
        "--password-env",
        "MARK_PW",
        ...extra,
        "--",
        "redis",
        bare,
        "--password-file",
        `${dir}/pw`,
        ...extra,
      ];
      const wrongUrl = `redis://app:${encodeURIComponent(mark)}@127.0.0.1:${r0.port}`;
      await assertSecretsAbsent(
        [
          { name: "success", args: ["-t", "20s", ...three()], codes: [0] },
          {
            name: "pending then timeout (missing key)",
            args: ["-t", "1s", "-i", "200ms", ...three(["--key", "nope"])],
            codes: [1],
          },
          {
            name: "authentication failed then timeout",
            args: ["-t", "1s", "-i", "200ms", "redis", wrongUrl],
            codes: [1],
          },
          {
            name: "fatal (a guard holds)",
            args: [
              "-t",
              "20s",
              ...three(["--key", "nope"]),
              "--",
              "guard",
              "redis",
              inUrl,
            ],
            codes: [3],
          },
          { name: "usage error", args: ["redis", inUrl, "--equals", "x"], codes: [2] },
        ],
        [mark, encodeURIComponent(mark)],
        { MARK_PW: mark },
      );
    } finally {
      await r0.remove();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("redis: a dead port is pending with connection refused, and times out", async () => {
  const port = freePort();
  const r = await runJson([
    "--timeout",
    "1s",
    "--interval",
    "200ms",
    "redis",
    `redis://app:pw-dead-1@localhost:${port}`,
  ]);
  assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
  assertEquals(r.json.conditions[0]!.last_error, "connection refused");
  assert(r.json.conditions[0]!.attempts >= 2);
  assert(!r.stdout.includes("pw-dead-1"));
});

Deno.test("redis kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (redis)";
  const see = "(see: waitcmd help redis)";
  const form = "redis://[[user]:password@]host[:port][/db] or rediss://...";
  const cases: [string[], string][] = [
    [["redis", "cache:6379"], `${where}: expected ${form}, got "cache:6379" ${see}`],
    [
      ["redis", "redis://cache/x"],
      `${where}: expected a database number after the host, got "x" ${see}`,
    ],
    [
      ["redis", "redis://cache/0?timeout=3"],
      `${where}: unsupported URL parameter "timeout" (TLS is set with rediss://, --tls, --ca-file and --insecure) ${see}`,
    ],
    [
      ["redis", "redis://:sEcr3t@cache", "--password-env", "PW"],
      `${where}: --password-env: cannot be combined with a password in the URL ${see}`,
    ],
    [["redis", "redis://cache", "--equals", "v"], `${where}: --equals: needs --key ${see}`],
    [
      ["redis", "redis://cache", "--key", ""],
      `${where}: --key: expected a key, got an empty string ${see}`,
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
  await Promise.all(cases.map(async ([args, line]) => {
    const r = await runCli(args, { env: { PW: "env-pw-zq" } });
    assertEquals(usageErrorLine(r), line, args.join(" "));
    assert(!r.stderr.includes("sEcr3t"), r.stderr);
  }));
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
