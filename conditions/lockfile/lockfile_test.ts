import { assertEquals } from "../../tests/_assert.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { conditionOf, optionsOf, probeOf } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import type { LockfileOptions } from "./mod.ts";
import { ageOf } from "./probe.ts";

Deno.test("lockfile parse() defaults to --absent and takes --older-than with --present", () => {
  assertEquals(optionsOf<LockfileOptions>(["lockfile", "a.lock"]), {
    path: "a.lock",
    want: "absent",
    olderThanMs: undefined,
  });
  assertEquals(
    optionsOf<LockfileOptions>(["lockfile", "a.lock", "--present", "--older-than", "10m"]),
    {
      path: "a.lock",
      want: "present",
      olderThanMs: 600_000,
    },
  );
  assertEquals(conditionOf(["lockfile", "/tmp/a.lock"]).name, "lockfile /tmp/a.lock");
});

Deno.test("lockfile parse() rejects contradictions", (t) => stepUsageErrors(t, "lockfile"));

Deno.test("ageOf() counts from the mtime and never goes negative", () => {
  assertEquals(ageOf(new Date(1000), 5000), 4000);
  assertEquals(ageOf(new Date(9000), 5000), 0);
  assertEquals(ageOf(null, 5000), 0);
});

Deno.test("lockfile's probe counts a dangling symlink as a present lock", () =>
  inTempDir("waitcmd-lockfile-")(async (dir) => {
    await Deno.symlink("user@host.1234", `${dir}/.#file`);
    const once = { signal: AbortSignal.timeout(5000), attempt: 1 };
    assertEquals(
      (await checkOnce(await probeOf(["lockfile", `${dir}/.#file`, "--present"]), once.signal))
        .status,
      "satisfied",
    );
    assertEquals(
      (await checkOnce(await probeOf(["lockfile", `${dir}/.#file`]), once.signal)).status,
      "pending",
    );
  }));
