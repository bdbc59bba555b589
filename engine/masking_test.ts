import { assertEquals } from "../tests/_assert.ts";
import {
  clip,
  escapeControls,
  maskUrlPasswords,
  ownWords,
  redactText,
  SecretRegistry,
} from "./masking.ts";

Deno.test("SecretRegistry masks what it was given and what is added later, longest first", () => {
  const r = new SecretRegistry(["abcd", "abcdef", "xyz"]);
  assertEquals(r.mask("abcdef abcd xyz"), "*** *** xyz");
  r.add("late-token");
  r.add(undefined);
  assertEquals(r.mask("Bearer late-token"), "Bearer ***");
  // Inside a URL a secret shows percent-encoded.
  r.add("p@ss word");
  assertEquals(r.mask("postgres://app:p%40ss%20word@db"), "postgres://app:***@db");
  assertEquals(new SecretRegistry().size, 0);
  assertEquals(new SecretRegistry(["abc"]).size, 0);
});

Deno.test("SecretRegistry.keep(): a secret equal to one of waitcmd's own words is not masked by value", () => {
  const r = new SecretRegistry(["postgres", "hunter22"]);
  r.keep(ownWords(["postgres postgres://postgres:***@127.0.0.1:5432/postgres"]));
  assertEquals(r.mask("as postgres@postgres, pw hunter22"), "as postgres@postgres, pw ***");
  assertEquals([...r.values()], ["hunter22"]);
  assertEquals(ownWords(["a-b.c:1"]), new Set(["a", "b", "c", "1", "a-b.c"]));
});

Deno.test("SecretRegistry.mask() never breaks a word: a secret glued to word characters stays", () => {
  const r = new SecretRegistry(["WRONG", "-pw-", "postgres"]);
  assertEquals(r.mask("WRONGPASS invalid password"), "WRONGPASS invalid password");
  assertEquals(r.mask("got WRONG, (WRONG) WRONG_ xWRONG"), "got ***, (***) WRONG_ xWRONG");
  // The edges where the secret has no word character may touch anything.
  assertEquals(r.mask("a-pw-b"), "a***b");
  assertEquals(r.mask("user=postgres db=postgres;"), "user=*** db=***;");
  // An occurrence glued on one side does not hide the next one.
  assertEquals(r.mask("WRONGWRONG WRONG"), "WRONGWRONG ***");
  // From 8 characters on, a secret is masked glued or not: no word holds it by chance.
  r.add("Zq9Secret11");
  assertEquals(r.mask("0000Zq9Secret11x"), "0000***x");
});

Deno.test("redactText() masks registered secrets and every URL's password, keeping its user", () => {
  assertEquals(
    redactText("connect to postgres://app:hunter2@db:5432/app failed; see https://h/x"),
    "connect to postgres://app:***@db:5432/app failed; see https://h/x",
  );
  assertEquals(redactText("amqp://u:p@h and redis://:pw@r"), "amqp://u:***@h and redis://:***@r");
  assertEquals(redactText("user@host and http://host:8080/"), "user@host and http://host:8080/");
  const form = "expected postgres://[user[:password]@]host, redis://[[user]:password@]host";
  assertEquals(redactText(form), form);
  assertEquals(redactText("token TOKEN9", new SecretRegistry(["TOKEN9"])), "token ***");
  assertEquals(redactText("a://b://c:d@e x://u:p:q@h/"), "a://b://c:***@e x://u:***@h/");
  assertEquals(maskUrlPasswords("://u:p@h and 1://u:p@h"), "://u:p@h and 1://u:***@h");
});

Deno.test("escapeControls() writes control characters as escapes and keeps tabs", () => {
  assertEquals(escapeControls("a\nb\r\x1b[1A\tc\u2028\x7f"), "a\\nb\\r\\x1b[1A\tc\\u2028\\x7f");
  assertEquals(escapeControls("plain text"), "plain text");
});

Deno.test("clip() redacts, then escapes, then cuts: no cut leaves a secret's start", () => {
  const secrets = new SecretRegistry(["Zq9Secret11"]);
  // Cut first, the line would end in "Zq9Secret…".
  const line = "0".repeat(189) + " Zq9Secret11";
  assertEquals(clip(line, 200, secrets), "0".repeat(189) + " ***");
  assertEquals(clip("x".repeat(300), 200), "x".repeat(199) + "…");
  assertEquals(clip("a\nb", 10), "a\\nb");
  assertEquals(clip("db postgres://app:pw@h".repeat(20), 30).includes("pw"), false);
  // Never half a surrogate pair.
  assertEquals(clip("ab😀cd", 4), "ab…");
});
