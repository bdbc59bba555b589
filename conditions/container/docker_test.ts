/**
 * The Docker transport against an engine that answers too much, in process
 * (a Unix socket served by Deno): answers are read with a cap, so memory
 * does not follow what the other side sends.
 */

import { assert, assertEquals, assertRejects } from "../../tests/_assert.ts";
import { realClock } from "../../engine/clock.ts";
import { ContainerClient, EVENT_LINE_MAX_BYTES } from "./docker.ts";
import { ANSWER_MAX_BYTES } from "./engine_api.ts";
import { judgeContainers } from "./judge.ts";

/** An endless body of `piece`s, ended once `limit` bytes are sent (counted in `sent`). */
function endless(piece: string, limit: number, sent: { n: number }): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(piece);
  return new ReadableStream({
    pull(ctl) {
      if (sent.n >= limit) return ctl.close();
      sent.n += chunk.length;
      ctl.enqueue(chunk);
    },
  });
}

const INSPECT = JSON.stringify({
  Id: "f".repeat(64),
  Name: "/web",
  State: { Status: "running", Pid: 1, ExitCode: 0 },
});

async function withEngine(
  handler: (req: Request) => Response | Promise<Response>,
  fn: (client: (target: string) => ContainerClient) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-fake-docker-" });
  const path = `${dir}/docker.sock`;
  const server = Deno.serve({ path, onListen: () => {} }, handler);
  try {
    await fn((target) =>
      new ContainerClient(
        target,
        undefined,
        { display: `unix://${path}`, socketPath: path },
        realClock,
      )
    );
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("ContainerClient.find() stops reading an answer past the cap: pending, with the reason", async () => {
  const sent = { n: 0 };
  await withEngine((req) => {
    const url = new URL(req.url);
    if (url.pathname === "/containers/big/json") {
      return new Response(endless('{"Id":"' + "1".repeat(65_536), 1024 ** 3, sent));
    }
    if (url.pathname === "/containers/sick/json") {
      // An error's answer is capped too.
      return new Response(endless("x".repeat(65_536), 1024 ** 3, sent), { status: 500 });
    }
    if (url.pathname === "/containers/web/json") return new Response(INSPECT);
    return Response.json({ message: "No such container" }, { status: 404 });
  }, async (client) => {
    const signal = new AbortController().signal;
    await assertRejects(
      () => client("big").find(signal),
      Error,
      "docker engine: the answer to inspect big is larger than 4 MiB",
    );
    assert(sent.n < 64 * 1024 ** 2, `sent ${sent.n} bytes before the client stopped reading`);
    sent.n = 0;
    await assertRejects(
      () => client("sick").find(signal),
      Error,
      "docker engine: the answer to inspect sick is larger than 4 MiB",
    );
    assert(sent.n < 64 * 1024 ** 2, `sent ${sent.n} bytes before the client stopped reading`);
    const { found } = await client("web").find(signal);
    assertEquals(found.map((c) => [c.name, c.status, c.pid]), [["web", "running", 1]]);
  });
  assertEquals(ANSWER_MAX_BYTES, 4 * 1024 * 1024);
});

Deno.test("ContainerClient.find() tells an engine's error, a body that is not JSON and a wrong shape", async () => {
  await withEngine((req) => {
    const url = new URL(req.url);
    switch (url.pathname) {
      case "/containers/busy/json":
        return Response.json({ message: "Engine Is Busy" }, { status: 500 });
      case "/containers/gateway/json":
        return new Response("<html>bad gateway</html>", { status: 502 });
      case "/containers/html/json":
        return new Response("<html>hello</html>");
      case "/containers/odd/json":
        return Response.json({ Id: 5 });
      case "/containers/json":
        return Response.json({ not: "a list" });
    }
    return Response.json({ message: "No such container" }, { status: 404 });
  }, async (client) => {
    const signal = new AbortController().signal;
    const rows: [string, string][] = [
      ["busy", "docker engine: engine Is Busy"],
      ["gateway", "docker engine: HTTP 502"],
      ["html", "docker engine: the answer to inspect html is not JSON"],
      ["odd", "docker engine: the answer to inspect odd is not a container"],
      ["missing", "docker engine: the answer to list containers is not a list"],
    ];
    for (const [target, error] of rows) {
      await assertRejects(() => client(target).find(signal), Error, error);
    }
  });
});

Deno.test("ContainerClient.watch() leaves a stream at an event line longer than the cap, and wakes", async () => {
  const sent = { n: 0 };
  const event = JSON.stringify({
    Type: "container",
    Action: "start",
    time: 1,
    Actor: { ID: "f".repeat(64), Attributes: { name: "web" } },
  });
  await withEngine((req) => {
    if (new URL(req.url).pathname !== "/events") return new Response("{}", { status: 404 });
    // 64 MiB of one line, then an event of the target, then nothing: held open, as the engine does.
    const chunk = new TextEncoder().encode("x".repeat(65_536));
    const tail = new TextEncoder().encode(`\n${event}\n`);
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (sent.n >= 64 * 1024 ** 2) {
            ctl.enqueue(tail);
            return new Promise(() => {});
          }
          sent.n += chunk.length;
          ctl.enqueue(chunk);
        },
      }),
    );
  }, async (client) => {
    const ac = new AbortController();
    const wakes = client("web").watch({ signal: ac.signal, notice: () => {} });
    try {
      // The long line may have been the target's event: it wakes an attempt.
      assertEquals((await wakes.next()).done, false);
      assert(sent.n < 32 * 1024 ** 2, `sent ${sent.n} bytes before the client stopped reading`);
    } finally {
      ac.abort();
      await wakes.return(undefined);
    }
  });
  assertEquals(EVENT_LINE_MAX_BYTES, 1024 * 1024);
});

Deno.test("a container the engine reports as removing holds --status removing and --status any", async () => {
  // GET /containers/{id}/json of a container under `docker rm -f`: State.Status "removing"
  // (Engine API, ContainerState.Status). A real engine shows it only for an instant.
  const removing = JSON.stringify({
    Id: "e".repeat(64),
    Name: "/old",
    State: { Status: "removing", Pid: 0, ExitCode: 137, Health: { Status: "unhealthy" } },
  });
  await withEngine((req) => {
    if (new URL(req.url).pathname === "/containers/old/json") return new Response(removing);
    return Response.json({ message: "No such container" }, { status: 404 });
  }, async (client) => {
    const { found, sel } = await client("old").find(new AbortController().signal);
    const judge = (status: string) => judgeContainers(found, { status, health: undefined }, sel);
    assertEquals(judge("removing"), { status: "satisfied", detail: "container old removing" });
    assertEquals(judge("any"), { status: "satisfied", detail: "container old removing" });
    assertEquals(judge("running"), {
      status: "pending",
      error: "container old removing; want running",
    });
  });
});
