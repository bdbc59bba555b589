import { assertEquals } from "../../tests/_assert.ts";
import { BoundedLines } from "./lines.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("BoundedLines splits lines across chunks", () => {
  const l = new BoundedLines(100);
  assertEquals(l.push(bytes('{"a":1}\n{"b"')), ['{"a":1}']);
  assertEquals(l.buffered, 4);
  assertEquals(l.push(bytes(":2}\n\n{")), ['{"b":2}', ""]);
  assertEquals(l.push(bytes("}\n")), ["{}"]);
  assertEquals([l.buffered, l.dropped], [0, 0]);
});

Deno.test("BoundedLines keeps a character split between chunks whole", () => {
  const l = new BoundedLines(100);
  const e = bytes("é\n");
  assertEquals(l.push(e.subarray(0, 1)), []);
  assertEquals(l.push(e.subarray(1)), ["é"]);
});

Deno.test("BoundedLines drops a line longer than its bound, whole, and holds no more than the bound", () => {
  const l = new BoundedLines(10);
  assertEquals(l.push(bytes("short\n0123456789")), ["short"]);
  assertEquals([l.buffered, l.dropped], [10, 0]);
  assertEquals(l.push(bytes("x")), []);
  // Counted once it passes the bound, before its end comes (if it ever does).
  assertEquals([l.buffered, l.dropped], [0, 1]);
  let held = 0;
  for (let i = 0; i < 1000; i++) {
    assertEquals(l.push(bytes("x".repeat(1000))), []);
    held = Math.max(held, l.buffered);
  }
  assertEquals(held, 0, "nothing of the long line is kept");
  assertEquals(l.push(bytes("tail\nnext\n")), ["next"]);
  assertEquals(l.dropped, 1);
  // Exactly the bound is kept.
  assertEquals(l.push(bytes("0123456789\n")), ["0123456789"]);
  assertEquals(l.push(bytes("01234567890\n")), []);
  assertEquals(l.dropped, 2);
});
