import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, usageError } from "../../tests/_kit.ts";
import { preview } from "../_common/textmatch.ts";
import type { UdpOptions } from "./mod.ts";

Deno.test("udp parse() turns --send and --send-hex into the payload's hex", () => {
  assertEquals(optionsOf<UdpOptions>(["udp", "db:53", "--send", "hi"]), {
    hp: { hostname: "db", port: 53 },
    payloadHex: "6869",
    match: { contains: undefined, matches: undefined },
  });
  assertEquals(
    optionsOf<UdpOptions>(["udp", "[::1]:9", "--send-hex", "0xFF 00:1a", "--contains", "ok"]),
    {
      hp: { hostname: "::1", port: 9 },
      payloadHex: "ff001a",
      match: { contains: "ok", matches: undefined },
    },
  );
  assertEquals(conditionOf(["udp", "[::1]:9", "--send", "x"]).name, "udp [::1]:9");
});

Deno.test("udp parse() rejects a missing, doubled or malformed payload", async (t) => {
  const rows: [string[], string][] = [
    [["udp", "h:1"], "needs --send TEXT or --send-hex HEX (the datagram to send)"],
    [
      ["udp", "h:1", "--send", "a", "--send-hex", "00"],
      "--send-hex: cannot be combined with --send",
    ],
    [
      ["udp", "h:1", "--send-hex", "abc"],
      `--send-hex: expected bytes in hex like 'ff 00 1a', got "abc"`,
    ],
    [["udp", "h:1", "--send-hex", ""], `--send-hex: expected bytes in hex like 'ff 00 1a', got ""`],
    [["udp", "h:1", "--send", ""], "--send: expected a text, got an empty string"],
    [["udp", "h", "--send", "a"], `expected HOST:PORT or [IPv6]:PORT, got "h"`],
  ];
  for (const [args, msg] of rows) {
    await t.step(args.join(" "), () => {
      assertEquals(parseError(args), `waitcmd: condition 1 (udp): ${msg} (see: waitcmd help udp)`);
    });
  }
});

Deno.test("udp --matches is checked for JavaScript and for the linear-time engine", async () => {
  assertEquals(
    await usageError(["udp", "h:1", "--send", "a", "--matches", "a(?!b)"]),
    "waitcmd: condition 1 (udp): --matches: not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): invalid or unsupported Perl syntax: (?! (see: waitcmd help udp)",
  );
  assertEquals(await usageError(["udp", "h:1", "--send", "a", "--matches", "^pong\\d+$"]), "");
});

Deno.test("preview() quotes short text, cuts long text and shows binary as hex", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  assertEquals(preview(enc("pong")), '"pong" (4 B)');
  assertEquals(preview(enc("x".repeat(70))), `"${"x".repeat(60)}"… (70 B)`);
  assertEquals(preview(new Uint8Array([0xff, 0x00, 0x1a])), "0xff001a (3 B)");
});
