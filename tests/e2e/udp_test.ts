/**
 * udp end to end: the CLI against UDP responders made with node:dgram in the
 * test process (an echo that answers with a prefix, one that sends stray
 * datagrams first, a silent one).
 */

import { createSocket, type Socket } from "node:dgram";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { freeUdpPort } from "../services/chrony.ts";
import { runCli, runJson, runLate, usageErrorLine } from "./_cli.ts";

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

Deno.test("udp is satisfied by a reply, with the JSON report and the human line", async () => {
  const r = await responder(echo);
  try {
    const j = await runJson([...FAST, "udp", `127.0.0.1:${r.port}`, "--send", "ping"]);
    assertEquals([j.code, j.stderr, j.json.status], [0, "", "satisfied"]);
    const c = j.json.conditions[0]!;
    assertEquals(c.name, `udp 127.0.0.1:${r.port}`);
    assertEquals(c.kind, "udp");
    assertEquals(c.attempts, 1);
    assertEquals(c.detail, `reply from 127.0.0.1:${r.port}: "pong:ping" (9 B)`);
    const h = await runCli([...FAST, "udp", `localhost:${r.port}`, "--send", "ping"]);
    assertEquals([h.code, h.stdout], [0, ""]);
    assertMatch(
      h.stderr,
      new RegExp(
        `\\[ok\\] udp localhost:${r.port} attempt 1 \\(\\d+\\.\\ds\\): reply from 127\\.0\\.0\\.1:${r.port}: "pong:ping"`,
      ),
    );
  } finally {
    await r.close();
  }
});

Deno.test("udp skips stray replies until one matches --contains and --matches", async () => {
  const r = await responder((m) => [text("noise"), text("busy"), ...echo(m)]);
  try {
    const j = await runJson([
      ...FAST,
      "udp",
      `127.0.0.1:${r.port}`,
      "--send-hex",
      "68:69",
      "--contains",
      "pong",
      "--matches",
      "^pong:h[i]$",
    ]);
    assertEquals(j.code, 0);
    assertEquals(
      j.json.conditions[0]!.detail,
      `reply from 127.0.0.1:${r.port}: "pong:hi" (7 B), contains "pong", matches /^pong:h[i]$/`,
    );
  } finally {
    await r.close();
  }
});

Deno.test("udp stays pending while no reply matches, and says what came", async () => {
  const r = await responder((m) => [...echo(m)]);
  try {
    const j = await runJson([
      "--timeout",
      "2500ms",
      "--interval",
      "200ms",
      "udp",
      `127.0.0.1:${r.port}`,
      "--send",
      "ping",
      "--contains",
      "ready",
    ]);
    assertEquals([j.code, j.json.status], [1, "timeout"]);
    assertEquals(
      j.json.conditions[0]!.last_error,
      'no matching reply within 1s (1 skipped); last reply "pong:ping" (9 B) does not contain "ready"',
    );
  } finally {
    await r.close();
  }
});

Deno.test("udp retries a silent port until a responder starts (pending, then satisfied)", async () => {
  const port = await freeUdpPort();
  let r: Awaited<ReturnType<typeof responder>> | undefined;
  try {
    const late = await runLate(
      [...FAST, "udp", `127.0.0.1:${port}`, "--send", "ping", "--contains", "pong"],
      async () => (r = await responder(echo, port)),
    );
    assertEquals([late.code, late.report.status], [0, "satisfied"]);
    const failed = late.attempts.filter((a) => !a.ok);
    assert(failed.length >= 1);
    // Nobody reads the port: under Deno the ICMP port unreachable is not reported, so silence.
    assertEquals(failed[0]!.error, "no reply within 1s");
    assertEquals(
      late.report.conditions[0]!.detail,
      `reply from 127.0.0.1:${port}: "pong:ping" (9 B), contains "pong"`,
    );
  } finally {
    await r?.close();
  }
});

Deno.test("udp times out on a silent responder, each attempt waiting 1s at most", async () => {
  const r = await responder(() => []);
  try {
    const started = performance.now();
    const h = await runCli([
      "--timeout",
      "2500ms",
      "--interval",
      "100ms",
      "udp",
      `127.0.0.1:${r.port}`,
      "--send",
      "ping",
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
    const j = await runJson([
      "--timeout",
      "2s",
      "--interval",
      "100ms",
      "--attempt-timeout",
      "300ms",
      "udp",
      `127.0.0.1:${r.port}`,
      "--send",
      "ping",
    ]);
    assertEquals(j.code, 1);
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
