import { assertEquals } from "../../tests/_assert.ts";
import { ContentCache, type FileStamp, mergeIterables, sameStamp } from "./filestamp.ts";

const stamp = (size: number, mtime = 1): FileStamp => ({ size, mtime, ino: 7, dev: 1 });

Deno.test("ContentCache keeps a result per stamps until invalidated", () => {
  const c = new ContentCache<string>();
  const g = c.begin();
  c.set([stamp(1)], "one", g);
  assertEquals(c.get([stamp(1)]), "one");
  assertEquals(c.get([stamp(2)]), undefined);
  assertEquals(c.get([stamp(1), stamp(1)]), undefined);
  c.invalidate();
  assertEquals(c.get([stamp(1)]), undefined);
  // A result computed while an invalidation happened is not kept.
  const late = c.begin();
  c.invalidate();
  c.set([stamp(1)], "stale", late);
  assertEquals(c.get([stamp(1)]), undefined);
  assertEquals([sameStamp(stamp(1), stamp(1, 2)), sameStamp(undefined, stamp(1))], [false, false]);
});

Deno.test("mergeIterables() passes every value of every source on", async () => {
  async function* from(xs: number[], ms: number) {
    for (const x of xs) {
      await new Promise((r) => setTimeout(r, ms));
      yield x;
    }
  }
  const got: number[] = [];
  for await (const x of mergeIterables([from([1, 2, 3], 5), from([10, 20], 7)])) got.push(x);
  assertEquals(got.sort((a, b) => a - b), [1, 2, 3, 10, 20]);
});
