import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, plan } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { describeNatsError, JetStreamFailure, type NatsErrorContext } from "./errors.ts";
import type { NatsOptions } from "./mod.ts";

Deno.test("nats parse() reads the URL: host, port 4222, user, TLS from tls://", () => {
  const o = optionsOf<NatsOptions>(["nats", "nats://nats"]);
  assertEquals([o.hp, o.user, o.password, o.token, o.credsFile, o.tls.mode, o.jetstream], [
    { hostname: "nats", port: 4222 },
    undefined,
    undefined,
    undefined,
    undefined,
    "off",
    false,
  ]);
  const t = optionsOf<NatsOptions>(["nats", "tls://app:p%40ss@[::1]:4443"]);
  assertEquals([t.hp, t.user, t.password, t.tls], [
    { hostname: "::1", port: 4443 },
    "app",
    { value: "p@ss" },
    { mode: "on", verify: "full", caFile: undefined },
  ]);
  const s = optionsOf<NatsOptions>(["nats", "nats://h", "--stream", "ORDERS"]);
  assertEquals([s.jetstream, s.stream], [true, "ORDERS"]);
  const k = optionsOf<NatsOptions>(["nats", "nats://h", "--token-env", "TOK"], { TOK: "t0ken" });
  assertEquals(k.token, "t0ken");
  const c = optionsOf<NatsOptions>(["nats", "nats://h", "--creds-file", "app.creds"]);
  assertEquals(c.credsFile, "app.creds");
  const f = optionsOf<NatsOptions>(["nats", "nats://app@h", "--password-file", "pw"]);
  assertEquals([f.user, f.password], ["app", { file: "pw" }]);
});

Deno.test("nats display name keeps the user and masks only the password", () => {
  assertEquals(
    conditionOf(["nats", "nats://app:s3cret@nats:4222"]).name,
    "nats nats://app:***@nats:4222",
  );
  const p = plan(["nats", "nats://h", "--token-env", "TOK"], { TOK: "t0ken-zq" });
  assertEquals(p.conditions[0]!.name, "nats nats://h");
  assert(p.secrets.includes("t0ken-zq"), "the token is a secret");
  assert(plan(["nats", "tls://app:s3cret@h"]).secrets.includes("s3cret"));
});

Deno.test("nats parse() rejects bad targets and combinations", (t) => stepUsageErrors(t, "nats"));

Deno.test("nats usage errors never show the URL's password", () => {
  const line = parseError(["nats", "natz://app:hunter2-pw@h"]);
  assert(line.includes("natz://app:***@h"), line);
  assert(!line.includes("hunter2-pw"), line);
});

const ctx: NatsErrorContext = {
  user: "app",
  hostname: "nats.internal",
  secrets: ["s3cret-pw", undefined],
  stream: "ORDERS",
  handshakeSeconds: 10,
  jetStreamSeconds: 5,
};

/** An error shaped like the client's: its class name and message. */
function named(name: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { name }, extra);
}

Deno.test("describeNatsError() gives the client's failures the server's words", async (t) => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:4222"), {
    code: "ECONNREFUSED",
  });
  const rows: [string, unknown, string, Partial<NatsErrorContext>?][] = [
    [
      "refused login of a user",
      named("AuthorizationError", "Authorization Violation"),
      'authentication failed for user "app": Authorization Violation',
    ],
    [
      "refused token, credentials file or none",
      named("AuthorizationError", "Authorization Violation"),
      "authentication failed: Authorization Violation",
      { user: undefined },
    ],
    [
      "expired credentials",
      named("UserAuthenticationExpiredError", "User Authentication Expired"),
      'authentication failed for user "app": User Authentication Expired',
    ],
    [
      "the server's -ERR",
      named("ProtocolError", "maximum connections exceeded"),
      "maximum connections exceeded",
    ],
    [
      "refused (the client's wrapper)",
      named("ConnectionError", "connection refused", {
        cause: refused,
      }),
      "connection refused",
    ],
    ["refused (the socket's own)", refused, "connection refused"],
    [
      "untrusted certificate",
      Object.assign(new Error("unable to verify the first certificate"), {
        code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      }),
      "certificate not trusted (unable to verify the first certificate)",
    ],
    [
      "certificate for another name",
      Object.assign(new Error("Hostname/IP does not match"), {
        code: "ERR_TLS_CERT_ALTNAME_INVALID",
      }),
      "certificate is not valid for nats.internal",
    ],
    [
      "TLS asked of a plain server",
      named("ConnectionError", "server does not support 'tls'"),
      "the server does not offer TLS (TLS was asked for with a tls:// URL or --tls)",
    ],
    [
      "TLS required by the server",
      named("TlsRequiredError", "the server requires TLS (use a tls:// URL or --tls)"),
      "the server requires TLS (use a tls:// URL or --tls)",
    ],
    [
      "not a NATS port",
      named("Error", "unexpected response from server"),
      "not a NATS server: its first line is not INFO",
    ],
    [
      "closed before INFO",
      named("ConnectionError", "error connecting - node provided an undefined error"),
      "connection closed before the server's INFO",
    ],
    [
      "silent server",
      named("TimeoutError", "timeout"),
      "no answer to the NATS handshake within 10s",
    ],
    [
      "JetStream off on the server",
      new JetStreamFailure(named("JetStreamNotEnabled", "jetstream is not enabled")),
      "JetStream is not enabled on the server",
    ],
    [
      "JetStream off for the account",
      new JetStreamFailure(
        named("JetStreamNotEnabled", "jetstream not enabled for account"),
      ),
      "JetStream is not enabled: jetstream not enabled for account",
    ],
    [
      "missing stream",
      new JetStreamFailure(named("StreamNotFoundError", "stream not found")),
      'stream "ORDERS" not found',
    ],
    [
      "JetStream silent",
      new JetStreamFailure(named("TimeoutError", "timeout")),
      "no answer from the JetStream API within 5s",
    ],
    [
      "a permission the user lacks",
      new JetStreamFailure(
        named("PermissionViolationError", `Permissions Violation for Publish to "$JS.API.INFO"`),
      ),
      `JetStream: Permissions Violation for Publish to "$JS.API.INFO"`,
    ],
  ];
  for (const [name, e, text, over] of rows) {
    await t.step(name, () => assertEquals(describeNatsError(e, { ...ctx, ...over }), text));
  }
});

Deno.test("describeNatsError() scrubs passwords and tokens from any client text", () => {
  const text = describeNatsError(
    named("ProtocolError", "bad nats://app:s3cret-pw@h and t0ken-zq"),
    { ...ctx, secrets: ["s3cret-pw", "t0ken-zq"] },
  );
  assertEquals(text, "bad nats://app:***@h and ***");
});
