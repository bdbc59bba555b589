import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError } from "../../tests/_kit.ts";
import type { UnixOptions } from "./mod.ts";

Deno.test("unix parse() takes the socket path as its options", () => {
  assertEquals(optionsOf<UnixOptions>(["unix", "/run/app.sock"]), { path: "/run/app.sock" });
  assertEquals(conditionOf(["unix", "./rel/app.sock"]).name, "unix ./rel/app.sock");
});

Deno.test("unix parse() needs a non-empty path", () => {
  assertEquals(
    parseError(["unix"]),
    "waitcmd: condition 1 (unix): missing target PATH (see: waitcmd help unix)",
  );
  assertEquals(
    parseError(["unix", ""]),
    "waitcmd: condition 1 (unix): expected a socket path, got an empty string (see: waitcmd help unix)",
  );
});
