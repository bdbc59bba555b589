import { assertEquals } from "../tests/_assert.ts";
import { formatPorts, parsePortList } from "./ports.ts";

Deno.test("parsePortList() reads ranges and lists", () => {
  assertEquals(parsePortList("8000-8003,80, 8001"), [80, 8000, 8001, 8002, 8003]);
  assertEquals(parsePortList("5-1"), `the range "5-1" runs backwards`);
  assertEquals(typeof parsePortList("a-b"), "string");
});

Deno.test("formatPorts() compresses runs", () => {
  assertEquals(formatPorts([80, 8000, 8001, 8002, 9000]), "80, 8000-8002, 9000");
});
