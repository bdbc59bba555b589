/**
 * The rabbitmq kind end to end against a real RabbitMQ 3.10 broker (Debian's
 * rabbitmq-server), one node per test run with a plain and a TLS listener:
 * ready, started late (the broker application stopped, then started),
 * restarted during a run, a user created late, a password changed, a vhost
 * and a queue set up late, TLS verification, timeouts and usage errors, and
 * the password in no output whatever the mode.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { type Rabbitmq, rabbitmqMissing, startRabbitmq } from "../services/rabbitmq.ts";
import { runCli, runJson, runJsonl, runLate, usageErrorLine } from "./_cli.ts";

const FAST = ["--timeout", "60s", "--interval", "300ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

/** Exit right after the verdict: no driver timer or socket may hold the process. */
const EXIT_AFTER_VERDICT_MS = 2000;

function assertNoSecret(texts: string[], secret: string) {
  for (const t of texts) assert(!t.includes(secret), `the password leaked:\n${t}`);
}

Deno.test({
  name: "rabbitmq kind against a real RabbitMQ broker",
  ignore: ignoreWithout("rabbitmq-server", await rabbitmqMissing()),
  ...opts,
  fn: rabbitmqTests,
});

async function rabbitmqTests(t: Deno.TestContext) {
  const mq: Rabbitmq = await startRabbitmq({ tls: true });
  const admin = mq.url("admin", mq.adminPassword);
  const shown = `amqp://admin:***@127.0.0.1:${mq.port}/%2F`;
  try {
    await t.step(
      "a ready broker satisfies it; text mode writes only stderr, no password",
      async () => {
        const r = await runCli([...FAST, "rabbitmq", admin]);
        assertEquals(r.code, 0, r.stderr);
        assertEquals(r.stdout, "");
        assertMatch(
          r.stderr,
          new RegExp(
            `\\[ok\\] rabbitmq ${
              shown.replace(/[*.%]/g, "\\$&")
            } attempt 1 \\(\\d+\\.\\ds\\): connected to RabbitMQ 3\\.\\d+\\.\\d+ as "admin", vhost "/"`,
          ),
        );
        assertNoSecret([r.stdout, r.stderr], mq.adminPassword);
      },
    );

    await t.step(
      "JSON report: the name keeps the user, stderr stays empty, exit at once",
      async () => {
        const r = await runJson([...FAST, "amqp", admin]);
        assertEquals(r.code, 0, r.stdout);
        assertEquals(r.stderr, "");
        const c = r.json.conditions[0]!;
        assertEquals(c.name, `amqp ${shown}`);
        assertEquals(c.kind, "rabbitmq");
        assertMatch(c.detail, /^connected to RabbitMQ 3\.\d+\.\d+ as "admin", vhost "\/"$/);
        assertNoSecret([r.stdout], mq.adminPassword);
        const w = await runJsonl([...FAST, "rabbitmq", admin], { onAttempt: () => {} });
        assertEquals(w.code, 0);
        assertEquals(w.stderr, "");
        assert(
          (w.exitedAt - w.lastAttemptAt) < EXIT_AFTER_VERDICT_MS,
          `exited ${(w.exitedAt - w.lastAttemptAt).toFixed(0)} ms after the verdict`,
        );
      },
    );

    await t.step("--queue and --min-messages hold for a queue with messages", async () => {
      await mq.declareQueue("/", "ready-q", 2);
      const r = await runJson([
        ...FAST,
        "rabbitmq",
        admin,
        "--queue",
        "ready-q",
        "--min-messages",
        "2",
      ]);
      assertEquals(r.code, 0, r.stdout);
      assertMatch(
        r.json.conditions[0]!.detail,
        /^queue "ready-q": 2 messages, 0 consumers \(RabbitMQ 3\.\d+\.\d+\)$/,
      );
    });

    await t.step(
      "a queue declared late: pending with the broker's NOT_FOUND, then satisfied",
      async () => {
        const r = await runLate(
          [...FAST, "rabbitmq", admin, "--queue", "late-q"],
          () => mq.declareQueue("/", "late-q"),
        );
        assertEquals(r.code, 0, r.stderr);
        assertEquals(r.attempts[0]!.error, "NOT_FOUND - no queue 'late-q' in vhost '/'");
        assertEquals(r.report.status, "satisfied");
        assertEquals(r.stderr, "");
      },
    );

    await t.step("--min-messages waits until enough messages were published", async () => {
      await mq.declareQueue("/", "count-q");
      const r = await runLate(
        [...FAST, "rabbitmq", admin, "--queue", "count-q", "--min-messages", "3"],
        () => mq.declareQueue("/", "count-q", 3),
      );
      assertEquals(r.code, 0, r.stderr);
      assertEquals(
        r.attempts[0]!.error,
        'queue "count-q" holds 0 ready messages, waiting for at least 3',
      );
      assertMatch(r.report.conditions[0]!.detail, /^queue "count-q": 3 messages/);
    });

    await t.step(
      "a user created late: authentication failed, then satisfied; no password shown",
      async () => {
        const pw = "late-user-pw-1";
        const r = await runLate(
          [...FAST, "rabbitmq", mq.url("late", pw)],
          () => mq.addUser("late", pw),
        );
        assertEquals(r.code, 0, r.stderr);
        assertStringIncludes(r.attempts[0]!.error, 'authentication failed for user "late"');
        assertStringIncludes(r.attempts[0]!.error, "ACCESS_REFUSED");
        assertMatch(r.report.conditions[0]!.detail, /as "late"/);
        assertNoSecret([JSON.stringify(r.report), JSON.stringify(r.attempts), r.stderr], pw);
      },
    );

    await t.step(
      "a password changed during the run (--password-file): pending, then satisfied",
      async () => {
        await mq.addUser("rot", "old-password-1");
        const file = await Deno.makeTempFile({ prefix: "waitcmd-mq-pw-" });
        await Deno.writeTextFile(file, "new-password-2\n");
        try {
          const url = `amqp://rot@127.0.0.1:${mq.port}/`;
          const r = await runLate(
            [...FAST, "rabbitmq", url, "--password-file", file],
            () => mq.ctl(["change_password", "rot", "new-password-2"]),
          );
          assertEquals(r.code, 0, r.stderr);
          assertStringIncludes(r.attempts[0]!.error, 'authentication failed for user "rot"');
          assertEquals(r.report.conditions[0]!.name, `rabbitmq ${url}`);
          assertNoSecret(
            [JSON.stringify(r.report), JSON.stringify(r.attempts), r.stderr],
            "new-password-2",
          );
        } finally {
          await Deno.remove(file);
        }
      },
    );

    await t.step("a vhost created late: pending naming the vhost, then satisfied", async () => {
      const r = await runLate(
        [...FAST, "rabbitmq", mq.url("admin", mq.adminPassword, "late-vhost")],
        async () => {
          await mq.ctl(["add_vhost", "late-vhost"]);
          await mq.ctl(["set_permissions", "-p", "late-vhost", "admin", ".*", ".*", ".*"]);
        },
      );
      assertEquals(r.code, 0, r.stderr);
      assertEquals(
        r.attempts[0]!.error,
        'the broker refused to open vhost "late-vhost" (it does not exist yet, or user "admin" has no permissions on it)',
      );
      assertMatch(r.report.conditions[0]!.detail, /vhost "late-vhost"$/);
    });

    await t.step("a broker started late: connection refused, then satisfied", async () => {
      await mq.stopApp();
      const r = await runLate([...FAST, "rabbitmq", admin], () => mq.startApp());
      assertEquals(r.code, 0, r.stderr);
      assertEquals(r.attempts[0]!.error, "connection refused");
      assertEquals(r.report.status, "satisfied");
    });

    await t.step(
      "a broker restarted during the run: the streak breaks and starts over",
      async () => {
        let restart: Promise<void> | undefined;
        const r = await runJsonl(
          ["--timeout", "90s", "--interval", "400ms", "--successes", "12", "rabbitmq", admin],
          {
            onAttempt: (a) => {
              if (a.ok && restart === undefined) {
                restart = (async () => {
                  await mq.stopApp();
                  await mq.startApp();
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
        assertMatch(r.attempts[firstFail]!.error, /connection (refused|reset|closed)/);
        assert(r.attempts.at(-1)!.ok, "the run ends on a success");
        const okAfter = r.attempts.slice(firstFail).filter((a) => a.ok).length;
        assert(okAfter >= 12, `the streak started over: ${okAfter} successes after the failure`);
        assert(
          (r.exitedAt - r.lastAttemptAt) < EXIT_AFTER_VERDICT_MS,
          `${(r.exitedAt - r.lastAttemptAt)} ms`,
        );
      },
    );

    await t.step(
      "TLS: verified with --ca-file, refused without, --insecure skips the check",
      async () => {
        const tlsUrl = `amqps://admin:${mq.adminPassword}@localhost:${mq.tlsPort}/`;
        const ok = await runJson([...FAST, "rabbitmq", tlsUrl, "--ca-file", mq.pki!.ca.certFile]);
        assertEquals(ok.code, 0, ok.stdout);
        assertMatch(ok.json.conditions[0]!.detail, /, TLS$/);
        const untrusted = await runJson([
          "--timeout",
          "2s",
          "--interval",
          "300ms",
          "rabbitmq",
          tlsUrl,
        ]);
        assertEquals(untrusted.code, 1);
        assertMatch(untrusted.json.conditions[0]!.last_error, /^certificate not trusted/);
        const insecure = await runJson([...FAST, "rabbitmq", tlsUrl, "--insecure"]);
        assertEquals(insecure.code, 0, insecure.stdout);
        const plainPort = await runJson([
          "--timeout",
          "2s",
          "--interval",
          "300ms",
          "rabbitmq",
          `amqp://admin:${mq.adminPassword}@127.0.0.1:${mq.port}/`,
          "--tls",
          "--insecure",
        ]);
        assertEquals(plainPort.code, 1);
        assertNoSecret(
          [ok.stdout, untrusted.stdout, insecure.stdout, plainPort.stdout],
          mq.adminPassword,
        );
      },
    );

    await t.step(
      "a wrong password times out naming the user, in text mode too; no password",
      async () => {
        const wrong = mq.url("admin", "Wr0ng-passw0rd");
        const r = await runCli(["--timeout", "2s", "--interval", "300ms", "rabbitmq", wrong]);
        assertEquals(r.code, 1);
        assertEquals(r.stdout, "");
        assertStringIncludes(
          r.stderr,
          `waitcmd: timed out after 2s; not satisfied: rabbitmq amqp://admin:***@127.0.0.1:${mq.port}/%2F: authentication failed for user "admin"`,
        );
        assertNoSecret([r.stdout, r.stderr], "Wr0ng-passw0rd");
        const j = await runJson(["--timeout", "2s", "--interval", "300ms", "rabbitmq", wrong]);
        assertEquals([j.code, j.stderr], [1, ""]);
        assertNoSecret([j.stdout], "Wr0ng-passw0rd");
      },
    );
  } finally {
    await mq.stop();
  }
}

Deno.test({
  name: "rabbitmq kind: usage errors through the CLI, never showing the password",
  ...opts,
  fn: async (t) => {
    const rows: [string[], string][] = [
      [["rabbitmq", "http://app:S3cr3t-pw@h/"], "expected amqp:// or amqps://"],
      [
        ["rabbitmq", "amqp://app:S3cr3t-pw@h/", "--min-messages", "1"],
        "--min-messages: needs --queue",
      ],
      [
        ["amqp", "amqp://app:S3cr3t-pw@h/", "--ca-file", "ca.pem"],
        "--ca-file: needs amqps:// or --tls",
      ],
      [
        ["rabbitmq", "amqp://app:S3cr3t-pw@h/", "--password-env", "X"],
        "cannot be combined with a password in the URL",
      ],
    ];
    for (const [args, fragment] of rows) {
      await t.step(args.join(" "), async () => {
        const r = await runCli(args, { env: { X: "other-secret" } });
        const line = usageErrorLine(r);
        assertStringIncludes(line, fragment);
        assert(!line.includes("S3cr3t-pw"), line);
      });
    }
  },
});

Deno.test({
  name: "rabbitmq kind: a refused port times out with the connection error",
  ...opts,
  fn: async () => {
    const r = await runJson([
      "--timeout",
      "1500ms",
      "--interval",
      "300ms",
      "rabbitmq",
      "amqp://app:S3cr3t-pw@127.0.0.1:1/",
    ]);
    assertEquals([r.code, r.stderr], [1, ""]);
    assertEquals(r.json.conditions[0]!.last_error, "connection refused");
    assert(!r.stdout.includes("S3cr3t-pw"));
  },
});
