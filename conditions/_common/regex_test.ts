import { assert, assertEquals, assertRejects } from "../../tests/_assert.ts";
import { compileRegex, INLINE_TEXT, re2Problem, testText } from "./regex.ts";

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

Deno.test("testText() matches a long text in a worker, which an abort ends at once", async () => {
  const never = new AbortController().signal;
  const long = "a".repeat(INLINE_TEXT * 4);
  assertEquals(await testText(compileRegex("a$"), long, never), true);
  assertEquals(await testText(compileRegex("^b"), long, never), false);
  assertEquals(await testText(compileRegex("^a", "m"), "x\na", never), true); // inline

  // About 2.7 s of matching: the main thread stays free and the abort wins.
  const stop = new AbortController();
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const matching = testText(compileRegex("^(a+)+$"), "a".repeat(10 << 20), stop.signal);
  setTimeout(() => stop.abort(new Error("deadline")), 200);
  try {
    await assertRejects(() => matching, Error, "deadline");
  } finally {
    clearInterval(timer);
  }
  assert(ticks >= 5, `the main thread was blocked (${ticks} ticks in 200 ms)`);
});
