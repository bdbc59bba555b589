import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, plan } from "../../tests/_kit.ts";
import type { WebsocketOptions } from "./mod.ts";

Deno.test("websocket parse() keeps the URL and the checks as plain options", () => {
  assertEquals(
    optionsOf<WebsocketOptions>([
      ...["ws", "wss://h.example/live", "--send", "ping", "--contains", "pong"],
      ...["--subprotocol", "chat.v1", "--insecure"],
    ]),
    {
      url: "wss://h.example/live",
      headers: [],
      subprotocols: ["chat.v1"],
      send: "ping",
      match: { contains: "pong", matches: undefined },
      caFile: undefined,
      insecure: true,
      ping: false,
      closeCode: undefined,
    },
  );
  const o = optionsOf<WebsocketOptions>(["ws", "ws://h/", "--ping", "--expect-close-code", "4000"]);
  assertEquals([o.ping, o.closeCode], [true, 4000]);
});

Deno.test("websocket parse() takes only close codes a server can send", () => {
  for (const code of [1000, 1003, 1005, 1007, 1014, 3000, 4999]) {
    assertEquals(
      optionsOf<WebsocketOptions>(["ws", "ws://h/", "--expect-close-code", String(code)]).closeCode,
      code,
    );
  }
  const where = "waitcmd: condition 1 (ws): --expect-close-code:";
  const see = "(see: waitcmd help websocket)";
  assertEquals(
    parseError(["ws", "ws://h/", "--expect-close-code", "2000"]),
    `${where} 2000 is reserved by RFC 6455 and never sent by a server ${see}`,
  );
  assertEquals(
    parseError(["ws", "ws://h/", "--expect-close-code", "1006"]),
    `${where} 1006 is never sent by a server (it reports a connection lost without a close frame) ${see}`,
  );
  assertEquals(
    parseError(["ws", "ws://h/", "--expect-close-code", "999"]),
    `${where} expected a whole number from 1000 to 4999, got "999" ${see}`,
  );
});

Deno.test("websocket parse() sends user-info as basic auth and hides every secret", () => {
  const args = ["ws", "ws://app:pw-123@h:8080/s?token=tk-456", "--header", "Cookie: sid=ck-789"];
  const o = optionsOf<WebsocketOptions>(args);
  assertEquals(o.url, "ws://h:8080/s?token=tk-456");
  assertEquals(o.headers.map((h) => [h.name, h.secret]), [["Cookie", true], [
    "Authorization",
    true,
  ]]);
  assertEquals(o.headers[1]!.value, `Basic ${btoa("app:pw-123")}`);
  const c = conditionOf(args);
  assertEquals(c.name, "ws ws://app:***@h:8080/s?token=***");
  const secrets = plan(args).secrets;
  for (const s of ["pw-123", "tk-456", "sid=ck-789"]) assert(secrets.includes(s), s);
});

Deno.test("websocket parse() rejects other schemes and TLS flags on ws://", () => {
  assertEquals(
    parseError(["websocket", "https://h/"]),
    'waitcmd: condition 1 (websocket): expected a ws:// or wss:// URL, got "https://h/" (see: waitcmd help websocket)',
  );
  assertEquals(
    parseError(["ws", "ws://h/", "--insecure"]),
    "waitcmd: condition 1 (ws): --insecure: needs a wss:// URL (see: waitcmd help websocket)",
  );
  assertEquals(
    parseError(["ws", "ws://h/", "--subprotocol", "a", "--subprotocol", "a"]),
    "waitcmd: condition 1 (ws): --subprotocol: each subprotocol may be offered once (see: waitcmd help websocket)",
  );
});
