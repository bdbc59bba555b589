import { assertEquals } from "../tests/_assert.ts";
import { isUtf8 } from "./files.ts";

Deno.test("isUtf8() accepts well-formed UTF-8 and nothing else", () => {
  const ok = ["", "plain", "é", "€", "😀", "\u{10FFFF}", "a\u0000b"];
  for (const s of ok) assertEquals(isUtf8(new TextEncoder().encode(s)), true, s);
  const bad = [
    [0xff],
    [0xfe, 0x41],
    [0x80], // a continuation byte alone
    [0xc0, 0xaf], // overlong
    [0xe0, 0x80, 0xaf], // overlong
    [0xed, 0xa0, 0x80], // a surrogate
    [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    [0xe2, 0x82], // cut short
    [0x2f, 0x62, 0x61, 0x64, 0xff, 0xfe, 0x6e], // /bad\xff\xfen
  ];
  for (const b of bad) assertEquals(isUtf8(new Uint8Array(b)), false, b.join(","));
});
