/**
 * grpc end to end: the CLI against the reference gRPC health service
 * (google.golang.org/grpc/health in a small Go program built by
 * scripts/services/build-grpc.sh; conditions/grpc/_service.ts), over h2c and TLS
 * (a throwaway CA from tests/services/tls.ts), with statuses flipped through
 * its control endpoint.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { buildMissing } from "../../tests/services/_util.ts";
import { buildGrpcServer, type GrpcServer, startGrpcServer } from "./_service.ts";
import { makePki } from "../../tests/services/tls.ts";
import {
  assertUsageFragments,
  expectJson,
  runCli,
  runJson,
  runLate,
  writeRecipe,
} from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];
const SHORT = ["--timeout", "1500ms", "--interval", "200ms"];
/** An interval longer than the timeout: a late success was woken by Health/Watch. */
const WATCH_ONLY = ["--timeout", "10s", "--interval", "30s"];

/** Why the suite cannot build the health server here, or undefined when it can. */
const whyMissing = await buildMissing(buildGrpcServer);

Deno.test({
  name: "grpc against the reference health server (h2c and TLS)",
  ignore: ignoreWithout("the gRPC health server", whyMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const pki = await makePki();
    let s: GrpcServer | undefined;
    try {
      s = await startGrpcServer({
        tls: { certFile: pki.server.chainFile, keyFile: pki.server.keyFile },
      });
      const srv = s;

      await t.step("--service asks about one service", async () => {
        await srv.setStatus("orders.v1.Orders", "SERVING");
        await expectJson([...FAST, "grpc", srv.h2c, "--service", "orders.v1.Orders"], {
          code: 0,
          detail: 'service "orders.v1.Orders" SERVING',
        });
      });

      await t.step("NOT_SERVING is pending; --status NOT_SERVING holds", async () => {
        await srv.setStatus("billing", "NOT_SERVING");
        await expectJson([...SHORT, "grpc", srv.h2c, "--service", "billing"], {
          code: 1,
          status: "timeout",
          error: 'service "billing" NOT_SERVING, expected SERVING',
        });
        await expectJson([
          ...FAST,
          ...["grpc", srv.h2c, "--service", "billing", "--status", "not_serving"],
        ], { code: 0, detail: 'service "billing" NOT_SERVING' });
      });

      await t.step(
        "an unknown service (NOT_FOUND) is pending, and is SERVICE_UNKNOWN",
        async () => {
          await expectJson([...SHORT, "grpc", srv.h2c, "--service", "nope"], {
            code: 1,
            error:
              'service "nope" unknown to the server (NOT_FOUND: unknown service), expected SERVING',
          });
          await expectJson([
            ...FAST,
            ...["grpc", srv.h2c, "--service", "nope", "--status", "SERVICE_UNKNOWN"],
          ], { code: 0, detail: 'service "nope" SERVICE_UNKNOWN (NOT_FOUND: unknown service)' });
        },
      );

      await t.step("a server without the health service (UNIMPLEMENTED) is pending", async () => {
        const h = await runCli([...SHORT, "grpc", srv.bare]);
        assertEquals(h.code, 1);
        assertStringIncludes(
          h.stderr,
          `not satisfied: grpc ${srv.bare}: the server has no health service (UNIMPLEMENTED: grpc.health.v1.Health)`,
        );
      });

      await t.step("--method without --reflect: the health check under another name", async () => {
        const ready = ["--method", "/waitcmd.test.v1.Probe/Ready", "--service", "queue"];
        await srv.setStatus("queue", "NOT_SERVING");
        const late = await runLate(
          [...FAST, "grpc", srv.h2c, ...ready],
          () => srv.setStatus("queue", "SERVING"),
        );
        assertEquals(late.code, 0);
        assertEquals(late.attempts[0]!.error, 'service "queue" NOT_SERVING, expected SERVING');
        assertEquals(late.report.conditions[0]!.detail, 'service "queue" SERVING');
        await expectJson([...SHORT, "grpc", srv.bare, ...ready], {
          code: 1,
          error: "the server does not implement waitcmd.test.v1.Probe/Ready (UNIMPLEMENTED)",
        });
      });

      await t.step("a status change is seen at once through Health/Watch", async () => {
        await srv.setStatus("payments", "NOT_SERVING");
        const late = await runLate(
          [...WATCH_ONLY, "grpc", srv.h2c, "--service", "payments"],
          () => srv.setStatus("payments", "SERVING"),
        );
        assertEquals([late.code, late.report.status], [0, "satisfied"]);
        assertEquals(late.attempts.length, 2, JSON.stringify(late.attempts));
        assertEquals(late.attempts[0]!.error, 'service "payments" NOT_SERVING, expected SERVING');
        assert(late.report.elapsed_seconds < 9, `took ${late.report.elapsed_seconds}s`);
      });

      await t.step("not grpc holds once the server stops serving", async () => {
        await srv.setStatus("drain", "SERVING");
        const late = await runLate(
          [...WATCH_ONLY, "not", "grpc", srv.h2c, "--service", "drain"],
          () => srv.setStatus("drain", "NOT_SERVING"),
        );
        assertEquals(late.code, 0);
        assertEquals(
          late.report.conditions[0]!.detail,
          'service "drain" NOT_SERVING, expected SERVING',
        );
      });

      await t.step("--tls with --ca-file, by IP and by name; untrusted without it", async () => {
        const port = srv.tls!.split(":")[1]!;
        for (const target of [srv.tls!, `localhost:${port}`]) {
          const j = await runJson([...FAST, "grpc", target, "--tls", "--ca-file", pki.ca.certFile]);
          assertEquals([j.code, j.json.conditions[0]!.detail], [0, "server SERVING"], target);
        }
        await expectJson([
          ...FAST,
          ...["grpc", srv.tls!, "--tls", "--ca-file", pki.ca.certFile, "--servername", "localhost"],
        ], { code: 0 });
        await expectJson([...SHORT, "grpc", srv.tls!, "--tls"], {
          code: 1,
          error: "certificate not trusted (self-signed certificate in the chain)",
        });
        await expectJson([
          ...SHORT,
          ...["grpc", srv.tls!, "--tls", "--ca-file", pki.ca.certFile],
          ...["--servername", "other.example"],
        ], { code: 1, error: "certificate is not valid for other.example" });
        await expectJson([...FAST, "grpc", srv.tls!, "--tls", "--insecure"], { code: 0 });
        const plainToTls = await expectJson([...SHORT, "grpc", srv.tls!], { code: 1 });
        // grpc-js says one or the other, depending on when the TLS server drops the cleartext.
        assertMatch(
          plainToTls.json.conditions[0]!.last_error,
          /^(failed to connect|connection reset by peer)$/,
        );
      });
    } finally {
      await s?.stop();
      await pki.cleanup();
    }
  },
});

/** The unary method of the test server (tests/services/grpc/deploy.go). */
const GET_STATUS = "waitcmd.test.v1.Deploy/GetStatus";
const SECRET = "zq9-grpc-secret";

Deno.test({
  name: "grpc --method through server reflection (a unary method, its answer as ProtoJSON)",
  ignore: ignoreWithout("the gRPC health server", whyMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const pki = await makePki();
    let s: GrpcServer | undefined;
    try {
      s = await startGrpcServer({
        tls: { certFile: pki.server.chainFile, keyFile: pki.server.keyFile },
      });
      const srv = s;
      const call = (
        name: string,
      ) => ["--reflect", "--method", GET_STATUS, "--request", `{"name":"${name}"}`];

      await t.step("the answer, with its types found by reflection, meets --jsonpath", async () => {
        await srv.setDeploy("api", "READY", 3, "9007199254740993");
        await expectJson([
          ...FAST,
          ...["grpc", srv.h2c, ...call("api"), "--jsonpath", '$.state == "READY"'],
          // ProtoJSON: int64 as a string, lowerCamelCase names, nested and repeated fields.
          ...[
            "--jsonpath",
            '$.version == "9007199254740993"',
            "--jsonpath",
            "$.readyReplicas >= 3",
          ],
          ...["--jsonpath", '$.meta.region == "eu-1" && $.tags[1] == "canary"'],
        ], {
          code: 0,
          detail:
            `${GET_STATUS} answered; $.state == "READY" (got "READY"); $.version == "9007199254740993" (got "9007199254740993"); $.readyReplicas >= 3 (got 3); $.meta.region == "eu-1" (got "eu-1") && $.tags[1] == "canary" (got "canary")`,
        });
      });

      await t.step(
        "without --jsonpath a successful call holds; /pkg.Service/Method is taken",
        async () => {
          const j = await runJson([
            ...FAST,
            ...["grpc", srv.h2c, "--reflect", "--method", `/${GET_STATUS}`],
          ]);
          assertEquals(j.code, 0);
          assertEquals(
            j.json.conditions[0]!.detail,
            `${GET_STATUS} answered {"state":"STARTING","tags":["blue","canary"],"meta":{"region":"eu-1"}}`,
          );
          await expectJson([
            ...FAST,
            ...["grpc", srv.h2c, "--reflect", "--method", "grpc.health.v1.Health/Check"],
            ...["--request", '{"service":""}', "--jsonpath", '$.status == "SERVING"'],
          ], {
            code: 0,
            detail: 'grpc.health.v1.Health/Check answered; $.status == "SERVING" (got "SERVING")',
          });
        },
      );

      await t.step("pending while the answer does not match, then satisfied", async () => {
        await srv.setDeploy("web", "STARTING", 0);
        const late = await runLate(
          [...FAST, "grpc", srv.h2c, ...call("web"), "--jsonpath", '$.state == "READY"'],
          () => srv.setDeploy("web", "READY", 2),
        );
        assertEquals(late.code, 0);
        assertEquals(
          late.attempts[0]!.error,
          `jsonpath not met: $.state == "READY" (got "STARTING") (${GET_STATUS} answered {"name":"web","state":"STARTING","tags":["blue","canary"],"meta":{"region":"eu-…)`,
        );
        assertEquals(
          late.report.conditions[0]!.detail,
          `${GET_STATUS} answered; $.state == "READY" (got "READY")`,
        );
      });

      await t.step("an answer that never matches times out", async () => {
        await srv.setDeploy("db", "STARTING", 0);
        const j = await expectJson([
          ...SHORT,
          ...["grpc", srv.h2c, ...call("db"), "--jsonpath", "$.readyReplicas >= 1"],
        ], { code: 1, status: "timeout" });
        assertStringIncludes(
          j.json.conditions[0]!.last_error,
          "jsonpath not met: $.readyReplicas >= 1 (got nothing)",
        );
      });

      await t.step(
        "what reflection cannot give, or a request that does not fit, is pending",
        async () => {
          const cases: [string[], string][] = [
            [
              ["--reflect", "--method", "waitcmd.test.v1.Deploy/Nope"],
              "service waitcmd.test.v1.Deploy has no method Nope (it has GetStatus, Watch)",
            ],
            [
              ["--reflect", "--method", "waitcmd.test.v1.Deploy/Watch"],
              "waitcmd.test.v1.Deploy/Watch is a server streaming method; --method calls unary methods",
            ],
            [
              ["--reflect", "--method", "no.such.v1.Service/Get"],
              "the server's reflection does not know service no.such.v1.Service (NOT_FOUND: proto: not found)",
            ],
            [
              [
                "--reflect",
                "--method",
                GET_STATUS,
                "--request",
                `{"nme":"web","token":"${SECRET}"}`,
              ],
              '--request does not fit waitcmd.test.v1.StatusRequest: unknown field: "nme"',
            ],
            [
              ["--reflect", "--method", GET_STATUS, "--request", '{"name":7}'],
              "--request does not fit waitcmd.test.v1.StatusRequest:",
            ],
          ];
          for (const [flags, error] of cases) {
            const r = await runJson([...SHORT, "grpc", srv.h2c, ...flags]);
            assertEquals(r.code, 1, flags.join(" "));
            assertStringIncludes(r.json.conditions[0]!.last_error, error);
            for (const out of [r.stdout, r.stderr]) assert(!out.includes(SECRET), out);
          }
          await expectJson([...SHORT, "grpc", srv.bare, "--reflect", "--method", GET_STATUS], {
            code: 1,
            error:
              "the server has no reflection service (UNIMPLEMENTED: grpc.reflection.v1.ServerReflection)",
          });
        },
      );

      await t.step(
        "--reflect --service: reflection describes the service, then the health check",
        async () => {
          await srv.setStatus("waitcmd.test.v1.Deploy", "NOT_SERVING");
          const late = await runLate(
            [...FAST, "grpc", srv.h2c, "--reflect", "--service", "waitcmd.test.v1.Deploy"],
            () => srv.setStatus("waitcmd.test.v1.Deploy", "SERVING"),
          );
          assertEquals(late.code, 0);
          assertEquals(
            late.attempts[0]!.error,
            'service "waitcmd.test.v1.Deploy" NOT_SERVING, expected SERVING',
          );
          assertEquals(
            late.report.conditions[0]!.detail,
            'reflection describes waitcmd.test.v1.Deploy (GetStatus, Watch); service "waitcmd.test.v1.Deploy" SERVING',
          );
          // A service reflection does not describe is pending even when health knows the name.
          await srv.setStatus("other.v1.Svc", "SERVING");
          await expectJson([...SHORT, "grpc", srv.h2c, "--reflect", "--service", "other.v1.Svc"], {
            code: 1,
            error:
              "the server's reflection does not know service other.v1.Svc (NOT_FOUND: proto: not found)",
          });
          await expectJson([...SHORT, "grpc", srv.bare, "--reflect", "--service", "x.v1.S"], {
            code: 1,
            error:
              "the server has no reflection service (UNIMPLEMENTED: grpc.reflection.v1.ServerReflection)",
          });
        },
      );

      await t.step("over TLS with --ca-file, metadata masked", async () => {
        await expectJson([
          ...FAST,
          ...["grpc", srv.tls!, "--tls", "--ca-file", pki.ca.certFile, ...call("api")],
          ...["--header", `authorization: Bearer ${SECRET}`, "--jsonpath", '$.state == "READY"'],
        ], { code: 0, detail: `${GET_STATUS} answered; $.state == "READY" (got "READY")` });
        const text = await runCli([
          ...["--explain", "grpc", srv.h2c, "--reflect", "--method", GET_STATUS],
          ...[
            "--request",
            `{"name":"web","token":"${SECRET}"}`,
            "--header",
            `authorization: Bearer ${SECRET}`,
          ],
        ]);
        assertEquals(text.code, 0);
        assertStringIncludes(text.stdout + text.stderr, `--request '{"name":"web","token":"***"}'`);
        assert(!(text.stdout + text.stderr).includes(SECRET), text.stdout + text.stderr);
      });
    } finally {
      await s?.stop();
      await pki.cleanup();
    }
  },
});

Deno.test("grpc --request from a recipe: its credential-named members masked in --explain", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-grpc-recipe-" });
  try {
    const recipe = await writeRecipe(dir, [
      "conditions:",
      "  - kind: grpc",
      "    target: localhost:50051",
      "    flags:",
      "      reflect: true",
      `      method: ${GET_STATUS}`,
      `      request: '{"name":"web","auth":{"api_key":"${SECRET}"}}'`,
      `      jsonpath: ['$.state == "READY"']`,
    ]);
    for (const output of ["text", "json"]) {
      const r = await runCli(["--explain", "-o", output, "-f", recipe]);
      assertEquals(r.code, 0, r.stderr);
      assert(!(r.stdout + r.stderr).includes(SECRET), r.stdout + r.stderr);
      assertStringIncludes(r.stdout + r.stderr, "api_key");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("grpc usage errors exit 2 with one line", async () => {
  const cases: [string[], string][] = [
    [["grpc", "localhost"], "condition 1 (grpc): expected HOST:PORT or [IPv6]:PORT"],
    [
      ["grpc", "h:1", "--insecure"],
      "condition 1 (grpc): --insecure: needs --tls (without it the connection is plaintext h2c)",
    ],
    [["grpc", "h:1", "--ca-file", "ca.pem"], "condition 1 (grpc): --ca-file: needs --tls"],
    [["grpc", "h:1", "--servername", "x"], "condition 1 (grpc): --servername: needs --tls"],
    [
      ["grpc", "h:1", "--tls", "--insecure", "--ca-file", "ca.pem"],
      "condition 1 (grpc): --insecure: cannot be combined with --ca-file",
    ],
    [
      ["grpc", "h:1", "--status", "SERVNG"],
      'condition 1 (grpc): --status: expected one of SERVING, NOT_SERVING, UNKNOWN, SERVICE_UNKNOWN, got "SERVNG"',
    ],
    [
      ["grpc", "h:1", "--header", "nocolon"],
      `condition 1 (grpc): --header: expected 'Name: value'`,
    ],
    [
      ["grpc", "h:1", "--header", "trace-bin: AAAA"],
      "condition 1 (grpc): --header: binary metadata (trace-bin) is not supported",
    ],
    [
      ["grpc", "h:1", "--reflect", "--method", "Deploy"],
      'condition 1 (grpc): --method: expected SERVICE/METHOD like pkg.v1.Orders/GetOrder, got "Deploy"',
    ],
    [
      ["grpc", "h:1", "--method", "a.B/C", "--jsonpath", "$.a"],
      "condition 1 (grpc): --jsonpath: needs --reflect (the method's message types come from server reflection)",
    ],
    [
      ["grpc", "h:1", "--reflect"],
      "condition 1 (grpc): --reflect: needs --method SERVICE/METHOD, or --service NAME for reflection to describe",
    ],
    [
      ["grpc", "h:1", "--reflect", "--method", "a.B/C", "--request", "{name: web}"],
      `condition 1 (grpc): --request: expected a JSON object like '{"name":"web"}', got text that is not JSON (at character 2)`,
    ],
    [
      ["grpc", "h:1", "--reflect", "--method", "a.B/C", "--jsonpath", "$.a =="],
      "condition 1 (grpc): --jsonpath: expected a value after $.a ==",
    ],
    [
      ["grpc", "h:1", "--reflect", "--method", "a.B/C", "--service", "x"],
      "condition 1 (grpc): --service: cannot be combined with --method and --reflect (it asks the health service)",
    ],
    [
      ["grpc", "h:1", "--header", "grpc-timeout: 1S"],
      `condition 1 (grpc): --header: "grpc-timeout" cannot be sent as gRPC metadata`,
    ],
  ];
  await assertUsageFragments("grpc", cases);
});

Deno.test("waitcmd doctor reports a missing CA store for grpc and websocket", async () => {
  const r = await runCli(["doctor", "-o", "json", "--require", "grpc"], {
    env: { SSL_CERT_FILE: "/nonexistent/ca.pem" },
  });
  assertEquals(r.code, 1);
  const kinds = (JSON.parse(r.stdout) as { kinds: { kind: string; ok: boolean; reason: string }[] })
    .kinds.filter((k) => k.kind === "grpc" || k.kind === "websocket");
  assertEquals(
    kinds,
    ["grpc", "websocket"].map((kind) => ({
      kind,
      ok: false,
      reason: "SSL_CERT_FILE /nonexistent/ca.pem does not exist",
    })),
  );
});
