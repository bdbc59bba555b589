import { assert, assertEquals } from "../../tests/_assert.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import {
  absolutePath,
  MIN_GAP_MS,
  parentDir,
  type Watcher,
  type WatchFactory,
  watchGlob,
  watchPath,
} from "./watch.ts";

/** A running watch iterator with helpers to await its next yield. */
function start(
  make: (ctx: { signal: AbortSignal; notice(m: string): void }) => AsyncIterable<void>,
) {
  const ctl = new AbortController();
  const notices: string[] = [];
  const it = make({ signal: ctl.signal, notice: (m) => notices.push(m) })[Symbol.asyncIterator]();
  let next = it.next(); // starts the generator: the watch is armed synchronously
  let ended = false;
  return {
    notices,
    /** Whether the iterator yielded within `ms` (and re-arms for the next yield). */
    async yielded(ms = 3000): Promise<boolean> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), ms)));
      const r = await Promise.race([next, timeout]);
      clearTimeout(timer);
      if (r === "timeout") return false;
      if (r.done) {
        ended = true;
        return false;
      }
      next = it.next();
      return true;
    },
    /** Resolves once the iterator ended by itself. */
    async ended(): Promise<boolean> {
      if (ended) return true;
      return (await next).done === true;
    },
    /** Drains pending yields for `ms`, so later assertions see only new events. */
    async quiet(ms = 300): Promise<void> {
      while (await this.yielded(ms)) {
        // keep draining
      }
    },
    async stop(): Promise<void> {
      ctl.abort();
      if (!ended) await next;
      await it.return?.(undefined);
    },
  };
}

Deno.test("absolutePath() and parentDir() normalise like a shell would", () => {
  assertEquals(absolutePath("/a//b/./c/../d"), "/a/b/d");
  assertEquals(absolutePath("x"), `${Deno.cwd()}/x`);
  assertEquals(parentDir("/a/b"), "/a");
  assertEquals(parentDir("/a"), "/");
  assertEquals(parentDir("/"), "/");
});

Deno.test("watchPath() yields for the file's changes and not for its neighbours'", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const w = start((ctx) => watchPath(`${dir}/app.log`, ctx));
    try {
      await Deno.writeTextFile(`${dir}/other`, "x");
      assertEquals(await w.yielded(300), false);
      await Deno.writeTextFile(`${dir}/app.log`, "x");
      assert(await w.yielded(), "creation");
      await w.quiet();
      await Deno.writeTextFile(`${dir}/app.log`, "y", { append: true });
      assert(await w.yielded(), "append");
      await w.quiet();
      await Deno.remove(`${dir}/app.log`);
      assert(await w.yielded(), "removal");
    } finally {
      await w.stop();
    }
  }));

Deno.test("watchPath() counts the whole directory while anyInDirectory() holds", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    let any = false;
    const w = start((ctx) => watchPath(`${dir}/app.log`, ctx, { anyInDirectory: () => any }));
    try {
      await Deno.writeTextFile(`${dir}/app.log.1`, "x");
      assertEquals(await w.yielded(300), false);
      any = true;
      await Deno.writeTextFile(`${dir}/app.log.1`, "y", { append: true });
      assert(await w.yielded());
    } finally {
      await w.stop();
    }
  }));

Deno.test("watchPath() follows directories created later, deleted and created again", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const target = `${dir}/a/b/ready`;
    const w = start((ctx) => watchPath(target, ctx));
    try {
      await Deno.mkdir(`${dir}/a/b`, { recursive: true });
      assert(await w.yielded(), "the directory on the way appeared");
      await w.quiet();
      await Deno.writeTextFile(target, "");
      assert(await w.yielded(), "the file appeared in the new directory");
      await w.quiet();
      await Deno.remove(`${dir}/a`, { recursive: true });
      assert(await w.yielded(), "the watched directory was deleted");
      await w.quiet();
      await Deno.mkdir(`${dir}/a/b`, { recursive: true });
      await w.quiet();
      await Deno.writeTextFile(target, "again");
      assert(await w.yielded(), "the file appeared in the re-created directory");
    } finally {
      await w.stop();
    }
  }));

Deno.test("watchPath() notices a directory created between looking for it and watching", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const target = `${dir}/a/b/ready`;
    let raced = false;
    // The race made certain: the directories appear just before the watch of their parent starts.
    const racing: WatchFactory = (path, recursive) => {
      if (path === dir && !raced) {
        raced = true;
        Deno.mkdirSync(`${dir}/a/b`, { recursive: true });
      }
      return Deno.watchFs(path, { recursive });
    };
    const w = start((ctx) => watchPath(target, ctx, { watchFs: racing }));
    try {
      assert(raced, "the factory was asked to watch the parent first");
      await w.quiet();
      await Deno.writeTextFile(target, "");
      assert(await w.yielded(), "the file appeared in the directory created during the race");
    } finally {
      await w.stop();
    }
  }));

Deno.test("watchGlob() watches deep patterns recursively and flat ones by name", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const deep = start((ctx) => watchGlob(`${dir}/out/**/*.csv`, ctx));
    const flat = start((ctx) => watchGlob(`${dir}/flat/*.{csv,tsv}`, ctx));
    try {
      await Deno.mkdir(`${dir}/flat`);
      assert(await flat.yielded(), "the pattern's directory appeared");
      await flat.quiet();
      await Deno.writeTextFile(`${dir}/flat/x.txt`, "");
      assertEquals(await flat.yielded(300), false);
      await Deno.writeTextFile(`${dir}/flat/x.tsv`, "");
      assert(await flat.yielded(), "a matching name");

      await Deno.mkdir(`${dir}/out/2026/01`, { recursive: true });
      assert(await deep.yielded());
      await deep.quiet();
      await Deno.writeTextFile(`${dir}/out/2026/01/day.csv`, "");
      assert(await deep.yielded(), "a file two levels down");
    } finally {
      await deep.stop();
      await flat.stop();
    }
  }));

Deno.test("watchPath() falls back to polling once when watching is impossible", async (t) => {
  const failing = (message: string) => (): Watcher => {
    throw new Error(message);
  };
  const rows: [string, string][] = [
    ['OS file watch limit reached. about ["/x"]', "too many watches"],
    ["Too many open files (os error 24)", "too many open files"],
  ];
  for (const [message, reason] of rows) {
    await t.step(reason, () =>
      inTempDir("waitcmd-watch-")(async (dir) => {
        const w = start((ctx) => watchPath(`${dir}/f`, ctx, { watchFs: failing(message) }));
        try {
          assert(await w.ended(), "the iterator ends instead of failing");
          assertEquals(w.notices, [`cannot watch ${dir} (${reason}); polling every interval`]);
        } finally {
          await w.stop();
        }
      }));
  }
});

Deno.test("watchPath() falls back when a watcher fails later", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const broken: Watcher = {
      close() {},
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.reject(new Error("Unsupported file system (os error 95)")),
      }),
    };
    const w = start((ctx) => watchPath(`${dir}/f`, ctx, { watchFs: () => broken }));
    try {
      await w.ended();
      assertEquals(w.notices, [
        `cannot watch ${dir} (unsupported file system); polling every interval`,
      ]);
    } finally {
      await w.stop();
    }
  }));

Deno.test("watchGlob() does not watch the whole file system recursively", async () => {
  const w = start((ctx) => watchGlob("/**/waitcmd-never-*.x", ctx));
  try {
    assert(await w.ended());
    assertEquals(w.notices, [
      "cannot watch / (a recursive watch of the root directory is too large); polling every interval",
    ]);
  } finally {
    await w.stop();
  }
});

Deno.test("watchPath() releases its watcher and timers when the signal aborts", () =>
  // The test sanitizers (resources, ops, timers) fail this test if anything is left behind.
  inTempDir("waitcmd-watch-")(async (dir) => {
    const w = start((ctx) => watchPath(`${dir}/a/f`, ctx));
    try {
      await Deno.mkdir(`${dir}/a`); // re-arms and schedules a settle timer
      assert(await w.yielded());
    } finally {
      await w.stop();
    }
    assert(await w.ended());
  }));

Deno.test("watchPath() reports a burst of changes at a bounded rate, the last one included", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const f = `${dir}/busy.log`;
    await Deno.writeTextFile(f, "");
    const w = start((ctx) => watchPath(f, ctx));
    let yields = 0;
    let lastYieldAt = 0;
    const counting = (async () => {
      while (await w.yielded(1500)) {
        yields++;
        lastYieldAt = performance.now();
      }
    })();
    try {
      const t0 = performance.now();
      for (let i = 0; i < 60; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 5));
        await Deno.writeTextFile(f, `line ${i}\n`, { append: true });
      }
      // Taken at once: a pause after the last write would let its report come before this.
      const lastWrite = performance.now();
      const ms = lastWrite - t0;
      await counting; // ends 1.5 s after the last yield
      assert(lastYieldAt > lastWrite, "the change that ended the burst was reported too");
      // Unthrottled, each append gives two events (modify, close); throttled, one per gap.
      assert(yields >= 1, "the burst was reported");
      assert(yields <= Math.ceil(ms / MIN_GAP_MS) + 2, `${yields} yields in ${Math.round(ms)} ms`);
    } finally {
      await w.stop();
    }
  }));

Deno.test("watchPath() also watches where a symlinked file really lives", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    await Deno.mkdir(`${dir}/pods`);
    await Deno.mkdir(`${dir}/containers`);
    await Deno.writeTextFile(`${dir}/pods/0.log`, "");
    await Deno.symlink(`${dir}/pods/0.log`, `${dir}/containers/app.log`);
    const w = start((ctx) => watchPath(`${dir}/containers/app.log`, ctx));
    try {
      await Deno.writeTextFile(`${dir}/pods/0.log`, "started\n", { append: true });
      assert(await w.yielded(), "a write through the link's target");
    } finally {
      await w.stop();
    }
  }));

/** `Deno.watchFs`, counting the watchers it opens and closes. */
function countingWatchFs() {
  const count = { opened: 0, closed: 0 };
  const make: WatchFactory = (path, recursive) => {
    const w = Deno.watchFs(path, { recursive });
    count.opened++;
    return {
      close() {
        count.closed++;
        w.close();
      },
      [Symbol.asyncIterator]: () => w[Symbol.asyncIterator](),
    };
  };
  return { count, make };
}

Deno.test("watchPath() shares one watcher of a directory and each condition gets its own events", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const { count, make } = countingWatchFs();
    const ws = Array.from(
      { length: 20 },
      (_, i) => start((ctx) => watchPath(`${dir}/f${i}`, ctx, { watchFs: make })),
    );
    try {
      assertEquals(count, { opened: 1, closed: 0 });
      await Deno.writeTextFile(`${dir}/f0`, "x");
      assert(await ws[0]!.yielded(), "the written file's condition");
      assertEquals(await ws[1]!.yielded(300), false, "a neighbour's condition");
      for (let i = 1; i < ws.length; i++) await Deno.writeTextFile(`${dir}/f${i}`, "x");
      for (const [i, w] of ws.entries()) assert(await w.yielded(), `condition ${i}`);
      assertEquals(count.opened, 1);
    } finally {
      for (const w of ws) await w.stop();
    }
    assertEquals(count, { opened: 1, closed: 1 });
  }));

Deno.test("watchPath() closes a shared watcher when its last condition leaves", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const { count, make } = countingWatchFs();
    const ws = [0, 1, 2].map((i) =>
      start((ctx) => watchPath(`${dir}/f${i}`, ctx, { watchFs: make }))
    );
    try {
      await ws[0]!.stop();
      await ws[1]!.stop();
      assertEquals(count, { opened: 1, closed: 0 });
      await Deno.writeTextFile(`${dir}/f2`, "x");
      assert(await ws[2]!.yielded(), "the remaining condition still gets events");
      await ws[2]!.stop();
      assertEquals(count, { opened: 1, closed: 1 });
      const again = start((ctx) => watchPath(`${dir}/f2`, ctx, { watchFs: make }));
      try {
        assertEquals(count.opened, 2, "a condition arriving later opens a new watcher");
        await Deno.writeTextFile(`${dir}/f2`, "y");
        assert(await again.yielded());
      } finally {
        await again.stop();
      }
      assertEquals(count, { opened: 2, closed: 2 });
    } finally {
      for (const w of ws) await w.stop();
    }
  }));

Deno.test("watchPath() moves a shared watch to a re-created directory for every condition", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const { count, make } = countingWatchFs();
    const ws = [1, 2].map((i) =>
      start((ctx) => watchPath(`${dir}/a/f${i}`, ctx, { watchFs: make }))
    );
    const open = () => count.opened - count.closed;
    try {
      await Deno.mkdir(`${dir}/a`);
      for (const w of ws) assert(await w.yielded(), "the directory appeared");
      for (const w of ws) await w.quiet();
      assertEquals(open(), 1);
      await Deno.remove(`${dir}/a`, { recursive: true });
      for (const w of ws) assert(await w.yielded(), "the directory was deleted");
      await Deno.mkdir(`${dir}/a`);
      for (const w of ws) await w.quiet();
      assertEquals(open(), 1);
      await Deno.writeTextFile(`${dir}/a/f1`, "x");
      await Deno.writeTextFile(`${dir}/a/f2`, "x");
      for (const [i, w] of ws.entries()) {
        assert(await w.yielded(), `condition ${i} after re-creation`);
      }
    } finally {
      for (const w of ws) await w.stop();
    }
    assertEquals(open(), 0);
  }));

Deno.test("watchPath() falls back for every condition when a shared watcher fails", () =>
  inTempDir("waitcmd-watch-")(async (dir) => {
    const made: { closed: boolean; fail(e: Error): void }[] = [];
    const make: WatchFactory = () => {
      let fail!: (e: Error) => void;
      let end!: (r: IteratorResult<Deno.FsEvent>) => void;
      const next = new Promise<IteratorResult<Deno.FsEvent>>((resolve, reject) => {
        end = resolve;
        fail = reject;
      });
      const entry = { closed: false, fail };
      made.push(entry);
      return {
        close() {
          entry.closed = true;
          end({ done: true, value: undefined });
        },
        [Symbol.asyncIterator]: () => ({ next: () => next }),
      };
    };
    const ws = [0, 1, 2].map((i) =>
      start((ctx) => watchPath(`${dir}/f${i}`, ctx, { watchFs: make }))
    );
    try {
      assertEquals(made.length, 1);
      made[0]!.fail(new Error("Unsupported file system (os error 95)"));
      for (const w of ws) {
        assert(await w.ended(), "the iterator ends instead of failing");
        assertEquals(w.notices, [
          `cannot watch ${dir} (unsupported file system); polling every interval`,
        ]);
      }
      assert(made[0]!.closed, "the failed watcher was released");
      const again = start((ctx) => watchPath(`${dir}/f0`, ctx, { watchFs: make }));
      try {
        assertEquals(made.length, 2, "the failed watcher is not shared any more");
      } finally {
        await again.stop();
      }
      assert(made[1]!.closed);
    } finally {
      for (const w of ws) await w.stop();
    }
  }));
