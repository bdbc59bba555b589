import { assert, assertEquals } from "../../tests/_assert.ts";
import { type Clock, realClock } from "../../engine/clock.ts";
import { LINGER_MS, LogFollower } from "./follow.ts";
import { LineMatcher, type MatchSpec } from "./match.ts";
import type { StartAt } from "./mod.ts";

/** A temporary directory with a follower on `app.log` inside it. */
async function withLog(
  fn: (dir: string, path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-logfollow-" });
  try {
    await fn(dir, `${dir}/app.log`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function follower(path: string, startAt: StartAt, spec: MatchSpec, clock: Clock = realClock) {
  const m = new LineMatcher(spec);
  const f = new LogFollower(path, startAt, m, clock);
  const signal = new AbortController().signal;
  return { m, f, poll: () => f.poll(signal) };
}

/**
 * Runs `fn` with a follower of `app.log` in a fresh directory ({@link withLog}), closed
 * afterwards. The follower reads nothing before its first poll, so `fn` may write the file first.
 */
function withFollower(
  startAt: StartAt,
  spec: MatchSpec,
  fn: (log: ReturnType<typeof follower> & { dir: string; path: string }) => Promise<void>,
  clock: Clock = realClock,
): Promise<void> {
  return withLog(async (dir, path) => {
    const log = { dir, path, ...follower(path, startAt, spec, clock) };
    try {
      await fn(log);
    } finally {
      log.f.close();
    }
  });
}

const END: StartAt = { from: "tail", lines: 0 };
const append = (p: string, text: string) => Deno.writeTextFile(p, text, { append: true });

Deno.test("LogFollower skips existing lines by default but not an unfinished one", () =>
  withFollower(END, { contains: "hit", required: 5 }, async ({ path, m, poll }) => {
    await Deno.writeTextFile(path, "hit 1\nhit 2\nhi");
    assertEquals(await poll(), { state: "open" });
    assertEquals(m.count, 0);
    await append(path, "t 3\nhit 4\n");
    await poll();
    assertEquals([m.count, m.last], [2, "hit 4"]);
  }));

Deno.test("LogFollower --tail N reads the last N complete lines", async (t) => {
  const rows: [string, number, number][] = [
    ["x 1\nx 2\nx 3\n", 2, 2],
    ["x 1\nx 2\nx 3\n", 0, 0],
    ["x 1\nx 2\nx 3\n", 10, 3],
    ["x 1\nx 2\nx 3", 1, 1], // x 2, plus x 3 once its newline comes
    ["no newline x", 5, 0],
  ];
  for (const [content, n, count] of rows) {
    await t.step(
      `${JSON.stringify(content)} --tail ${n}`,
      () =>
        withFollower({ from: "tail", lines: n }, { contains: "x", required: 100 }, async (log) => {
          await Deno.writeTextFile(log.path, content);
          await log.poll();
          assertEquals(log.m.count, count);
        }),
    );
  }
});

Deno.test("LogFollower --tail scans back over more than one read buffer", () =>
  withFollower(
    { from: "tail", lines: 3002 },
    { contains: "x", required: 100 },
    async ({ path, m, poll }) => {
      const filler = "f".repeat(1000) + "\n";
      await Deno.writeTextFile(path, "first x\n" + filler.repeat(3000) + "last x\n");
      await poll();
      assertEquals([m.count, m.last], [2, "last x"]);
    },
  ));

Deno.test("LogFollower reads a file created later from its start", () =>
  withFollower(END, { contains: "up", required: 1 }, async ({ path, m, poll }) => {
    assertEquals(await poll(), { state: "missing" });
    await Deno.writeTextFile(path, "service up\n");
    assertEquals(await poll(), { state: "open" });
    assertEquals(m.last, "service up");
  }));

Deno.test("LogFollower drains a renamed file before the new one and keeps the count", () =>
  withFollower(END, { contains: "n", required: 100 }, async ({ dir, path, m, f, poll }) => {
    await Deno.writeTextFile(path, "");
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
  }));

Deno.test("LogFollower restarts a truncated file, also one that grew back past the offset", () =>
  withFollower(END, { contains: "line", required: 100 }, async ({ path, m, poll }) => {
    await Deno.writeTextFile(path, "");
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
  }));

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

Deno.test("LogFollower stops reading a rotated-away file after LINGER_MS on its clock", () => {
  let now = 0;
  const clock: Clock = { now: () => now, sleep: () => Promise.resolve() };
  return withFollower(END, { contains: "n", required: 100 }, async ({ dir, path, m, f, poll }) => {
    await Deno.writeTextFile(path, "");
    await poll();
    await Deno.rename(path, `${dir}/app.log.1`);
    await Deno.writeTextFile(path, "n1\n");
    await poll();
    assert(f.lingering, "the old file is still read");
    now += LINGER_MS; // not longer than LINGER_MS yet
    await poll();
    assert(f.lingering, "kept while it has not been quiet for longer than LINGER_MS");
    await append(`${dir}/app.log.1`, "n2\n");
    now += LINGER_MS + 1;
    await poll(); // it grew: read, and its quiet spell starts again
    assertEquals([m.count, m.last, f.lingering], [2, "n2", true]);
    now += LINGER_MS + 1;
    await poll();
    assert(!f.lingering, "retired after a quiet spell longer than LINGER_MS");
    await append(`${dir}/app.log.1`, "n3\n");
    await poll();
    assertEquals(m.count, 2, "a retired file is no longer read");
  }, clock);
});

Deno.test("LogFollower reads what a copytruncate left only in the copy, across several rotations", () =>
  withFollower(END, { contains: "hit", required: 1000 }, async ({ dir, path, m, poll }) => {
    // Look-alike lines: only the file's first line tells one cycle from the next.
    const cycle = (n: number) =>
      Array.from({ length: 50 }, (_, i) => `${i === 0 ? `start ${n}` : "noise"} hit\n`).join("");
    await Deno.writeTextFile(path, "");
    await poll();
    await append(path, cycle(1).slice(0, 300));
    await poll(); // read part of cycle 1
    // Three rotations before the next look: the rest of cycle 1, cycles 2 and 3 live only
    // in the copies; cycle 4 is in the log.
    await append(path, cycle(1).slice(300));
    for (const n of [2, 3, 4]) {
      await Deno.copyFile(path, `${path}.${n - 1}`);
      await Deno.truncate(path, 0);
      await append(path, cycle(n));
    }
    // A compressed copy and an unrelated file are never read.
    await Deno.writeTextFile(`${path}.9.gz`, "hit\n".repeat(7));
    await Deno.writeTextFile(`${dir}/other.log`, "hit\n".repeat(7));
    await poll();
    assertEquals(m.count, 4 * 50, "every line of the four cycles, each once");
  }));
