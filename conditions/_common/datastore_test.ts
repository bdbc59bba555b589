import { assertEquals } from "../../tests/_assert.ts";
import { scrub } from "./datastore.ts";

Deno.test("scrub() removes secrets, their encoded forms, and URL passwords", () => {
  assertEquals(scrub("login with p@ss/1 failed", ["p@ss/1"]), "login with *** failed");
  assertEquals(
    scrub("dsn postgres://app:p%40ss%2F1@db/app", ["p@ss/1"]),
    "dsn postgres://app:***@db/app",
  );
  assertEquals(scrub("redis://u:anything@h:6379 refused", []), "redis://u:***@h:6379 refused");
  assertEquals(scrub("short pw ab stays", ["ab"]), "short pw ab stays");
  assertEquals(scrub("no secret here", [undefined]), "no secret here");
});
