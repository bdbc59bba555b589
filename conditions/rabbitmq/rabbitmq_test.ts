import { assert, assertEquals } from "../../tests/_assert.ts";
import { optionsOf, parseError, plan } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { brokerName, describeAmqpError, judgeQueue } from "./errors.ts";
import type { RabbitmqOptions } from "./mod.ts";

Deno.test("rabbitmq parse() reads the URL: user, vhost, ports by scheme, guest by default", () => {
  const o = optionsOf<RabbitmqOptions>(["rabbitmq", "amqp://app:pw%2Fx@mq/prod%2Fa"]);
  assertEquals(o.hp, { hostname: "mq", port: 5672 });
  assertEquals(o.user, "app");
  assertEquals(o.password, { value: "pw/x" });
  assertEquals(o.vhost, "prod/a");
  assertEquals(o.tls.mode, "off");
  const d = optionsOf<RabbitmqOptions>(["amqp", "amqp://localhost"]);
  assertEquals([d.user, d.password, d.vhost], ["guest", { value: "guest" }, "/"]);
  assertEquals(optionsOf<RabbitmqOptions>(["amqp", "amqp://h/%2F"]).vhost, "/");
  const s = optionsOf<RabbitmqOptions>(["rabbitmq", "amqps://app@[::1]/"]);
  assertEquals([s.hp, s.tls.mode, s.password], [{ hostname: "::1", port: 5671 }, "on", undefined]);
  const t = optionsOf<RabbitmqOptions>(["rabbitmq", "amqp://h", "--tls"]);
  assertEquals([t.hp.port, t.tls.mode], [5671, "on"]);
  assertEquals(optionsOf<RabbitmqOptions>(["rabbitmq", "amqp://h:5000", "--tls"]).hp.port, 5000);
  assertEquals(
    optionsOf<RabbitmqOptions>(["rabbitmq", "amqp://h?heartbeat=10", "--queue", "q"]).queue,
    "q",
  );
});

Deno.test("rabbitmq parse() keeps the user and masks only the password in the name", () => {
  const p = plan(["rabbitmq", "amqp://app:s3cret-pw@mq:5672/prod"]);
  assertEquals(p.conditions[0]!.name, "rabbitmq amqp://app:***@mq:5672/prod");
  assertEquals(p.conditions[0]!.target, "amqp://app:***@mq:5672/prod");
  assert(p.secrets.includes("s3cret-pw"));
  const e = plan(["amqp", "amqp://app@mq/prod", "--password-env", "PW"], { PW: "from-env-pw" });
  assertEquals(e.conditions[0]!.name, "amqp amqp://app@mq/prod");
  assertEquals(e.secrets, ["from-env-pw"]);
  assertEquals(
    (e.conditions[0]!.options as RabbitmqOptions).password,
    { value: "from-env-pw" },
  );
});

Deno.test("rabbitmq parse() rejects bad targets and combinations", (t) =>
  stepUsageErrors(t, "rabbitmq"));

Deno.test("rabbitmq usage errors never show the URL's password", () => {
  const line = parseError(["rabbitmq", "amqpx://app:hunter2-pw@h"]);
  assert(line.includes("amqpx://app:***@h"), line);
  assert(!line.includes("hunter2-pw"), line);
});

const ctx = {
  user: "app",
  vhost: "prod",
  hostname: "mq",
  handshakeSeconds: 10,
  secrets: ["s3cret-pw"],
};

Deno.test("describeAmqpError() gives amqplib's failures the broker's words", async (t) => {
  const rows: [unknown, string][] = [
    [
      new Error(
        'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."',
      ),
      'authentication failed for user "app": ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile.',
    ],
    [
      new Error(
        'Handshake terminated by server: 530 (NOT-ALLOWED) with message "NOT_ALLOWED - vhost prod not found"',
      ),
      "NOT_ALLOWED - vhost prod not found",
    ],
    [
      new Error("Expected ConnectionOpenOk; got <ConnectionClose channel:0>"),
      'the broker refused to open vhost "prod" (it does not exist yet, or user "app" has no permissions on it)',
    ],
    [
      Object.assign(
        new Error(
          `Operation failed: QueueDeclare; 404 (NOT-FOUND) with message "NOT_FOUND - no queue 'jobs' in vhost 'prod'"`,
        ),
        { code: 404, classId: 50 },
      ),
      "NOT_FOUND - no queue 'jobs' in vhost 'prod'",
    ],
    [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5672"), { code: "ECONNREFUSED" }),
      "connection refused",
    ],
    [
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      "connection reset by peer",
    ],
    [new Error("connect ETIMEDOUT"), "no answer to the AMQP handshake within 10s"],
    [
      new Error("Socket closed abruptly during opening handshake"),
      "connection closed during the AMQP handshake (not an AMQP port, or the broker is stopping)",
    ],
    [
      Object.assign(new Error("self-signed certificate in certificate chain"), {
        code: "SELF_SIGNED_CERT_IN_CHAIN",
      }),
      "certificate not trusted (self-signed certificate in the chain)",
    ],
    [
      Object.assign(new Error("wrong version number"), { code: "ERR_SSL_WRONG_VERSION_NUMBER" }),
      "TLS handshake failed: the port does not speak TLS (plain AMQP?)",
    ],
    [new Error("Unexpected close"), "connection closed by the broker: unexpected close"],
  ];
  for (const [e, want] of rows) {
    await t.step(want, () => assertEquals(describeAmqpError(e, ctx), want));
  }
});

Deno.test("describeAmqpError() scrubs the password from any driver text", () => {
  const text = describeAmqpError(
    new Error('Handshake terminated by server: 501 (FRAME-ERROR) with message "bad s3cret-pw"'),
    ctx,
  );
  assertEquals(text, "bad ***");
});

Deno.test("judgeQueue() counts ready messages against --min-messages", () => {
  assertEquals(
    judgeQueue("jobs", { messageCount: 3, consumerCount: 1 }, undefined, "RabbitMQ 3.10.8"),
    {
      ok: true,
      detail: 'queue "jobs": 3 messages, 1 consumer (RabbitMQ 3.10.8)',
    },
  );
  assertEquals(judgeQueue("jobs", { messageCount: 1, consumerCount: 0 }, 1, "RabbitMQ"), {
    ok: true,
    detail: 'queue "jobs": 1 message, 0 consumers (RabbitMQ)',
  });
  assertEquals(judgeQueue("jobs", { messageCount: 1, consumerCount: 0 }, 5, "RabbitMQ"), {
    ok: false,
    error: 'queue "jobs" holds 1 ready message, waiting for at least 5',
  });
});

Deno.test("brokerName() reads product and version, as strings or bytes", () => {
  assertEquals(brokerName({ product: "RabbitMQ", version: "3.10.8" }), "RabbitMQ 3.10.8");
  assertEquals(
    brokerName({ product: new TextEncoder().encode("RabbitMQ"), version: undefined }),
    "RabbitMQ",
  );
  assertEquals(brokerName(undefined), "AMQP broker");
});
