import { assert, assertEquals, assertStringIncludes, assertThrows } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, plan } from "../../tests/_kit.ts";
import { decodeResponse, encodeRequest } from "./health.ts";
import type { GrpcOptions } from "./mod.ts";
import { connectionReason } from "./judge.ts";
import protobuf from "protobufjs/light.js";
import descriptor from "protobufjs/ext/descriptor.js";
import {
  decodeResponse as decodeJson,
  encodeRequest as encodeJson,
  methodOf,
  NotResolved,
} from "./reflect.ts";

Deno.test("grpc parse() gives the defaults: the whole server, SERVING, plaintext", () => {
  assertEquals(optionsOf<GrpcOptions>(["grpc", "localhost:50051"]), {
    hp: { hostname: "localhost", port: 50051 },
    service: "",
    status: "SERVING",
    tls: false,
    caFile: undefined,
    servername: undefined,
    insecure: false,
    headers: [],
    call: undefined,
    reflectService: false,
    checkPath: undefined,
  });
  const custom = optionsOf<GrpcOptions>([
    "grpc",
    "h:1",
    "--method",
    "/app.v1.Probe/Ready",
    "--service",
    "db",
  ]);
  assertEquals([custom.call, custom.checkPath, custom.service], [
    undefined,
    "/app.v1.Probe/Ready",
    "db",
  ]);
});

Deno.test("grpc parse() takes --method with --reflect, a request and JSONPath checks", () => {
  const args = [
    ...["grpc", "h:1", "--reflect", "--method", "/deploy.v1.Deploy/GetStatus"],
    ...["--request", '{"name":"web","auth":{"api_key":"k-12345"}}', "--jsonpath", "$.state"],
  ];
  const o = optionsOf<GrpcOptions>(args);
  assertEquals([o.call?.service, o.call?.method, o.call?.request], [
    "deploy.v1.Deploy",
    "GetStatus",
    { name: "web", auth: { api_key: "k-12345" } },
  ]);
  assertEquals(o.call?.jsonpaths.length, 1);
  assert(plan(args).secrets.includes("k-12345"));
  const bare = optionsOf<GrpcOptions>(["grpc", "h:1", "--reflect", "--method", "a.B/C"]);
  assertEquals(bare.call?.request, {});
});

Deno.test("grpc parse() refuses a malformed --method and its flags without it", () => {
  const where = "waitcmd: condition 1 (grpc):";
  const see = "(see: waitcmd help grpc)";
  const cases: [string[], string][] = [
    [
      ["--reflect", "--method", "Deploy"],
      `--method: expected SERVICE/METHOD like pkg.v1.Orders/GetOrder, got "Deploy"`,
    ],
    [
      ["--reflect", "--method", "a b/C"],
      `--method: expected SERVICE/METHOD like pkg.v1.Orders/GetOrder, got "a b/C"`,
    ],
    [
      ["--method", "a.B/C", "--request", "{}"],
      "--request: needs --reflect (the method's message types come from server reflection)",
    ],
    [
      ["--reflect"],
      "--reflect: needs --method SERVICE/METHOD, or --service NAME for reflection to describe",
    ],
    [["--jsonpath", "$.a"], "--jsonpath: needs --method SERVICE/METHOD"],
    [
      ["--reflect", "--method", "a.B/C", "--status", "SERVING"],
      "--status: cannot be combined with --method and --reflect (it asks the health service)",
    ],
    [
      ["--reflect", "--method", "a.B/C", "--request", "[1]"],
      `--request: expected a JSON object like '{"name":"web"}', got an array`,
    ],
  ];
  for (const [flags, text] of cases) {
    assertEquals(parseError(["grpc", "h:1", ...flags]), `${where} ${text} ${see}`);
  }
  assertStringIncludes(
    parseError(["grpc", "h:1", "--reflect", "--method", "a.B/C", "--request", "{name:1}"]),
    `${where} --request: expected a JSON object like '{"name":"web"}', got text that is not JSON (at character 2)`,
  );
});

Deno.test("grpc parse() takes TLS flags with --tls, headers lower-cased, secrets registered", () => {
  const args = [
    ...["grpc", "[::1]:443", "--tls", "--servername", "api.internal"],
    ...["--status", "service_unknown", "--service", "orders.v1.Orders"],
    ...["--header", "Authorization: Bearer abcdef", "--header", "x-tenant: t1"],
  ];
  const o = optionsOf<GrpcOptions>(args);
  assertEquals([o.status, o.tls, o.servername, o.service], [
    "SERVICE_UNKNOWN",
    true,
    "api.internal",
    "orders.v1.Orders",
  ]);
  assertEquals(o.headers, [
    { name: "authorization", value: "Bearer abcdef", secret: true },
    { name: "x-tenant", value: "t1", secret: false },
  ]);
  assert(plan(args).secrets.includes("Bearer abcdef"));
  assertEquals(conditionOf(args).name, "grpc [::1]:443");
});

Deno.test("grpc parse() wants --tls for the TLS flags", async (t) => {
  for (const flag of [["--insecure"], ["--ca-file", "ca.pem"], ["--servername", "x.example"]]) {
    await t.step(flag[0]!, () => {
      assertEquals(
        parseError(["grpc", "h:1", ...flag]),
        `waitcmd: condition 1 (grpc): ${
          flag[0]
        }: needs --tls (without it the connection is plaintext h2c) (see: waitcmd help grpc)`,
      );
    });
  }
});

Deno.test("encodeRequest() writes field 1; decodeResponse() reads the status and skips the rest", () => {
  assertEquals(encodeRequest(""), new Uint8Array(0));
  assertEquals([...encodeRequest("ab")], [0x0a, 2, 0x61, 0x62]);
  assertEquals(encodeRequest("x".repeat(200)).subarray(0, 3), new Uint8Array([0x0a, 0xc8, 0x01]));
  assertEquals(decodeResponse(new Uint8Array([])), "UNKNOWN");
  assertEquals(decodeResponse(new Uint8Array([0x08, 0x01])), "SERVING");
  assertEquals(decodeResponse(new Uint8Array([0x12, 0x01, 0x7a, 0x08, 0x02])), "NOT_SERVING");
  assertEquals(decodeResponse(new Uint8Array([0x08, 0x09])), "STATUS_9");
  assertStringIncludes(
    assertThrows(() => decodeResponse(new Uint8Array([0x08])), Error).message,
    "truncated varint",
  );
});

Deno.test("connectionReason() shortens grpc-js's UNAVAILABLE details", () => {
  assertEquals(
    connectionReason(
      "No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1 (2026-11-23T18:14:28.494Z). Resolution note: ",
    ),
    "connection refused",
  );
  assertEquals(
    connectionReason(
      "No connection established. Last error: Error: self-signed certificate in certificate chain. Resolution note:",
    ),
    "certificate not trusted (self-signed certificate in the chain)",
  );
  assertEquals(
    connectionReason(
      "No connection established. Last error: Error [ERR_TLS_CERT_ALTNAME_INVALID]: Hostname/IP does not match certificate's altnames: Host: a.example. is not in the cert's altnames: DNS:localhost. Resolution note:",
      "a.example",
    ),
    "certificate is not valid for a.example",
  );
  assertEquals(
    connectionReason(
      "No connection established. Last error: Failed to connect (2026-11-23T18:14:28.494Z). Resolution note:",
    ),
    "failed to connect",
  );
});

Deno.test("methodOf() finds a unary method in reflected files and refuses what it cannot call", () => {
  const root = protobuf.Root.fromJSON({
    nested: {
      shop: {
        nested: {
          Req: { fields: { id: { type: "int64", id: 1 } } },
          Res: { fields: { ready_count: { type: "int32", id: 1 } } },
          Orders: {
            methods: {
              Get: { requestType: "Req", responseType: "Res" },
              Tail: { requestType: "Req", responseType: "Res", responseStream: true },
            },
          },
        },
      },
    },
  });
  const set = root.toDescriptor("proto3") as unknown as { file: object[] };
  const files = new Map(
    set.file.map((f, i) => [
      `f${i}.proto`,
      descriptor.FileDescriptorProto.encode(f as descriptor.IFileDescriptorProto).finish(),
    ]),
  );
  const m = methodOf(files, "shop.Orders", "Get");
  assertEquals(m.path, "/shop.Orders/Get");
  // ProtoJSON both ways: an int64 given as a string, a field named in lowerCamelCase.
  const req = encodeJson(m.requestType, { id: "9007199254740993" });
  assertEquals(m.requestType.decode(req).toJSON(), { id: "9007199254740993" });
  const res = m.responseType.encode(m.responseType.fromObject({ readyCount: 2 })).finish();
  assertEquals(decodeJson(m.responseType, res), { readyCount: 2 });
  for (
    const [method, why] of [
      ["Tail", "shop.Orders/Tail is a server streaming method; --method calls unary methods"],
      ["Put", "service shop.Orders has no method Put (it has Get, Tail)"],
    ]
  ) {
    assertEquals(
      assertThrows(() => methodOf(files, "shop.Orders", method!), NotResolved).message,
      why,
    );
  }
  assertEquals(
    assertThrows(() => encodeJson(m.requestType, { nope: 1 }), NotResolved).message,
    '--request does not fit shop.Req: unknown field: "nope"',
  );
  assertEquals(
    assertThrows(() => methodOf(files, "shop.Carts", "Get"), NotResolved).message,
    "the server's reflection does not describe service shop.Carts",
  );
});
