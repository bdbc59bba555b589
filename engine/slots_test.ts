import { assertEquals } from "../tests/_assert.ts";
import { AttemptSlots } from "./slots.ts";

Deno.test("AttemptSlots gives a free slot at once, then serves the takers waiting in order", async () => {
  const slots = new AttemptSlots(2);
  assertEquals([slots.take(), slots.take()], [true, true]);
  const served: number[] = [];
  const waiting = [1, 2, 3].map((i) => {
    const p = slots.take();
    if (p === true) throw new Error("no slot should be free");
    return p.then((got) => void served.push(got ? i : -i));
  });
  assertEquals(slots.waiting, 3);
  slots.give();
  slots.give();
  await Promise.all(waiting.slice(0, 2));
  assertEquals(served, [1, 2]);
  slots.give();
  await waiting[2];
  assertEquals(served, [1, 2, 3]);
  // Nobody waits: the slot is free again.
  slots.give();
  assertEquals(slots.take(), true);
});

Deno.test("AttemptSlots once closed answers no one waiting and refuses every later taker", async () => {
  const slots = new AttemptSlots(1);
  assertEquals(slots.take(), true);
  let answered = false;
  (slots.take() as Promise<boolean>).then(() => answered = true);
  slots.close();
  assertEquals(await slots.take(), false);
  slots.give();
  await new Promise((r) => setTimeout(r, 0));
  assertEquals([answered, slots.waiting], [false, 0]);
});

Deno.test("AttemptSlots serves 100,000 takers waiting for one slot in order", async () => {
  const slots = new AttemptSlots(1);
  slots.take();
  const order: number[] = [];
  const all = Array.from(
    { length: 100_000 },
    (_, i) => (slots.take() as Promise<boolean>).then(() => order.push(i)),
  );
  for (let i = 0; i < 100_000; i++) slots.give();
  await Promise.all(all);
  assertEquals(order.length, 100_000);
  assertEquals(order.every((v, i) => v === i), true);
});
