/**
 * websocket end to end: the CLI against two real servers, Deno.serve with
 * its WebSocket upgrade (in the test process) and Python's `websockets`
 * (PyPI, in a cached virtual environment; tests/services/pyws.ts), over ws://
 * and wss:// (a throwaway CA from tests/services/tls.ts).
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { buildMissing } from "../services/_util.ts";
import { buildPyWs, type PyWsServer, startPyWs } from "../services/pyws.ts";
import { makePki } from "../services/tls.ts";
import { expectJson, runCli, runJson, runLate, usageErrorLine } from "./_cli.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];
const SHORT = ["--timeout", "1500ms", "--interval", "200ms"];
const SECRET = "zq9-ws-secret";

/** A Deno.serve WebSocket server; `refuse` (settable) answers upgrades with that status instead. */
function denoServer(port = 0) {
  const state = { refuse: 0, greet: [] as string[], received: [] as string[] };
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, (req) => {
    const url = new URL(req.url);
    if (state.refuse) return new Response("not yet\n", { status: state.refuse });
    if (url.pathname === "/auth" && req.headers.get("authorization") !== `Bearer ${SECRET}`) {
      return new Response("no\n", { status: 401 });
    }
    if (req.headers.get("upgrade") !== "websocket") return new Response("plain\n");
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => {
      for (const g of state.greet) socket.send(g);
      if (url.pathname === "/bye") socket.close(1000, "bye");
    };
    socket.onmessage = (e) => {
      state.received.push(String(e.data));
      socket.send(`echo:${e.data}`);
    };
    return response;
  });
  return { port: server.addr.port, state, stop: () => server.shutdown() };
}

Deno.test({
  name: "websocket against Deno.serve's upgrade",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const s = denoServer();
    const base = `ws://127.0.0.1:${s.port}`;
    try {
      await t.step("--send, then --contains and --matches on the reply", async () => {
        await expectJson([
          ...FAST,
          ...["ws", `${base}/`, "--send", "ping", "--contains", "echo:", "--matches", "ping$"],
        ], {
          code: 0,
          detail: 'upgraded; message "echo:ping" (9 B) contains "echo:", matches /ping$/',
        });
      });

      await t.step("--send alone holds once the message is written", async () => {
        const j = await runJson([...FAST, "ws", `${base}/`, "--send", "hello-42"]);
        assertEquals([j.code, j.json.conditions[0]!.detail], [0, 'upgraded; sent "hello-42"']);
        // The server got it (allowing its event loop a moment).
        for (let i = 0; i < 50 && !s.state.received.includes("hello-42"); i++) {
          await new Promise((r) => setTimeout(r, 20));
        }
        assert(s.state.received.includes("hello-42"), JSON.stringify(s.state.received));
      });

      await t.step("messages that do not match are skipped", async () => {
        s.state.greet = ["starting", "still starting", "ready: v2"];
        await expectJson([...FAST, "ws", `${base}/`, "--matches", "^ready"], {
          code: 0,
          detail: 'upgraded; message "ready: v2" (9 B) matches /^ready/',
        });
        s.state.greet = [];
      });

      await t.step("a connection closed before a match is pending", async () => {
        s.state.greet = ["hello"];
        const j = await runJson([...SHORT, "ws", `${base}/bye`, "--contains", "ready"]);
        s.state.greet = [];
        assertEquals(j.code, 1);
        assertEquals(
          j.json.conditions[0]!.last_error,
          'connection closed (code 1000 "bye") before a matching message (1 message skipped; last "hello" (5 B) does not contain "ready")',
        );
      });

      await t.step(
        "a refused upgrade is pending with its status, until it is accepted",
        async () => {
          s.state.refuse = 503;
          const late = await runLate(
            [...FAST, "ws", `${base}/`],
            () => Promise.resolve(s.state.refuse = 0),
          );
          assertEquals(late.code, 0);
          assertEquals(late.attempts[0]!.error, "upgrade refused: status 503 Service Unavailable");
        },
      );

      await t.step("URL user-info and a token in the query are masked", async () => {
        const userinfo = await runCli([
          ...SHORT,
          "ws",
          `ws://app:${SECRET}@127.0.0.1:${s.port}/auth?token=${SECRET}`,
        ]);
        assertStringIncludes(userinfo.stderr, `ws ws://app:***@127.0.0.1:${s.port}/auth?token=***`);
        for (const out of [userinfo.stderr, userinfo.stdout]) {
          assert(!out.includes(SECRET), `secret shown in:\n${out}`);
        }
      });
    } finally {
      await s.stop();
    }
  },
});

Deno.test({
  name: "websocket: --attempt-timeout cuts a hanging handshake and closes the socket",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    const closed: Promise<boolean>[] = [];
    const accepting = (async () => {
      for await (const conn of l) {
        // Never answers; records whether the client closed the connection.
        closed.push((async () => {
          const buf = new Uint8Array(4096);
          try {
            while ((await conn.read(buf)) !== null) { /* the upgrade request */ }
            return true;
          } catch {
            return true;
          } finally {
            conn.close();
          }
        })());
      }
    })().catch(() => {});
    try {
      const j = await expectJson([
        ...["--timeout", "1200ms", "--attempt-timeout", "300ms", "--interval", "100ms"],
        ...["ws", `ws://127.0.0.1:${port}/`],
      ], { code: 1 });
      const c = j.json.conditions[0]!;
      assertEquals(c.last_error, "attempt timed out after 300ms");
      assert(c.attempts >= 2, `attempts ${c.attempts}`);
      assert(closed.length >= 2);
      // Every cut attempt closed its socket (the run itself ended long ago).
      assertEquals(await Promise.all(closed), closed.map(() => true));
    } finally {
      l.close();
      await accepting;
    }
  },
});

/** Why the suite cannot install Python's websockets here, or undefined when it can. */
const pyMissing = await buildMissing(buildPyWs);

Deno.test({
  name: "websocket against Python's websockets server (ws:// and wss://)",
  ignore: ignoreWithout("Python websockets", pyMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const pki = await makePki();
    let plain: PyWsServer | undefined;
    let secure: PyWsServer | undefined;
    try {
      plain = await startPyWs();
      secure = await startPyWs({
        tls: { certFile: pki.server.chainFile, keyFile: pki.server.keyFile },
      });
      const ws = `ws://127.0.0.1:${plain.port}`;
      const wss = `wss://localhost:${secure.port}`;

      await t.step("echo and greeting, with a subprotocol", async () => {
        const j = await runJson([...FAST, "ws", `${ws}/echo`, "--send", "hi", "--contains", "hi"]);
        assertEquals([j.code, j.json.conditions[0]!.detail], [
          0,
          'upgraded; message "hi" (2 B) contains "hi"',
        ]);
        const g = await runJson([
          ...FAST,
          ...["ws", `${ws}/greet`, "--subprotocol", "chat.v1", "--contains", "hello"],
        ]);
        assertEquals(
          g.json.conditions[0]!.detail,
          'upgraded, subprotocol chat.v1; message "hello from websockets" (21 B) contains "hello"',
        );
      });

      await t.step("a refused upgrade and an unaccepted subprotocol are pending", async () => {
        const d = await runJson([...SHORT, "ws", `${ws}/deny`]);
        assertEquals(d.json.conditions[0]!.last_error, "upgrade refused: status 403 Forbidden");
        const p = await runJson([...SHORT, "ws", `${ws}/echo`, "--subprotocol", "other.v9"]);
        assertEquals(p.json.conditions[0]!.last_error, "server sent no subprotocol");
      });

      await t.step("wss:// with --ca-file or --insecure; untrusted otherwise", async () => {
        await expectJson([...FAST, "ws", `${wss}/echo`, "--ca-file", pki.ca.certFile], { code: 0 });
        await expectJson([
          ...FAST,
          ...["ws", `wss://127.0.0.1:${secure!.port}/echo`, "--ca-file", pki.ca.certFile],
        ], { code: 0 });
        await expectJson([...FAST, "ws", `${wss}/echo`, "--insecure"], { code: 0 });
        const untrusted = await runJson([...SHORT, "ws", `${wss}/echo`]);
        assertEquals(
          untrusted.json.conditions[0]!.last_error,
          "certificate not trusted (self-signed certificate in the chain)",
        );
      });
    } finally {
      await plain?.stop();
      await secure?.stop();
      await pki.cleanup();
    }
  },
});

Deno.test("websocket usage errors exit 2 with one line", async () => {
  const cases: [string[], string][] = [
    [["ws", "http://h/"], `condition 1 (ws): expected a ws:// or wss:// URL, got "http://h/"`],
    [["ws", "nope"], `condition 1 (ws): expected a ws:// or wss:// URL, got "nope"`],
    [["ws", "ws://h/", "--insecure"], "condition 1 (ws): --insecure: needs a wss:// URL"],
    [["ws", "ws://h/", "--ca-file", "ca.pem"], "condition 1 (ws): --ca-file: needs a wss:// URL"],
    [
      ["ws", "wss://h/", "--insecure", "--ca-file", "ca.pem"],
      "condition 1 (ws): --insecure: cannot be combined with --ca-file",
    ],
    [
      ["ws", "ws://h/", "--subprotocol", "a b"],
      `condition 1 (ws): --subprotocol: expected a name like chat.v1, got "a b"`,
    ],
    [
      ["ws", "ws://h/", "--header", "x"],
      `condition 1 (ws): --header: expected 'Name: value' (or Name=value), got "x"`,
    ],
    [
      ["ws", "ws://h/", "--matches", "(?<=a)b"],
      "condition 1 (ws): --matches: not supported by waitcmd's linear-time engine",
    ],
    [
      ["websocket", "ws://h/", "--contains", ""],
      "condition 1 (websocket): --contains: expected a text, got an empty string",
    ],
  ];
  for (const [args, fragment] of cases) {
    const line = usageErrorLine(await runCli(args));
    assertStringIncludes(line, `waitcmd: ${fragment}`);
    assertStringIncludes(line, "(see: waitcmd help websocket)");
  }
});
