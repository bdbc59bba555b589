import { assertEquals, assertThrows } from "../../tests/_assert.ts";
import { optionsOf } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { formatPorts, parsePortList, type PortsOptions } from "./mod.ts";

Deno.test("parsePortList() reads ranges and lists", () => {
  assertEquals(parsePortList("8000-8003,80, 8001"), [80, 8000, 8001, 8002, 8003]);
  assertEquals(
    assertThrows(() => parsePortList("5-1"), Error).message,
    `the range "5-1" runs backwards`,
  );
  assertThrows(() => parsePortList("a-b"), Error);
});

Deno.test("formatPorts() compresses runs", () => {
  assertEquals(formatPorts([80, 8000, 8001, 8002, 9000]), "80, 8000-8002, 9000");
});

Deno.test("ports parse() returns plain options and reports bad ranges", async (t) => {
  assertEquals(optionsOf<PortsOptions>(["ports", "[::1]", "--range", "81,80", "--any"]), {
    host: "::1",
    ports: [80, 81],
    any: true,
  });
  await stepUsageErrors(t, "ports");
});
