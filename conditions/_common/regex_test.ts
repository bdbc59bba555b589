import { assert, assertEquals } from "../../tests/_assert.ts";
import { compileRegex, re2Problem } from "./regex.ts";

Deno.test("compileRegex() matches like JavaScript for the common syntax, with flags", () => {
  assert(compileRegex("listening on .*:\\d+").test("now listening on 0.0.0.0:8080"));
  assert(!compileRegex("^ready$").test("not ready"));
  assert(compileRegex("^ready$", "m").test("x\nready\ny"));
  assert(compileRegex("abc", "i").test("ABC"));
  assert(compileRegex("a.c", "s").test("a\nc"));
});

Deno.test("compileRegex() runs in linear time where backtracking would not end", () => {
  const started = performance.now();
  assertEquals(compileRegex("^(a+)+$").test("a".repeat(5000) + "!"), false);
  assertEquals(compileRegex("x{20}y").test("x".repeat(1 << 20)), false);
  // A backtracking engine takes longer than the age of the universe on the first input.
  assert(performance.now() - started < 20_000);
});

Deno.test("re2Problem() names what RE2 refuses and accepts the rest", () => {
  assertEquals(re2Problem("a+b"), undefined);
  assertEquals(
    re2Problem("(?=x)"),
    "not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): invalid or unsupported Perl syntax: (?=",
  );
  assertEquals(
    re2Problem("(a)\\1"),
    "not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): invalid escape sequence: \\1",
  );
});
