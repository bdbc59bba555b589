import { assert, assertEquals } from "../tests/_assert.ts";
import {
  createSearcher,
  feed,
  LineMatcher,
  LogFollower,
  type MatchSpec,
  MAX_LINE,
  PartialLine,
  type StartAt,
} from "./_logscan.ts";

const enc = new TextEncoder();

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

/** Feeds `text` through a searcher-backed buffer in chunks of the given sizes. */
function scan(text: string, spec: MatchSpec, sizes: () => number, wasm: boolean) {
  const m = new LineMatcher(spec);
  const bytes = enc.encode(text);
  const s = createSearcher(m.needle, 4096, { wasm });
  const partial = new PartialLine();
  let at = 0;
  while (at < bytes.length && !m.done) {
    const n = Math.min(sizes(), bytes.length - at, s.buffer.length);
    s.buffer.set(bytes.subarray(at, at + n));
    feed(partial, m, s.buffer, n, (from, to) => s.find(from, to));
    at += n;
  }
  return { count: m.count, last: m.last };
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
    ["matches", { matches: /^job \d+ done/, required: 100 }],
    ["matches + exclude", { matches: /ERROR/, exclude: ["unicode"], required: 100 }],
    ["contains + matches", { contains: "ERROR", matches: /full$/, required: 100 }],
    ["min-matches stops at the Nth", { contains: "ERROR", required: 3 }],
    ["one-byte needle", { contains: "R", required: 100 }],
    ["needle at line end", { contains: "complete", required: 100 }],
  ];
  for (const [name, spec] of specs) {
    await t.step(name, () => {
      const want = expected(SAMPLE, spec);
      for (const wasm of [true, false]) {
        for (const size of [1, 2, 3, 7, 16, 4096]) {
          assertEquals(scan(SAMPLE, spec, () => size, wasm), want, `${name}, chunks of ${size}`);
        }
        const r = rng(seedOf(name));
        for (let i = 0; i < 20; i++) {
          assertEquals(scan(SAMPLE, spec, () => 1 + Math.floor(r() * 40), wasm), want);
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

Deno.test("createSearcher() finds the same offsets with WebAssembly and JavaScript", () => {
  const r = rng(42);
  const alphabet = enc.encode("ab\nc");
  for (let round = 0; round < 300; round++) {
    const len = 1 + Math.floor(r() * 200);
    const needle = new Uint8Array(1 + Math.floor(r() * 20));
    for (let i = 0; i < needle.length; i++) needle[i] = alphabet[Math.floor(r() * 3)]!;
    const wasm = createSearcher(needle, 256, { wasm: true });
    const js = createSearcher(needle, 256, { wasm: false });
    for (let i = 0; i < len; i++) {
      const b = alphabet[Math.floor(r() * 4)]!;
      wasm.buffer[i] = b;
      js.buffer[i] = b;
    }
    const from = Math.floor(r() * len);
    const naive = (() => {
      outer: for (let i = from; i + needle.length <= len; i++) {
        for (let j = 0; j < needle.length; j++) if (js.buffer[i + j] !== needle[j]) continue outer;
        return i;
      }
      return -1;
    })();
    assertEquals(wasm.find(from, len), naive, `round ${round}`);
    assertEquals(js.find(from, len), naive, `round ${round} (js)`);
  }
});

/** A temporary directory with a follower on `app.log` inside it. */
async function withLog(
  fn: (dir: string, path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-logscan-" });
  try {
    await fn(dir, `${dir}/app.log`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function follower(path: string, startAt: StartAt, spec: MatchSpec) {
  const m = new LineMatcher(spec);
  const f = new LogFollower(path, startAt, m);
  const signal = new AbortController().signal;
  return { m, f, poll: () => f.poll(signal) };
}

const END: StartAt = { from: "tail", lines: 0 };
const append = (p: string, text: string) => Deno.writeTextFile(p, text, { append: true });

Deno.test("LogFollower skips existing lines by default but not an unfinished one", async () => {
  await withLog(async (_dir, path) => {
    await Deno.writeTextFile(path, "hit 1\nhit 2\nhi");
    const { m, f, poll } = follower(path, END, { contains: "hit", required: 5 });
    try {
      assertEquals(await poll(), { state: "open" });
      assertEquals(m.count, 0);
      await append(path, "t 3\nhit 4\n");
      await poll();
      assertEquals([m.count, m.last], [2, "hit 4"]);
    } finally {
      f.close();
    }
  });
});

Deno.test("LogFollower --tail N reads the last N complete lines", async (t) => {
  const rows: [string, number, number][] = [
    ["x 1\nx 2\nx 3\n", 2, 2],
    ["x 1\nx 2\nx 3\n", 0, 0],
    ["x 1\nx 2\nx 3\n", 10, 3],
    ["x 1\nx 2\nx 3", 1, 1], // x 2, plus x 3 once its newline comes
    ["no newline x", 5, 0],
  ];
  for (const [content, n, count] of rows) {
    await t.step(`${JSON.stringify(content)} --tail ${n}`, async () => {
      await withLog(async (_dir, path) => {
        await Deno.writeTextFile(path, content);
        const { m, f, poll } = follower(path, { from: "tail", lines: n }, {
          contains: "x",
          required: 100,
        });
        try {
          await poll();
          assertEquals(m.count, count);
        } finally {
          f.close();
        }
      });
    });
  }
});

Deno.test("LogFollower --tail scans back over more than one read buffer", async () => {
  await withLog(async (_dir, path) => {
    const filler = "f".repeat(1000) + "\n";
    await Deno.writeTextFile(path, "first x\n" + filler.repeat(3000) + "last x\n");
    const { m, f, poll } = follower(path, { from: "tail", lines: 3002 }, {
      contains: "x",
      required: 100,
    });
    try {
      await poll();
      assertEquals([m.count, m.last], [2, "last x"]);
    } finally {
      f.close();
    }
  });
});

Deno.test("LogFollower reads a file created later from its start", async () => {
  await withLog(async (_dir, path) => {
    const { m, f, poll } = follower(path, END, { contains: "up", required: 1 });
    try {
      assertEquals(await poll(), { state: "missing" });
      await Deno.writeTextFile(path, "service up\n");
      assertEquals(await poll(), { state: "open" });
      assertEquals(m.last, "service up");
    } finally {
      f.close();
    }
  });
});

Deno.test("LogFollower drains a renamed file before the new one and keeps the count", async () => {
  await withLog(async (dir, path) => {
    await Deno.writeTextFile(path, "");
    const { m, f, poll } = follower(path, END, { contains: "n", required: 100 });
    try {
      await poll();
      await append(path, "n1\nn");
      await poll();
      await Deno.rename(path, `${dir}/app.log.1`);
      await append(`${dir}/app.log.1`, "2\nn3\n"); // a writer that has not reopened yet
      await Deno.writeTextFile(path, "n4\n");
      await poll();
      assertEquals([m.count, m.last], [4, "n4"]);
      assert(f.lingering, "the old file is still read");
      await append(`${dir}/app.log.1`, "n5\n");
      await poll();
      assertEquals([m.count, m.last], [5, "n5"]);
    } finally {
      f.close();
    }
  });
});

Deno.test("LogFollower restarts a truncated file, also one that grew back past the offset", async () => {
  await withLog(async (_dir, path) => {
    await Deno.writeTextFile(path, "");
    const { m, f, poll } = follower(path, END, { contains: "line", required: 100 });
    try {
      await poll();
      await append(path, "line 1\nline 2\n");
      await poll();
      assertEquals(m.count, 2);
      await Deno.truncate(path, 0);
      await append(path, "line 3\n");
      await poll();
      assertEquals([m.count, m.last], [3, "line 3"]);
      // copytruncate, and the writer went on past the old offset before the next look.
      await Deno.truncate(path, 0);
      await append(path, "line 4 is much longer than before\nline 5\n");
      await poll();
      assertEquals([m.count, m.last], [5, "line 5"]);
      // ... and one that grew back to exactly the old size.
      const size = (await Deno.stat(path)).size;
      await Deno.truncate(path, 0);
      await append(path, "line 6 is ".padEnd(size - "line 7\n".length - 1, ".") + "\nline 7\n");
      assertEquals((await Deno.stat(path)).size, size);
      await poll();
      assertEquals([m.count, m.last], [7, "line 7"]);
    } finally {
      f.close();
    }
  });
});

Deno.test("LogFollower reports a directory as an error, not a match", async () => {
  await withLog(async (dir) => {
    const { f, poll } = follower(dir, END, { contains: "x", required: 1 });
    try {
      assertEquals(await poll(), { state: "error", error: "is a directory" });
    } finally {
      f.close();
    }
  });
});
