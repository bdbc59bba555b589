/**
 * The rabbitmq kind end to end against a real RabbitMQ 3.10 broker (Debian's
 * rabbitmq-server), one node with a plain and a TLS listener, for what is
 * rabbitmq's own: queues (--queue, --min-messages, declared late), a vhost
 * set up late, TLS verification, a refused port, and usage errors. A broker
 * started late or restarted, a wrong password, a user created late,
 * --password-env and --password-file, the human line, the JSON report and
 * the password in no output are the live conformance suite's
 * (tests/conformance/live_test.ts).
 */

import { assert, assertEquals, assertMatch } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { usageRows } from "../../tests/_suite.ts";
import { type Rabbitmq, rabbitmqMissing, startRabbitmq } from "./_service.ts";
import {
  assertKindUsageErrors,
  assertUsageErrors,
  cliTest,
  runJson,
  runLate,
  timing,
} from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/rabbitmq/_suite.ts). */
const USAGE = await usageRows("rabbitmq");

const FAST = ["--timeout", "60s", "--interval", "300ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

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
  try {
    await t.step("--queue and --min-messages hold for a queue with messages", async () => {
      await mq.declareQueue("/", "ready-q", 2);
      const r = await runJson([
        ...FAST,
        ...["amqp", admin, "--queue", "ready-q", "--min-messages", "2"],
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

    await t.step(
      "a vhost with a percent-encoded slash and amqplib's URL options, passed on to the broker",
      async () => {
        await mq.ctl(["add_vhost", "/ci"]);
        await mq.ctl(["set_permissions", "-p", "/ci", "admin", ".*", ".*", ".*"]);
        await mq.declareQueue("/ci", "ci-q", 1);
        const base = `amqp://admin:${mq.adminPassword}@127.0.0.1:${mq.port}/%2Fci`;
        const options = "heartbeat=5&frameMax=8192&channelMax=16&locale=en_US&maxFrameSize=0";
        const ok = await runJson([...FAST, "amqp", `${base}?${options}`, "--queue", "ci-q"]);
        assertEquals([ok.code, ok.stderr], [0, ""]);
        assertMatch(ok.json.conditions[0]!.detail, /^queue "ci-q": 1 message, 0 consumers/);
        // frameMax reaches the broker, which never completes a handshake whose frame size is
        // under AMQP's minimum (4096): the same URL without it opens at once.
        const small = await runJson([...timing("2s", "300ms"), "amqp", `${base}?frameMax=1024`]);
        assertEquals([small.code, small.json.conditions[0]!.satisfied], [1, false]);
        assertNoSecret([ok.stdout, small.stdout], mq.adminPassword);
      },
    );

    await t.step(
      "TLS: verified with --ca-file, refused without, --insecure skips the check",
      async () => {
        const tlsUrl = `amqps://admin:${mq.adminPassword}@localhost:${mq.tlsPort}/`;
        const ok = await runJson([...FAST, "rabbitmq", tlsUrl, "--ca-file", mq.pki!.ca.certFile]);
        assertEquals(ok.code, 0, ok.stdout);
        assertMatch(ok.json.conditions[0]!.detail, /, TLS$/);
        const untrusted = await runJson([...timing("2s", "300ms"), "rabbitmq", tlsUrl]);
        assertEquals(untrusted.code, 1);
        assertMatch(untrusted.json.conditions[0]!.last_error, /^certificate not trusted/);
        const insecure = await runJson([...FAST, "rabbitmq", tlsUrl, "--insecure"]);
        assertEquals(insecure.code, 0, insecure.stdout);
        const plainPort = await runJson([
          ...timing("2s", "300ms"),
          ...["rabbitmq", `amqp://admin:${mq.adminPassword}@127.0.0.1:${mq.port}/`, "--tls"],
          "--insecure",
        ]);
        assertEquals(plainPort.code, 1);
        assertNoSecret(
          [ok.stdout, untrusted.stdout, insecure.stdout, plainPort.stdout],
          mq.adminPassword,
        );
      },
    );
  } finally {
    await mq.stop();
  }
}

cliTest(
  "rabbitmq kind: usage errors through the CLI, never showing the password",
  () => assertKindUsageErrors("rabbitmq", USAGE, { secrets: ["S3cr3t-pw"] }),
);

cliTest(
  "rabbitmq kind: a URL parameter amqplib does not read, or a bad value, is exit 2 naming it",
  async () => {
    const where = "waitcmd: condition 1 (rabbitmq)";
    const known = "amqplib reads frameMax, channelMax, heartbeat, maxFrameSize, locale";
    await assertUsageErrors([
      [
        ["rabbitmq", "amqp://app:S3cr3t-pw@mq/%2Fci?connection_timeout=5"],
        `${where}: unknown URL parameter "connection_timeout" (${known})`,
      ],
      [
        ["rabbitmq", "amqp://app:S3cr3t-pw@mq/?heartbeat=5&frame_max=8192"],
        `${where}: unknown URL parameter "frame_max" (${known})`,
      ],
      [
        ["rabbitmq", "amqp://app:S3cr3t-pw@mq/?heartbeat=soon"],
        `${where}: URL parameter heartbeat: expected a whole number, got "soon"`,
      ],
    ], { secrets: ["S3cr3t-pw"] });
  },
);

cliTest("rabbitmq kind: a refused port times out with the connection error", async () => {
  const r = await runJson([
    ...timing("1500ms", "300ms"),
    "rabbitmq",
    "amqp://app:S3cr3t-pw@127.0.0.1:1/",
  ]);
  assertEquals([r.code, r.stderr], [1, ""]);
  assertEquals(r.json.conditions[0]!.last_error, "connection refused");
  assert(!r.stdout.includes("S3cr3t-pw"));
});
