/**
 * udp end to end: the CLI against UDP responders made with node:dgram in the
 * test process (an echo that answers with a prefix, one that sends stray
 * datagrams first, a silent one).
 */

import { createSocket, type Socket } from "node:dgram";
import { assert, assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { expectJson, runCli, timing, usageErrorLine } from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];

/** A UDP responder on 127.0.0.1: `answer` gives the datagrams sent back for each one received. */
async function responder(
  answer: (msg: Uint8Array) => Uint8Array[],
  port = 0,
): Promise<{ port: number; received: number; close(): Promise<void> }> {
  const s: Socket = createSocket("udp4");
  let received = 0;
  s.on("message", (m: Uint8Array, r: { address: string; port: number }) => {
    received++;
    for (const out of answer(new Uint8Array(m))) s.send(out, r.port, r.address);
  });
  await new Promise<void>((resolve) => s.bind(port, "127.0.0.1", resolve));
  return {
    port: s.address().port,
    get received() {
      return received;
    },
    close: () => new Promise<void>((r) => s.close(() => r())),
  };
}

const text = (s: string) => new TextEncoder().encode(s);
const echo = (m: Uint8Array) => [new Uint8Array([...text("pong:"), ...m])];

Deno.test("udp skips stray replies until one matches --contains and --matches", async () => {
  const r = await responder((m) => [text("noise"), text("busy"), ...echo(m)]);
  try {
    await expectJson([
      ...FAST,
      ...["udp", `127.0.0.1:${r.port}`, "--send-hex", "68:69", "--contains", "pong"],
      ...["--matches", "^pong:h[i]$"],
    ], {
      code: 0,
      detail:
        `reply from 127.0.0.1:${r.port}: "pong:hi" (7 B), contains "pong", matches /^pong:h[i]$/`,
    });
  } finally {
    await r.close();
  }
});

Deno.test("udp times out on a silent responder, each attempt waiting 1s at most", async () => {
  const r = await responder(() => []);
  try {
    const started = performance.now();
    const h = await runCli([
      ...timing("2500ms", "100ms"),
      ...["udp", `127.0.0.1:${r.port}`, "--send", "ping"],
    ]);
    const took = performance.now() - started;
    assertEquals(h.code, 1);
    assertStringIncludes(
      h.stderr,
      `waitcmd: timed out after 2.5s; not satisfied: udp 127.0.0.1:${r.port}: no reply within 1s`,
    );
    assert(r.received >= 2, `a 1 s window leaves room for a second attempt (got ${r.received})`);
    assert(took < 10_000);
  } finally {
    await r.close();
  }
});

Deno.test("udp: --attempt-timeout shortens the wait for a reply", async () => {
  const r = await responder(() => []);
  try {
    const j = await expectJson([
      ...timing("2s", "100ms", "300ms"),
      ...["udp", `127.0.0.1:${r.port}`, "--send", "ping"],
    ], { code: 1 });
    const c = j.json.conditions[0]!;
    assertEquals(c.last_error, "attempt timed out after 300ms");
    assert(c.attempts >= 3, `attempts ${c.attempts}`);
  } finally {
    await r.close();
  }
});

Deno.test("udp usage errors exit 2 with one line", async () => {
  const cases: [string[], string][] = [
    [["udp", "127.0.0.1:9"], "condition 1 (udp): needs --send TEXT or --send-hex HEX"],
    [
      ["udp", "127.0.0.1:9", "--send", "a", "--send-hex", "00"],
      "condition 1 (udp): --send-hex: cannot be combined with --send",
    ],
    [
      ["udp", "127.0.0.1:9", "--send-hex", "0g"],
      `condition 1 (udp): --send-hex: expected bytes in hex like 'ff 00 1a', got "0g"`,
    ],
    [["udp", "127.0.0.1:9", "--send", ""], "condition 1 (udp): --send: expected a text"],
    [["udp", "localhost", "--send", "a"], "condition 1 (udp): expected HOST:PORT"],
    [
      ["udp", "127.0.0.1:9", "--send", "a", "--matches", "(x"],
      "condition 1 (udp): --matches: invalid regular expression /(x/",
    ],
    [
      ["udp", "127.0.0.1:9", "--send", "a", "--matches", "(?=x)"],
      "condition 1 (udp): --matches: not supported by waitcmd's linear-time engine",
    ],
  ];
  for (const [args, fragment] of cases) {
    const line = usageErrorLine(await runCli(args));
    assertStringIncludes(line, `waitcmd: ${fragment}`);
    assertStringIncludes(line, "(see: waitcmd help udp)");
  }
});
