import { assert, assertEquals } from "../../tests/_assert.ts";
import { realClock } from "../../engine/clock.ts";
import { Collections, PAGE, slim } from "./collection.ts";
import type { KubeObject } from "./judge.ts";
import type { WatchEvent } from "./kube.ts";

/**
 * An API of one collection (in-process, for the unit test): lists in pages, and a watch whose
 * events the test sends. Counts the requests.
 */
class FakeApi {
  lists = 0;
  pages = 0;
  watches = 0;
  objects = new Map<string, KubeObject>();
  #send: ((ev: WatchEvent) => void) | undefined;
  #ended: (() => void) | undefined;

  getJson(path: string): Promise<unknown> {
    const q = new URLSearchParams(path.slice(path.indexOf("?") + 1));
    const from = Number(q.get("continue") ?? "0");
    if (from === 0) this.lists++;
    this.pages++;
    const all = [...this.objects.values()];
    const items = all.slice(from, from + Number(q.get("limit")));
    const next = from + items.length < all.length ? String(from + items.length) : "";
    return Promise.resolve({ items, metadata: { resourceVersion: "7", continue: next } });
  }

  async *watch(_path: string, _q: Record<string, string>, signal: AbortSignal) {
    this.watches++;
    const queue: WatchEvent[] = [];
    let wake = () => {};
    let ended = false;
    this.#send = (ev) => {
      queue.push(ev);
      wake();
    };
    this.#ended = () => {
      ended = true;
      wake();
    };
    signal.addEventListener("abort", () => wake());
    while (!signal.aborted) {
      const ev = queue.shift();
      if (ev !== undefined) {
        yield ev;
        continue;
      }
      if (ended) return;
      await new Promise<void>((r) => wake = r);
    }
  }

  send(type: string, object: KubeObject): void {
    const name = String((object.metadata as { name: string }).name);
    if (type === "DELETED") this.objects.delete(name);
    else this.objects.set(name, object);
    this.#send?.({ type, object });
  }

  /** Ends the current watch stream (the server's timeout). */
  endWatch(): void {
    this.#ended?.();
  }
}

const cm = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  kind: "ConfigMap",
  metadata: { name, managedFields: [{ manager: "kubectl" }], ...extra },
  data: { k: "v" },
});

const never = new AbortController().signal;
const turn = () => new Promise((r) => setTimeout(r, 10));

Deno.test("SharedCollection: one list and one watch for every member; each attempt reads the kept object", async () => {
  const api = new FakeApi();
  for (let i = 0; i < 2 * PAGE + 10; i++) api.objects.set(`cm-${i}`, cm(`cm-${i}`));
  const collections = new Collections(api, realClock);
  const path = "/api/v1/namespaces/big/configmaps";
  // The members of a manifest join together, as their first attempts resolve the type.
  const members = Array.from({ length: 1000 }, (_, i) => collections.join(path, `cm-${i}`));
  const seen = await Promise.all(members.map((m) => m.lookup(never)));
  assertEquals(api.lists, 1);
  assertEquals(api.pages, 3);
  assertEquals(seen.filter((s) => s?.exists).length, 2 * PAGE + 10);
  assertEquals(seen.filter((s) => s?.exists === false).length, 1000 - 2 * PAGE - 10);
  // What no judgement reads is not kept.
  const first = seen[0];
  assert(first?.exists);
  assertEquals(first.object.metadata, { name: "cm-0" });
  await turn();
  assertEquals(api.watches, 1);

  // An event about a member's object changes what it finds, and wakes that member only.
  const ctl = new AbortController();
  let woken = 0;
  const watching = members[999]!.listen(ctl.signal, () => woken++);
  await turn();
  woken = 0;
  api.send("ADDED", cm("cm-999", { uid: "u1" }));
  api.send("ADDED", cm("unrelated"));
  await turn();
  assertEquals(woken, 1);
  const now = await members[999]!.lookup(never);
  assert(now?.exists);
  assertEquals((now.object.metadata as { uid: string }).uid, "u1");
  api.send("DELETED", cm("cm-0"));
  await turn();
  assertEquals(await members[0]!.lookup(never), { exists: false });

  // The stream ends: listed again, watched again.
  api.endWatch();
  await turn();
  await turn();
  assertEquals(api.lists, 2);
  assertEquals(api.watches, 2);

  // The last member to leave ends the watch.
  ctl.abort();
  await watching;
  for (const m of members) m.leave();
  await turn();
  api.send("ADDED", cm("cm-1"));
  assertEquals(api.watches, 2);
});

Deno.test("SharedCollection: a name that joins after the list is not known until an event names it", async () => {
  const api = new FakeApi();
  api.objects.set("a", cm("a"));
  const collections = new Collections(api, realClock);
  const a = collections.join("/p", "a");
  assert((await a.lookup(never))?.exists);
  const b = collections.join("/p", "b");
  // The attempt asks the server itself.
  assertEquals(await b.lookup(never), undefined);
  await turn();
  api.send("ADDED", cm("b"));
  await turn();
  assert((await b.lookup(never))?.exists);
  a.leave();
  b.leave();
});

Deno.test("slim() drops managedFields and the last-applied annotation, and keeps the rest", () => {
  assertEquals(
    slim({
      metadata: {
        name: "x",
        generation: 2,
        managedFields: [{}],
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}", keep: "1" },
      },
      status: { a: 1 },
    }),
    { metadata: { name: "x", generation: 2, annotations: { keep: "1" } }, status: { a: 1 } },
  );
});
