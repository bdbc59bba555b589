/**
 * Fault injection through the CLI against real processes (docs/reliability.md):
 * each test injects one fault and states what waitcmd promises under it
 * (exit code, attempts, last_error, no false success, no process left).
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { cliTest, expectJson, runCli, runJson, timing, WAITCMD } from "../e2e/_cli.ts";
import { holdConnections, inTempDir } from "../services/_util.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const SECRET = "Zq9FaultSecret";

/**
 * A listener that accepts and closes every connection, and can be taken down
 * and brought back on the same port (node:net sets SO_REUSEADDR, so the port
 * can be bound again at once).
 */
async function flapper(): Promise<{
  port: number;
  up(): Promise<void>;
  down(): Promise<void>;
  close(): Promise<void>;
}> {
  const { createServer } = await import("node:net");
  let server: ReturnType<typeof createServer> | undefined;
  let port = 0;
  const up = async () => {
    if (server) return;
    const s = createServer((sock) => sock.destroy());
    await new Promise<void>((resolve, reject) => {
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => resolve());
    });
    port = (s.address() as { port: number }).port;
    server = s;
  };
  const down = async () => {
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await up();
  return { port, up, down, close: down };
}

/**
 * A TCP server on 127.0.0.1 that hands each connection to `onConn`; `close()` stops it and
 * closes every connection it was given.
 */
function tcpServer(onConn: (c: Deno.Conn) => void): { port: number; close(): void } {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return { port: (l.addr as Deno.NetAddr).port, ...holdConnections(l, onConn) };
}

/** A TCP listener that accepts and then never sends a byte (half-open from the client's view). */
function silentTcp(): { port: number; close(): void } {
  return tcpServer(() => {});
}

/** Runs the CLI with stdout and/or stderr closed at once by the reader (`| head -c0`). */
async function runClosed(
  args: string[],
  close: { stdout?: boolean; stderr?: boolean; stdoutFile?: string },
): Promise<{ code: number; stderr: string; stdout: string }> {
  const child = new Deno.Command(WAITCMD, {
    args,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const read = async (s: ReadableStream<Uint8Array>, closeIt: boolean) => {
    if (closeIt) {
      await s.cancel();
      return "";
    }
    return await new Response(s).text();
  };
  const [stdout, stderr, status] = await Promise.all([
    read(child.stdout, !!close.stdout),
    read(child.stderr, !!close.stderr),
    child.status,
  ]);
  return { code: status.code, stdout, stderr };
}

/** Whether a process whose command line contains `marker` is alive. */
async function alive(marker: string): Promise<boolean> {
  const out = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" }).output();
  return out.code === 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Flaps a TCP target (`cycle` runs again and again while `flapping()`), runs `whileFlapping`
 * against its port, then stops the flapping, leaves the target up and runs `onceStable`.
 */
async function flapThenStable(
  cycle: (f: Awaited<ReturnType<typeof flapper>>, flapping: () => boolean) => Promise<void>,
  whileFlapping: (target: string) => Promise<void>,
  onceStable: (target: string) => Promise<void>,
  startDown = false,
): Promise<void> {
  const f = await flapper();
  if (startDown) await f.down();
  let flapping = true;
  const loop = (async () => {
    while (flapping) await cycle(f, () => flapping);
  })();
  try {
    await whileFlapping(`127.0.0.1:${f.port}`);
    flapping = false;
    await loop;
    await f.up();
    await onceStable(`127.0.0.1:${f.port}`);
  } finally {
    flapping = false;
    await loop;
    await f.close();
  }
}

Deno.test({
  name: "fault: flapping target (up/down every 300 ms) never satisfies --stable-for 1s, then does",
  ...opts,
  fn: () =>
    flapThenStable(
      async (f, flapping) => {
        await sleep(300);
        if (!flapping()) return;
        await f.down();
        await sleep(300);
        if (flapping()) await f.up();
      },
      async (target) => {
        const r = await runJson([...timing("4s", "500ms"), "--stable-for", "1s", "tcp", target]);
        assertEquals(r.code, 1, "never satisfied while flapping");
      },
      async (target) => {
        const stable = await runJson([
          ...timing("10s", "500ms"),
          "--stable-for",
          "1s",
          "tcp",
          target,
        ]);
        assertEquals(stable.code, 0, "satisfied once stable");
        assert(stable.json.conditions[0]!.attempts >= 5, "the window was sampled at least 5 times");
      },
    ),
});

Deno.test({
  name: "fault: a target up 60 ms of every 300 ms never gives --successes 3 at 100 ms, then does",
  ...opts,
  fn: () =>
    flapThenStable(
      // Three samples 100 ms apart need 200 ms of "up": an up window of 60 ms (or twice that
      // on a loaded machine) can never hold them.
      async (f) => {
        await f.up();
        await sleep(60);
        await f.down();
        await sleep(240);
      },
      async (target) => {
        const r = await runJson(["-t", "2500ms", "-i", "100ms", "--successes", "3", "tcp", target]);
        assertEquals(r.code, 1, "never satisfied while flapping");
        assertEquals(r.json.conditions[0]!.satisfied, false);
      },
      async (target) => {
        const stable = await runJson([
          "-t",
          "10s",
          "-i",
          "100ms",
          "--successes",
          "3",
          "tcp",
          target,
        ]);
        assertEquals(stable.code, 0, "satisfied once stable");
        assertEquals(stable.json.conditions[0]!.attempts, 3);
      },
      true,
    ),
});

cliTest(
  "fault: half-open TCP under --attempt-timeout: attempts keep coming, the run ends on time",
  async () => {
    const s = silentTcp();
    try {
      const started = performance.now();
      const r = await runJson([...timing("2s", "100ms", "300ms"), "ssh", `127.0.0.1:${s.port}`]);
      const took = performance.now() - started;
      assertEquals(r.code, 1);
      const c = r.json.conditions[0]!;
      assert(c.attempts >= 3, `attempts: ${c.attempts}`);
      assertEquals(c.last_error, "attempt timed out after 300ms");
      assert(took < 5000, `the run took ${took} ms`);
    } finally {
      s.close();
    }
  },
);

cliTest(
  "fault: a closed stderr never changes the exit code of a usage error or a verdict",
  async () => {
    const usage = await runClosed(["tcp"], { stderr: true });
    assertEquals(usage.code, 2);
    const f = await flapper();
    try {
      const ok = await runClosed(["-o", "json", "-t", "2s", "tcp", `127.0.0.1:${f.port}`], {
        stdout: true,
        stderr: true,
      });
      assertEquals(ok.code, 0);
      const text = await runClosed(["-t", "2s", "tcp", `127.0.0.1:${f.port}`], { stderr: true });
      assertEquals(text.code, 0);
    } finally {
      await f.close();
    }
  },
);

cliTest(
  "fault: a closed stdout in json and jsonl mode keeps the verdict's code, said once",
  async () => {
    const json = await runClosed(["-o", "json", "-t", "300ms", "tcp", "127.0.0.1:1"], {
      stdout: true,
    });
    assertEquals(json.code, 1);
    const jsonl = await runClosed(
      ["-o", "jsonl", "-t", "500ms", "-i", "50ms", "tcp", "127.0.0.1:1"],
      { stdout: true },
    );
    assertEquals(jsonl.code, 1);
    const failures = jsonl.stderr.split("\n").filter((l) => l.includes("writing to stdout failed"));
    assert(failures.length <= 1, `reported ${failures.length} times:\n${jsonl.stderr}`);
  },
);

cliTest("fault: stdout on a full disk (/dev/full) keeps the verdict's code", async () => {
  const out = await new Deno.Command("sh", {
    args: ["-c", `"${WAITCMD}" -o json -t 300ms tcp 127.0.0.1:1 >/dev/full`],
    env: { NO_COLOR: "1" },
    stdout: "null",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 1);
  assertStringIncludes(new TextDecoder().decode(out.stderr), "writing to stdout failed");
});

cliTest(
  "fault: secrets in a target that does not parse stay out of the usage error, in every mode",
  async () => {
    const targets = [
      `ftp://alice:${SECRET}@127.0.0.1:1/?token=${SECRET}2`,
      `http://alice:${SECRET}@[::1/?token=${SECRET}2&password=${SECRET}3`,
    ];
    for (const target of targets) {
      for (const mode of [[], ["-o", "json"], ["-o", "jsonl"]]) {
        const r = await runCli([...mode, "http", target]);
        assertEquals(r.code, 2);
        assert(!(r.stdout + r.stderr).includes(SECRET), `leaked: ${r.stderr}`);
      }
    }
    const flag = await runCli(["ssh", "h:22", "--user", "u", "--password", SECRET, "--bogus"]);
    assertEquals(flag.code, 2);
    assert(!flag.stderr.includes(SECRET), `leaked: ${flag.stderr}`);
  },
);

/**
 * Runs `tcp <up> -- then sh -c SCRIPT` (SCRIPT sleeps `sleep MARKER`), sends `signal` once the
 * sleep runs, and asserts waitcmd exits `code` with no sleep of the command left behind.
 */
async function assertThenSignalled(
  signal: Deno.Signal,
  code: number,
  script: (sleep: string) => string,
  tag: string,
): Promise<void> {
  const f = await flapper();
  const sleeper = `sleep ${Date.now() % 100000}.${tag}`;
  try {
    const child = new Deno.Command(WAITCMD, {
      args: ["tcp", `127.0.0.1:${f.port}`, "--", "then", "sh", "-c", script(sleeper)],
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    for (let i = 0; i < 100 && !(await alive(sleeper)); i++) {
      await sleep(50);
    }
    assert(await alive(sleeper), "the then command started");
    child.kill(signal);
    assertEquals((await child.status).code, code);
    await sleep(200);
    assertEquals(await alive(sleeper), false, "a sleep of the then command survived");
  } finally {
    await f.close();
  }
}

Deno.test({
  name: "fault: SIGTERM during `then` ends the command's whole process group (143, no orphan)",
  ...opts,
  fn: () => assertThenSignalled("SIGTERM", 143, (sleep) => `${sleep} & ${sleep}`, "4242"),
});

Deno.test({
  name: "fault: SIGINT during `then` ends it too (130), and a child ignoring TERM is killed",
  ...opts,
  fn: () => assertThenSignalled("SIGINT", 130, (sleep) => `${sleep} & wait`, "4343"),
});

cliTest(
  "fault: a `then` command that cannot run is a usage error before waiting",
  () =>
    inTempDir("waitcmd-fault-")(async (dir) => {
      await Deno.writeTextFile(`${dir}/plain`, "not a program");
      const rows: [string, string][] = [
        ["/nonexistent/cmd", "then: command not found: /nonexistent/cmd"],
        [`${dir}/plain`, `then: not an executable file: ${dir}/plain`],
        ["waitcmd-no-such-command", "then: command not found on PATH: waitcmd-no-such-command"],
      ];
      for (const [cmd, fragment] of rows) {
        const r = await runCli(["-t", "30s", "tcp", "127.0.0.1:1", "--", "then", cmd]);
        assertEquals(r.code, 2, r.stderr);
        assertStringIncludes(r.stderr, fragment);
      }
    }),
);

cliTest("fault: a probe still waiting (silent DNS server) does not delay the exit", async () => {
  const { createSocket } = await import("node:dgram");
  const udp = createSocket("udp4");
  await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
  const f = await flapper();
  try {
    const started = performance.now();
    const r = await runJson([
      ...["--mode", "any", "-t", "20s", "dns", "app.test"],
      ...["--server", `127.0.0.1:${udp.address().port}`],
      ...["--", "tcp", `127.0.0.1:${f.port}`],
    ]);
    const took = performance.now() - started;
    assertEquals(r.code, 0);
    assert(took < 2500, `exit took ${took.toFixed(0)} ms after a quick verdict`);
  } finally {
    udp.close();
    await f.close();
  }
});

cliTest(
  "fault: DNS silence under --attempt-timeout gives timed-out attempts, not a hang",
  async () => {
    const { createSocket } = await import("node:dgram");
    const udp = createSocket("udp4");
    await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
    try {
      const r = await expectJson([
        ...timing("1500ms", "100ms", "300ms"),
        ...["dns", "app.test", "--server", `127.0.0.1:${udp.address().port}`],
      ], { code: 1 });
      assert(r.json.conditions[0]!.attempts >= 2);
      assertEquals(r.json.conditions[0]!.satisfied, false);
    } finally {
      udp.close();
    }
  },
);

cliTest(
  "fault: garbage instead of a TLS, HTTP or SSH greeting is a failed attempt, never success",
  async () => {
    const s = tcpServer((c) => {
      c.write(new TextEncoder().encode("\x00\xffGARBAGE garbage\r\n")).catch(() => {}).finally(
        () => setTimeout(() => c.close(), 50),
      );
    });
    const port = s.port;
    try {
      for (
        const kind of [["tls", `127.0.0.1:${port}`], ["http", `http://127.0.0.1:${port}/`], [
          "ssh",
          `127.0.0.1:${port}`,
        ]]
      ) {
        const r = await runJson(["-t", "1s", "-i", "200ms", ...kind]);
        assertEquals(r.code, 1, `${kind[0]}: ${JSON.stringify(r.json)}`);
        assert(r.json.conditions[0]!.last_error !== "", `${kind[0]} names the error`);
      }
    } finally {
      s.close();
    }
  },
);

cliTest(
  "fault: a catastrophic regular expression cannot hold the deadline (RE2, linear time)",
  () =>
    inTempDir("waitcmd-fault-")(async (dir) => {
      const file = `${dir}/r.txt`;
      await Deno.writeTextFile(file, "a".repeat(40) + "!\n");
      const started = performance.now();
      await expectJson(["-t", "2s", "log", file, "--from-start", "--matches", "^(a+)+$"], {
        code: 1,
      });
      assert(performance.now() - started < 6000, "the deadline held");
      const lookahead = await runCli(["log", file, "--matches", "a(?=b)"]);
      assertEquals(lookahead.code, 2);
      assertStringIncludes(
        lookahead.stderr,
        "--matches: not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences)",
      );
    }),
);

cliTest(
  "fault: seconds of linear-time matching on a 10 MiB body cannot hold the deadline",
  async () => {
    // `^(a+)+$` on 10 MiB of `a` takes RE2 (re2js) about 2.7 s: run on the main thread it
    // would hold the 500 ms deadline for that long; in its worker it holds nothing.
    const body = "a".repeat(10 << 20);
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response(body),
    );
    try {
      const url = `http://127.0.0.1:${server.addr.port}/`;
      const { startCli } = await import("../e2e/_cli.ts");
      const run = startCli(["-o", "json", "-t", "500ms", "http", url, "--matches", "^(a+)+$"]);
      const started = performance.now();
      const r = await run.done();
      const json = JSON.parse(r.stdout);
      assertEquals([r.code, json.status], [1, "timeout"]);
      // Start-up included: far less than the 2.7 s a blocking match would take.
      assert(r.exitedAt - started < 2000, `exited after ${r.exitedAt - started} ms`);
      // A body that matches is still judged (in the worker).
      const ok = await runJson(["-t", "20s", "http", url, "--matches", "^a+$"]);
      assertEquals([ok.code, ok.json.conditions[0]!.detail], [
        0,
        "200 OK; body matches /^a+$/",
      ]);
    } finally {
      await server.shutdown();
    }
  },
);

cliTest(
  "fault: long log lines under a slow expression never hold SIGTERM or the deadline",
  () =>
    inTempDir("waitcmd-fault-")(async (dir) => {
      const file = `${dir}/big.log`;
      // Three lines of nearly 4 MiB that `^(a+)+$` does not match: about 0.8 s of matching
      // each. On the main thread that held the 500 ms deadline past 2 s; in a worker it does not.
      await Deno.writeTextFile(file, ("a".repeat((4 << 20) - 10) + "!\n").repeat(3));
      const { startCli } = await import("../e2e/_cli.ts");
      const args = ["log", file, "--from-start", "--matches", "^(a+)+$"];
      const timed = startCli(["-o", "json", "-t", "500ms", ...args]);
      const started = performance.now();
      const t = await timed.done();
      assertEquals(t.code, 1, t.stderr);
      assert(t.exitedAt - started < 1500, `exited after ${t.exitedAt - started} ms`);

      const signalled = startCli(["-t", "60s", "-i", "100ms", ...args]);
      await signalled.waitFor("stderr", /attempt/, 30_000).catch(() => "");
      await new Promise((r) => setTimeout(r, 300));
      const sent = performance.now();
      signalled.child.kill("SIGTERM");
      const s = await signalled.done();
      assertEquals(s.code, 143, s.stderr);
      assert(s.exitedAt - sent < 1000, `exited ${s.exitedAt - sent} ms after SIGTERM`);
    }),
);

/**
 * Writes 200,000 lines (1 in 1,000 marked), rotating every 20,000, pausing `pauseMs` after each
 * 500 lines (0: as fast as it can).
 */
async function fastWriter(
  path: string,
  mode: "rename" | "copytruncate",
  pauseMs: number,
): Promise<void> {
  let f = await Deno.open(path, { create: true, append: true });
  const enc = new TextEncoder();
  let batch = "";
  for (let i = 1; i <= 200_000; i++) {
    batch += i % 1000 === 0 ? `${i} MARK\n` : `${i} noise noise noise\n`;
    if (i % 500 === 0) {
      await f.write(enc.encode(batch));
      batch = "";
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
    if (i % 20_000 === 0 && i < 200_000) {
      if (mode === "rename") {
        f.close();
        await Deno.rename(path, `${path}.${i}`);
        f = await Deno.open(path, { create: true, append: true });
      } else {
        await Deno.copyFile(path, `${path}.${i}`);
        await Deno.truncate(path, 0);
      }
    }
  }
  f.close();
}

// Rename at full speed; copytruncate at about 40,000 lines/s at most (a 10 ms pause per 500
// lines): faster, a truncation can land between the reader's size check and its read, a race
// no reader can close without the writer's help (docs/contract.md §5 log).
for (const [mode, pauseMs] of [["rename", 0], ["copytruncate", 10]] as const) {
  Deno.test({
    name:
      `fault: log rotation (${mode}) under a fast writer: 200,000 lines, 200 marks counted exactly`,
    ...opts,
    fn: async () => {
      const dir = await Deno.makeTempDir();
      const path = `${dir}/app.log`;
      try {
        await Deno.writeTextFile(path, "");
        const args = (n: number) => [
          ...timing("60s", "200ms"),
          ...["log", path, "--contains", "MARK", "--min-matches", String(n)],
        ];
        // 200 must be reached (0 lost); 201 must never be (0 counted twice): both runs follow
        // the same writer, from its first line.
        const { startCli } = await import("../e2e/_cli.ts");
        const exact = startCli(["-o", "jsonl", ...args(200)]);
        const over = startCli(["-o", "jsonl", "-t", "30s", ...args(201).slice(2)]);
        // Both follow the file (their first attempt is done) before the first line is written.
        await exact.waitFor("stdout", /"event":"attempt"/, 60_000);
        await over.waitFor("stdout", /"event":"attempt"/, 60_000);
        await fastWriter(path, mode, pauseMs);
        const end = (lines: readonly string[]) =>
          JSON.parse(lines.findLast((l) => l.includes('"event":"end"')) ?? "{}");
        const done = await exact.done();
        assertEquals(done.code, 0, `${mode}: ${JSON.stringify(end(exact.lines.stdout))}`);
        const overDone = await over.done();
        const overEnd = end(over.lines.stdout);
        assertEquals(overDone.code, 1, `${mode}: counted a line twice: ${JSON.stringify(overEnd)}`);
        assertEquals(overEnd.conditions[0].last_error, "200/201 matches");
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

cliTest(
  "fault: ulimit -n 64 with 200 conditions gives a clear error and a timeout, not a crash",
  async () => {
    const conditions: string[] = [];
    for (let i = 0; i < 200; i++) conditions.push(...(i > 0 ? ["--"] : []), "tcp", "127.0.0.1:1");
    const quoted = [WAITCMD, "-o", "json", "-t", "2s", ...conditions].join(" ");
    const out = await new Deno.Command("bash", {
      args: ["-c", `ulimit -n 64; exec ${quoted}`],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(out.code, 1, new TextDecoder().decode(out.stderr));
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    const errors = new Set(report.conditions.map((c: { last_error: string }) => c.last_error));
    assert(errors.has("too many open files"), `errors: ${[...errors].join(", ")}`);
    assertEquals(new TextDecoder().decode(out.stderr), "");
  },
);

/** An HTTP server whose body is endless (2 GiB announced) or trickles one byte at a time. */
function bodyServer(): { port: number; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const slow = new URL(req.url).pathname === "/slow";
    const chunk = new TextEncoder().encode(slow ? "x" : '{"a":' + "1".repeat(65_535));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        if (slow) await new Promise((r) => setTimeout(r, 100));
        sent += chunk.length;
        if (sent > 2 * 1024 ** 3) ctl.close();
        else ctl.enqueue(chunk);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  });
  return { port: server.addr.port, close: () => server.shutdown() };
}

cliTest(
  "fault: a 2 GiB body ends the attempt once the answer is known, with flat memory",
  async () => {
    const s = bodyServer();
    try {
      for (const flags of [["--status", "200"], ["--jsonpath", "$.a == 1"]]) {
        const out = await new Deno.Command("/usr/bin/time", {
          args: [
            ...["-f", "maxrss_kb=%M", WAITCMD, "-o", "json", "-t", "20s"],
            ...["--attempt-timeout", "10s", "http", `http://127.0.0.1:${s.port}/big`],
            ...flags,
          ],
          env: { NO_COLOR: "1" },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const err = new TextDecoder().decode(out.stderr);
        const rss = Number(/maxrss_kb=(\d+)/.exec(err)?.[1] ?? "0") / 1024;
        const report = JSON.parse(new TextDecoder().decode(out.stdout));
        // --status is known from the headers; --jsonpath reads at most 10 MiB and then judges.
        assert([0, 1].includes(out.code), err);
        assert(report.conditions[0].attempts >= 1);
        console.log(`2 GiB body, ${flags.join(" ")}: peak RSS ${rss.toFixed(0)} MB`);
        assert(rss > 0 && rss < 256, `${flags[0]}: peak RSS ${rss.toFixed(0)} MB`);
        if (flags[0] === "--status") assertEquals(out.code, 0);
      }
    } finally {
      await s.close();
    }
  },
);

cliTest(
  "fault: a body that trickles is cut by --attempt-timeout; the run ends on time",
  async () => {
    const s = bodyServer();
    try {
      const started = performance.now();
      const r = await expectJson([
        ...timing("2s", "100ms", "500ms"),
        ...["http", `http://127.0.0.1:${s.port}/slow`, "--contains", "never"],
      ], { code: 1, error: "attempt timed out after 500ms" });
      assert(r.json.conditions[0]!.attempts >= 2);
      assert(performance.now() - started < 8000);
    } finally {
      await s.close();
    }
  },
);

cliTest(
  "fault: a server that closes mid-TLS-handshake is a failed attempt, never success",
  async () => {
    // Read the ClientHello, then hang up.
    const s = tcpServer((c) => {
      c.read(new Uint8Array(512)).catch(() => null).finally(() => c.close());
    });
    const port = s.port;
    try {
      for (const target of [["tls", `127.0.0.1:${port}`], ["http", `https://127.0.0.1:${port}/`]]) {
        const r = await runJson(["-t", "1s", "-i", "200ms", ...target]);
        assertEquals(r.code, 1, `${target[0]}: ${JSON.stringify(r.json)}`);
        assert(r.json.conditions[0]!.attempts >= 2);
        assert(r.json.conditions[0]!.last_error !== "");
      }
    } finally {
      s.close();
    }
  },
);
