/**
 * websocket end to end: the CLI against two real servers, Deno.serve with
 * its WebSocket upgrade (in the test process) and Python's `websockets`
 * (PyPI, in a cached virtual environment; conditions/websocket/_service.ts), over ws://
 * and wss:// (a throwaway CA from tests/services/tls.ts).
 */

import { assert, assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { buildMissing } from "../../tests/services/_util.ts";
import { buildPyWs, type PyWsServer, startPyWs } from "./_service.ts";
import { makePki } from "../../tests/services/tls.ts";
import { expectJson, runCli, runJson, runLate, usageErrorLine } from "../../tests/e2e/_cli.ts";

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

/** A port nothing listens on (yet). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test({
  name: "websocket --ping: a server that upgrades and never answers the ping times out",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // Answers the upgrade by hand (RFC 6455's accept key), then reads and ignores every frame.
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    const conns: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of l) {
        conns.push(conn);
        (async () => {
          const buf = new Uint8Array(4096);
          let head = "";
          while (!head.includes("\r\n\r\n")) {
            const n = await conn.read(buf);
            if (n === null) return;
            head += new TextDecoder().decode(buf.subarray(0, n));
          }
          const key = /^sec-websocket-key:\s*(\S+)/im.exec(head)?.[1] ?? "";
          const digest = await crypto.subtle.digest(
            "SHA-1",
            new TextEncoder().encode(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`),
          );
          const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
          await conn.write(new TextEncoder().encode(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
              `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
          ));
          while ((await conn.read(buf)) !== null) { /* the ping, unanswered */ }
        })().catch(() => {});
      }
    })().catch(() => {});
    try {
      // Without --ping the same server holds: the upgrade itself works.
      await expectJson([...FAST, "ws", `ws://127.0.0.1:${port}/`], { code: 0, detail: "upgraded" });
      const j = await expectJson([
        ...["--timeout", "1200ms", "--attempt-timeout", "300ms", "--interval", "100ms"],
        ...["ws", `ws://127.0.0.1:${port}/`, "--ping"],
      ], { code: 1 });
      assertEquals(j.json.conditions[0]!.last_error, "attempt timed out after 300ms");
    } finally {
      l.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed by the client */ }
      }
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
    const closeFile = await Deno.makeTempFile({ prefix: "waitcmd-ws-close-" });
    let plain: PyWsServer | undefined;
    let secure: PyWsServer | undefined;
    try {
      plain = await startPyWs({ closeCodeFile: closeFile });
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

      await t.step("--ping holds once the pong comes back", async () => {
        await expectJson([...FAST, "ws", `${ws}/echo`, "--ping"], {
          code: 0,
          detail: "upgraded; pong received",
        });
        await expectJson([...FAST, "ws", `${ws}/greet`, "--ping", "--contains", "hello"], {
          code: 0,
          detail:
            'upgraded; pong received; message "hello from websockets" (21 B) contains "hello"',
        });
      });

      await t.step("--expect-close-code holds on the server's close with that code", async () => {
        await expectJson([
          ...FAST,
          "ws",
          `${ws}/close?code=4000&reason=done`,
          "--expect-close-code",
          "4000",
        ], {
          code: 0,
          detail: 'upgraded; closed with code 4000 "done"',
        });
        await expectJson([
          ...FAST,
          ...["ws", `${ws}/close?code=4001&greet=job-ok`, "--contains", "ok"],
          ...["--expect-close-code", "4001"],
        ], {
          code: 0,
          detail: 'upgraded; message "job-ok" (6 B) contains "ok"; closed with code 4001',
        });
      });

      await t.step("another close code is pending until the timeout", async () => {
        await expectJson([
          ...SHORT,
          "ws",
          `${ws}/close?code=1000&reason=bye`,
          "--expect-close-code",
          "4000",
        ], {
          code: 1,
          status: "timeout",
          error: 'connection closed (code 1000 "bye"), expected code 4000',
        });
        await expectJson([
          ...SHORT,
          ...["ws", `${ws}/close?code=4001&greet=job-failed`, "--contains", "ok"],
          ...["--expect-close-code", "4001"],
        ], {
          code: 1,
          error:
            'connection closed (code 4001) before a matching message (1 message skipped; last "job-failed" (10 B) does not contain "ok")',
        });
      });

      await t.step(
        "--expect-close-code: pending, then the server closes with the code",
        async () => {
          await Deno.writeTextFile(closeFile, "1001");
          const late = await runLate(
            [...FAST, "ws", `${ws}/closefile`, "--expect-close-code", "4002"],
            () => Deno.writeTextFile(closeFile, "4002"),
          );
          assertEquals(late.code, 0);
          assertEquals(
            late.attempts[0]!.error,
            'connection closed (code 1001 "from file"), expected code 4002',
          );
          assertEquals(
            late.report.conditions[0]!.detail,
            'upgraded; closed with code 4002 "from file"',
          );
        },
      );

      await t.step("--ping: refused, then the server starts and answers", async () => {
        const port = freePort();
        let later: PyWsServer | undefined;
        try {
          const late = await runLate(
            [...FAST, "ws", `ws://127.0.0.1:${port}/echo`, "--ping"],
            async () => {
              later = await startPyWs({ port });
            },
          );
          assertEquals(late.code, 0);
          assertEquals(late.attempts[0]!.error, "connection refused");
          assertEquals(late.report.conditions[0]!.detail, "upgraded; pong received");
        } finally {
          await later?.stop();
        }
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
      await Deno.remove(closeFile);
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
      ["ws", "ws://h/", "--expect-close-code", "2000"],
      "condition 1 (ws): --expect-close-code: 2000 is reserved by RFC 6455 and never sent by a server",
    ],
    [
      ["ws", "ws://h/", "--expect-close-code", "normal"],
      'condition 1 (ws): --expect-close-code: expected a whole number from 1000 to 4999, got "normal"',
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
