import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, usageError } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { idIn } from "./ids.ts";
import { formatMode, parseMode, type PermissionOptions } from "./mod.ts";
import { mismatches } from "./probe.ts";

Deno.test("permission parse() takes octal modes, ids or names, and a type", () => {
  assertEquals(
    optionsOf<PermissionOptions>([
      ...["perm", "/x", "--mode", "0644", "--owner", "0", "--group", "staff", "--type", "file"],
    ]),
    {
      path: "/x",
      mode: 0o644,
      modeIncludes: undefined,
      owner: { id: 0 },
      group: { name: "staff" },
      type: "file",
    },
  );
  assertEquals(conditionOf(["perm", "/x", "--mode", "600"]).name, "perm /x");
  assertEquals(conditionOf(["perm", "/x", "--mode", "600"]).kind.name, "permission");
  assertEquals([parseMode("0644"), parseMode("644"), parseMode("0o4755"), parseMode("7")], [
    0o644,
    0o644,
    0o4755,
    7,
  ]);
  assertEquals([parseMode("0999"), parseMode("rw-r--r--"), parseMode("01234567")], [
    undefined,
    undefined,
    undefined,
  ]);
  assertEquals(formatMode(0o100644), "0644");
});

Deno.test("permission parse() rejects what it cannot check", (t) =>
  stepUsageErrors(t, "permission"));

Deno.test("permission validate() resolves names: an unknown one is a usage error", async () => {
  // The unknown owner and group are rows of its _suite.ts.
  assertEquals(await usageError(["perm", "/x", "--owner", "root", "--group", "root"]), "");
  assertEquals(
    idIn("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n", "app"),
    1000,
  );
});

Deno.test("mismatches() names every property that does not hold", () => {
  const info = {
    isFile: true,
    isDirectory: false,
    isSymlink: false,
    isSocket: false,
    isFifo: false,
    isBlockDevice: false,
    isCharDevice: false,
    mode: 0o100640,
    uid: 0,
    gid: 4,
  } as Deno.FileInfo;
  const base = { path: "/x" };
  assertEquals(mismatches(info, { ...base, mode: 0o640, type: "file" }, {}), []);
  assertEquals(mismatches(info, { ...base, mode: 0o644 }, {}), ["mode is 0640, not 0644"]);
  assertEquals(mismatches(info, { ...base, modeIncludes: 0o604 }, {}), ["mode 0640 lacks 0004"]);
  assertEquals(
    mismatches(info, { ...base, type: "dir", owner: { name: "app" }, group: { id: 4 } }, {
      uid: 1000,
      gid: 4,
    }),
    ["is a file, not a dir", "owner is 0, not app (1000)"],
  );
});
