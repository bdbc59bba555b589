import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, plan } from "../../tests/_kit.ts";
import { judgeError } from "./errors.ts";
import type { RedisOptions } from "./mod.ts";

const ctx = { user: "app", hostname: "cache", secrets: ["s3cret-pw"] };

Deno.test("redis parse() splits the URL: ACL user, password, database, TLS from rediss://", () => {
  const o = optionsOf<RedisOptions>(["redis", "redis://cache"]);
  assertEquals([o.hp, o.user, o.password, o.database, o.tls.mode], [
    { hostname: "cache", port: 6379 },
    undefined,
    undefined,
    0,
    "off",
  ]);
  const s = optionsOf<RedisOptions>(["valkey", "rediss://app:p%3Aw@cache:6380/3"]);
  assertEquals([s.user, s.password, s.database, s.tls], [
    "app",
    { value: "p:w" },
    3,
    { mode: "on", verify: "full", caFile: undefined },
  ]);
  const d = optionsOf<RedisOptions>(["redis", "redis://:only-pw@cache"]);
  assertEquals([d.user, d.password], [undefined, { value: "only-pw" }]);
  const k = optionsOf<RedisOptions>([
    ...["redis", "redis://cache", "--key", "k", "--equals", "v", "--role", "replica"],
  ]);
  assertEquals([k.key, k.equals, k.role], ["k", "v", "replica"]);
});

Deno.test("redis --expect-key KEY[=REGEX] splits at the first =, as wait4x does", () => {
  const rows: [string, [string, string | undefined]][] = [
    ["app:ready", ["app:ready", undefined]],
    ["deploy=^done$", ["deploy", "^done$"]],
    ["a=b=c", ["a", "b=c"]],
    ["k=", ["k", ""]], // an empty pattern: any string value
  ];
  for (const [given, [key, matches]] of rows) {
    const o = optionsOf<RedisOptions>(["redis", "redis://cache", "--expect-key", given]);
    assertEquals([o.key, o.equals, o.matches], [key, undefined, matches], given);
  }
  assertEquals(
    optionsOf<RedisOptions>(["redis", "redis://cache", "--key", "k"]).matches,
    undefined,
  );
});

Deno.test("redis display name keeps the user and masks only the password", () => {
  assertEquals(
    conditionOf(["valkey", "rediss://app:s3cret@cache:6380/2"]).name,
    "valkey rediss://app:***@cache:6380/2",
  );
  assertEquals(conditionOf(["redis", "redis://:s3cret@cache"]).name, "redis redis://:***@cache");
  assert(plan(["redis", "redis://:s3cret@cache"]).secrets.includes("s3cret"));
});

Deno.test("redis judgeError(): refused credentials name the user (default without one)", () => {
  const wrong = new Error("WRONGPASS invalid username-password pair or user is disabled.");
  assertEquals(judgeError(wrong, ctx), {
    status: "pending",
    error:
      'authentication failed for user "app": WRONGPASS invalid username-password pair or user is disabled.',
  });
  assertEquals(
    judgeError(new Error("NOAUTH Authentication required."), { ...ctx, user: undefined }),
    {
      status: "pending",
      error: 'authentication failed for user "default": NOAUTH Authentication required.',
    },
  );
});

Deno.test("redis judgeError(): server replies and network failures are pending with their text", () => {
  for (
    const message of [
      "LOADING Redis is loading the dataset in memory",
      "ERR DB index is out of range",
      "NOPERM User app has no permissions to run the 'exists' command",
      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    ]
  ) {
    assertEquals(judgeError(new Error(message), ctx), { status: "pending", error: message });
  }
  const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:6379"), {
    code: "ECONNREFUSED",
  });
  assertEquals(judgeError(refused, ctx), { status: "pending", error: "connection refused" });
  assertEquals(judgeError(new Error("Socket closed unexpectedly"), ctx), {
    status: "pending",
    error: "the server closed the connection",
  });
  const leaky = judgeError(new Error("ERR bad s3cret-pw"), ctx);
  assert(leaky.status === "pending" && !leaky.error.includes("s3cret-pw"));
});

Deno.test("redis cuts a value at regex.ts's inline limit before a pattern runs on it", async () => {
  const { INLINE_TEXT } = await import("../_common/regex.ts");
  const { head, MATCHED_MAX } = await import("./probe.ts");
  assertEquals(MATCHED_MAX, INLINE_TEXT);
  assertEquals(head("ready"), "ready");
  assertEquals(head("x".repeat(MATCHED_MAX + 10)).length, MATCHED_MAX);
  // Never half a surrogate pair: an emoji across the limit is left out whole.
  const long = "x".repeat(MATCHED_MAX - 1) + "😀" + "tail";
  assertEquals(head(long), "x".repeat(MATCHED_MAX - 1));
});
