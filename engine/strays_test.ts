import { assertEquals } from "../tests/_assert.ts";
import { ignoreStrays, isHarmlessStray } from "./strays.ts";

Deno.test("isHarmlessStray() matches only what a kind declared harmless", () => {
  const mine = new Error("peer refused Hello");
  assertEquals(isHarmlessStray(mine), false);
  ignoreStrays((r) => r === mine);
  assertEquals([isHarmlessStray(mine), isHarmlessStray(new Error("other"))], [true, false]);
});

Deno.test("strayLine() reports a stray as an internal error unless it is harmless", async () => {
  const { strayLine } = await import("../main.ts");
  assertEquals(strayLine(new Error("socket hang up")), "waitcmd: internal error: socket hang up\n");
  const known = new Error("known");
  ignoreStrays((r) => r === known);
  assertEquals(strayLine(known), undefined);
});
