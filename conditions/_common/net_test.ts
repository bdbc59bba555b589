import { assertEquals, assertRejects } from "../../tests/_assert.ts";
import { Connector, type Dial } from "./net.ts";

const HP = { hostname: "127.0.0.1", port: 9 };

/** A dial whose connects the test ends one by one; records whether each was given a signal. */
function scriptedDial(): { dial: Dial; signalled: boolean[]; end: ((ok: boolean) => void)[] } {
  const signalled: boolean[] = [];
  const end: ((ok: boolean) => void)[] = [];
  const dial: Dial = ({ signal }) => {
    signalled.push(signal !== undefined);
    return new Promise((resolve, reject) => {
      end.push((ok) => ok ? resolve({ close() {} }) : reject(new Error("connection refused")));
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  };
  return { dial, signalled, end };
}

Deno.test("Connector gives a connect its signal only once an earlier one outlived its attempt", async () => {
  const { dial, signalled, end } = scriptedDial();
  const connector = new Connector(dial);

  // Attempts whose connect ends within them: no cancel handle is paid for.
  const refused = connector.connect(HP, new AbortController().signal);
  end[0]!(false);
  await assertRejects(() => refused, Error, "connection refused");
  const accepted = connector.connect(HP, new AbortController().signal);
  end[1]!(true);
  await accepted;
  assertEquals(signalled, [false, false]);

  // An attempt ends (its timeout) with its connect still under way: that connect goes on...
  const left = connector.connect(HP, new AbortController().signal);
  // ...so the next attempt's connect is cancelled with its attempt,
  const ctl = new AbortController();
  const cancelled = connector.connect(HP, ctl.signal);
  ctl.abort(new Error("attempt timed out after 1s"));
  await assertRejects(() => cancelled, Error, "attempt timed out after 1s");
  // and so is every later one, once the left connect has ended too.
  end[2]!(true);
  await left;
  const later = connector.connect(HP, new AbortController().signal);
  end[4]!(true);
  await later;
  assertEquals(signalled, [false, false, false, true, true]);
});

Deno.test("Connector connects to a real listener and reports a closed port", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  const accepted = listener.accept().then((conn) => conn.close());
  const connector = new Connector();
  await connector.connect({ hostname: "127.0.0.1", port }, new AbortController().signal);
  await accepted;
  listener.close();
  await assertRejects(
    () => connector.connect({ hostname: "127.0.0.1", port }, new AbortController().signal),
    Error,
    "refused",
  );
});
