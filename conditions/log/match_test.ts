import { assertEquals, assertRejects } from "../../tests/_assert.ts";
import { compileRegex, INLINE_TEXT } from "../_common/regex.ts";
import { createSearcher } from "../_common/bytes.ts";
import { feed, LineMatcher, type MatchSpec, MAX_LINE, PartialLine } from "./match.ts";

const enc = new TextEncoder();
const NEVER = new AbortController().signal;

/** A deterministic pseudo-random generator (tests must not be flaky). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** What the matcher should find, computed the obvious way. */
function expected(text: string, spec: MatchSpec): { count: number; last: string } {
  const lines = text.split("\n").slice(0, -1).map((l) => l.endsWith("\r") ? l.slice(0, -1) : l);
  let count = 0;
  let last = "";
  for (const l of lines) {
    if (count >= spec.required) break;
    if (spec.contains !== undefined && !l.includes(spec.contains)) continue;
    if (spec.exclude?.some((x) => l.includes(x))) continue;
    if (spec.matches && !spec.matches.test(l)) continue;
    count++;
    last = l;
  }
  return { count, last };
}

/**
 * Feeds `text` in chunks of the given sizes through a searcher-backed buffer
 * (`inPlace`), or through a plain one searched by copy.
 */
async function scan(text: string, spec: MatchSpec, sizes: () => number, inPlace: boolean) {
  const m = await scanMatcher(text, spec, sizes, inPlace);
  return { count: m.count, last: m.last };
}

/** Like {@link scan}, returning the matcher itself (its captures). */
async function scanMatcher(
  text: string,
  spec: MatchSpec,
  sizes: () => number,
  inPlace: boolean,
): Promise<LineMatcher> {
  const m = new LineMatcher(spec);
  const bytes = enc.encode(text);
  const s = createSearcher(m.needle, 4096);
  const partial = new PartialLine();
  let at = 0;
  while (at < bytes.length && !m.done) {
    const n = Math.min(sizes(), bytes.length - at, s.buffer.length);
    s.buffer.set(bytes.subarray(at, at + n));
    feed(partial, m, s.buffer, n, inPlace ? (from, to) => s.find(from, to) : undefined);
    await m.drain(NEVER);
    at += n;
  }
  return m;
}

const SAMPLE = [
  "plain line",
  "ERROR disk full",
  "ERROR dry-run disk full\r",
  "",
  "warning: ERRO",
  "R split? no",
  "job 17 done in 12ms",
  "ERROR ERROR twice on one line",
  "\u00e9t\u00e9 ERROR unicode \u2713",
  "ERROR last complete",
  "ERROR unfinished",
].join("\n");

Deno.test("feed() finds the same lines whatever the chunk borders", async (t) => {
  const specs: [string, MatchSpec][] = [
    ["contains", { contains: "ERROR", required: 100 }],
    ["contains + exclude", { contains: "ERROR", exclude: ["dry-run", "twice"], required: 100 }],
    ["matches", { matches: compileRegex("^job \\d+ done"), required: 100 }],
    ["matches + exclude", { matches: compileRegex("ERROR"), exclude: ["unicode"], required: 100 }],
    ["contains + matches", { contains: "ERROR", matches: compileRegex("full$"), required: 100 }],
    ["min-matches stops at the Nth", { contains: "ERROR", required: 3 }],
    ["one-byte needle", { contains: "R", required: 100 }],
    ["needle at line end", { contains: "complete", required: 100 }],
  ];
  for (const [name, spec] of specs) {
    await t.step(name, async () => {
      const want = expected(SAMPLE, spec);
      for (const inPlace of [true, false]) {
        for (const size of [1, 2, 3, 7, 16, 4096]) {
          assertEquals(
            await scan(SAMPLE, spec, () => size, inPlace),
            want,
            `${name}, chunks of ${size}`,
          );
        }
        const r = rng(seedOf(name));
        for (let i = 0; i < 20; i++) {
          assertEquals(await scan(SAMPLE, spec, () => 1 + Math.floor(r() * 40), inPlace), want);
        }
      }
    });
  }
});

function seedOf(name: string): number {
  return [...name].reduce((a, c) => a * 31 + c.charCodeAt(0), 7) >>> 0;
}

Deno.test("feed() strips CR, ignores the unfinished last line and empty matches", () => {
  const m = new LineMatcher({ contains: "ready", required: 1 });
  const p = new PartialLine();
  const buf = enc.encode("server ready\r\nready but unfinished");
  feed(p, m, buf, buf.length);
  assertEquals([m.count, m.last], [1, "server ready"]);
  const m2 = new LineMatcher({ contains: "unfinished", required: 1 });
  const p2 = new PartialLine();
  feed(p2, m2, buf, buf.length);
  assertEquals(m2.count, 0);
  feed(p2, m2, enc.encode("\n"), 1);
  assertEquals(m2.last, "ready but unfinished");
});

Deno.test("feed() caps an over-long line and still matches the lines after it", () => {
  const m = new LineMatcher({ contains: "needle", required: 2 });
  const p = new PartialLine();
  const chunk = new Uint8Array(64 * 1024).fill(0x61); // 'a', no newline
  const early = enc.encode("needle ");
  const first = new Uint8Array(chunk);
  first.set(early);
  feed(p, m, first, first.length);
  // More than MAX_LINE bytes of the same line, with the needle only beyond the cap.
  for (let i = 0; i < MAX_LINE / chunk.length + 2; i++) feed(p, m, chunk, chunk.length);
  const late = enc.encode("needle too late\nnext needle line\n");
  feed(p, m, late, late.length);
  assertEquals(m.count, 2);
  assertEquals(m.last, "next needle line");
  const m2 = new LineMatcher({ contains: "too late", required: 1 });
  const p2 = new PartialLine();
  for (let i = 0; i < MAX_LINE / chunk.length + 2; i++) feed(p2, m2, chunk, chunk.length);
  feed(p2, m2, late, late.length);
  assertEquals(m2.count, 0, "text beyond the line cap is not matched");
});

Deno.test("drain() matches queued lines in order, a very long one in a worker, and stops on abort", async () => {
  const long = "x".repeat(INLINE_TEXT + 10) + " ready";
  const text = ["ready 1", "no", long, "ready 3", ""].join("\n");
  const m = new LineMatcher({ matches: compileRegex("ready"), required: 3 });
  const buf = enc.encode(text);
  feed(new PartialLine(), m, buf, buf.length);
  assertEquals(m.count, 0); // queued, not matched yet
  await m.drain(NEVER);
  assertEquals([m.count, m.last], [3, "ready 3"]);

  // Many short lines: the matching yields, so an abort in the middle is seen.
  const many = enc.encode("line\n".repeat(200_000));
  const m2 = new LineMatcher({ matches: compileRegex("^(a+)+$"), required: 1 });
  feed(new PartialLine(), m2, many, many.length);
  const stop = new AbortController();
  const draining = m2.drain(stop.signal);
  setTimeout(() => stop.abort(new Error("deadline")), 0);
  await assertRejects(() => draining, Error, "deadline");
  assertEquals(m2.count, 0);
});

Deno.test("LineMatcher --jsonpath counts only JSON-object lines that satisfy every expression", async () => {
  const { parseJsonPathExpr } = await import("../_common/jsonpath.ts");
  const text = [
    '{"level":"info","msg":"booting"}',
    "plain text level=error",
    '["level","error"]',
    '{"level":"error","msg":"not json',
    '  {"level":"error","code":7,"msg":"disk full"}\r',
    '{"level":"error","code":3}',
    "",
  ].join("\n");
  const spec: MatchSpec = {
    jsonpaths: [parseJsonPathExpr('$.level == "error"'), parseJsonPathExpr("$.code > 5")],
    required: 1,
  };
  const m = await scanMatcher(text, spec, () => 7, false);
  assertEquals([m.count, m.last], [1, '  {"level":"error","code":7,"msg":"disk full"}']);
  assertEquals(m.captures, { value: "7" });
  // With --contains and --matches too, all must hold; --matches' groups are kept.
  const both = await scanMatcher(
    text,
    {
      contains: "error",
      matches: compileRegex('"code":(?P<code>\\d)'),
      jsonpaths: [parseJsonPathExpr("$.msg")],
      required: 1,
    },
    () => 64,
    true,
  );
  assertEquals([both.count, both.captures], [1, { "1": "7", code: "7", value: "disk full" }]);
  const none = await scan(
    '{"a":1}\nnull\n42\n"x"\n',
    {
      jsonpaths: [parseJsonPathExpr("$.b")],
      required: 1,
    },
    () => 3,
    false,
  );
  assertEquals(none.count, 0);
});
