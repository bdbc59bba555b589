/**
 * Fault injection through the CLI (docs/reliability.md): a wall-clock jump
 * in the middle of a run (libfaketime under LD_PRELOAD, the monotonic clock
 * left alone), and truncated DNS answers whose TCP retry fails or whose UDP
 * part carries only some of the records (tests/services/dnsfake_server.ts).
 * Each test states what waitcmd promises under the fault: exit code, report
 * fields, no false success, the run ending on time.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { runJson, timing } from "../e2e/_cli.ts";
import { type LiveCli, startCli } from "../e2e/_cli.ts";
import { type DnsFake, startDnsFake } from "../services/dnsfake.ts";
import { closedPort } from "../services/_util.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

// ---------------------------------------------------------------------------
// The clock
// ---------------------------------------------------------------------------

/** Debian's libfaketime (package `libfaketime`, scripts/install-test-deps.sh). */
const LIBFAKETIME = `/usr/lib/${
  Deno.build.arch === "aarch64" ? "aarch64" : "x86_64"
}-linux-gnu/faketime/libfaketime.so.1`;

/** Why libfaketime cannot be had, or undefined. */
const faketimeMissing = await Deno.stat(LIBFAKETIME).then(
  () => undefined,
  () => `${LIBFAKETIME} not found (run scripts/install-test-deps.sh)`,
);

/** The run's deadline, `-t 2s`, in seconds. */
const DEADLINE_S = 2;

/**
 * The environment that runs the CLI under libfaketime with the offset read
 * from `offsetFile` at every clock call (FAKETIME_NO_CACHE), so rewriting the
 * file moves the process's wall clock at once. The monotonic clock is left
 * alone: only the wall clock jumps, as with an NTP step or a manual `date -s`.
 */
function faketimeEnv(offsetFile: string): Record<string, string> {
  return {
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_NO_CACHE: "1",
    FAKETIME_DONT_FAKE_MONOTONIC: "1",
  };
}

/** One condition of a jsonl `end` event (docs/contract.md §7). */
interface EndCondition {
  name: string;
  satisfied: boolean;
  attempts: number;
  detail: string;
  last_error: string;
  elapsed_seconds: number | null;
}

/** A jsonl `end` event: the JSON report plus `"event": "end"`. */
interface EndEvent {
  event: "end";
  status: string;
  elapsed_seconds: number;
  conditions: EndCondition[];
}

/**
 * Waits for the run to end, but kills it after `limitMs`: a deadline that
 * followed the wall clock back by an hour would otherwise hold the test for
 * that hour. Returns the result and its `end` event.
 */
async function endOf(
  run: LiveCli,
  limitMs: number,
): Promise<{ code: number; exitedAt: number; stderr: string; end: EndEvent }> {
  let killed = false;
  const watchdog = setTimeout(() => {
    killed = true;
    run.child.kill("SIGKILL");
  }, limitMs);
  try {
    const r = await run.done();
    assert(!killed, `still running after ${limitMs} ms: killed\n${r.stdout}\n${r.stderr}`);
    const endLine = run.lines.stdout.findLast((l) => l.includes('"event":"end"'));
    assert(endLine !== undefined, `no end event:\n${r.stdout}\n${r.stderr}`);
    return { code: r.code, exitedAt: r.exitedAt, stderr: r.stderr, end: JSON.parse(endLine) };
  } finally {
    clearTimeout(watchdog);
  }
}

/** The run-relative time and text of an attempt event line. */
function attemptOf(line: string): { ok: boolean; error: string; elapsed: number } {
  const e = JSON.parse(line) as { ok: boolean; error: string; elapsed_seconds: number };
  return { ok: e.ok, error: e.error, elapsed: e.elapsed_seconds };
}

/** What {@link jumpRun} saw: the witness's first attempt, the run's end, the times around it. */
interface JumpRun {
  /** The witness's first attempt, before the jump. */
  before: { ok: boolean; error: string; elapsed: number };
  /** The jsonl `end` event's conditions: the tcp condition, then the witness. */
  tcp: EndCondition;
  witness: EndCondition;
  /** When the run exited, after the jump, and the run's whole length (ms). */
  afterJump: number;
  took: number;
  /** The run-relative second at which the witness saw the jump. */
  seen: number;
}

/**
 * Runs `tcp <closed port> -- [not] lockfile LOCK --present --older-than 30m` for DEADLINE_S
 * under libfaketime, with the lock's mtime `lockAgeMs` in the past on the real clock; jumps the
 * process's wall clock by `jump` ("+1h", "-1h") once the witness has been tried once, and asserts
 * what holds either way: the deadline did not move (exit 1, timeout, after the whole DEADLINE_S,
 * not later), the tcp condition kept failing, and the witness saw the jump, mid-run.
 */
async function jumpRun(
  jump: string,
  opts: { lockAgeMs: number; not: boolean },
): Promise<JumpRun> {
  const dir = await Deno.makeTempDir();
  try {
    const offsetFile = `${dir}/offset`;
    const lock = `${dir}/build.lock`;
    await Deno.writeTextFile(offsetFile, "+0\n");
    await Deno.writeTextFile(lock, "");
    if (opts.lockAgeMs > 0) {
      const then = new Date(Date.now() - opts.lockAgeMs);
      await Deno.utime(lock, then, then);
    }
    const addr = `127.0.0.1:${closedPort()}`;
    const spawnedAt = performance.now();
    const run = startCli([
      ...["-o", "jsonl", "-t", `${DEADLINE_S}s`, "-i", "100ms", "tcp", addr, "--"],
      ...(opts.not ? ["not"] : []),
      ...["lockfile", lock, "--present", "--older-than", "30m", "--label", "witness"],
    ], { env: faketimeEnv(offsetFile) });
    const before = attemptOf(
      await run.waitFor("stdout", (l) => l.includes('"condition":"witness"')),
    );
    assertEquals(before.ok, false);
    await new Promise((r) => setTimeout(r, 300));
    const jumpAt = performance.now();
    await Deno.writeTextFile(offsetFile, `${jump}\n`);
    // A deadline on the wall clock an hour away would hold the test: the watchdog ends it at 20 s.
    const r = await endOf(run, 20_000);

    // The deadline did not move: exit 1 with the timeout, after the whole DEADLINE_S (a deadline
    // on the wall clock would have passed at a jump forward, or be an hour away after one back).
    assertEquals([r.code, r.end.status], [1, "timeout"], r.stderr);
    const took = r.exitedAt - spawnedAt;
    assert(took >= DEADLINE_S * 1000 && took < 10_000, `the run took ${took.toFixed(0)} ms`);
    assert(
      r.end.elapsed_seconds >= DEADLINE_S - 0.05 && r.end.elapsed_seconds < DEADLINE_S + 1,
      `elapsed_seconds: ${r.end.elapsed_seconds}`,
    );
    const [tcp, witness] = r.end.conditions as [EndCondition, EndCondition];
    assertEquals([tcp.satisfied, tcp.detail, tcp.last_error], [false, "", "connection refused"]);
    assert(tcp.attempts >= 5, `tcp attempts: ${tcp.attempts}`);

    // The jump reached the process, mid-run.
    assertEquals(witness.satisfied, true, JSON.stringify(witness));
    const seen = witness.elapsed_seconds!;
    assert(seen > before.elapsed, `the jump was seen at ${seen}s`);
    assert(seen < DEADLINE_S - 0.3, `the jump came too late to test anything: ${seen}s`);
    return { before, tcp, witness, afterJump: r.exitedAt - jumpAt, took, seen };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "fault: a wall-clock jump forward (+1h) mid-run does not end the deadline early",
  ignore: ignoreWithout("libfaketime", faketimeMissing),
  ...opts,
  fn: async () => {
    // The lockfile condition is the witness: its age is wall-clock time (Date.now), so it turns
    // stale exactly when the jump reaches the process. Modified now (by this process, on the real
    // clock): 1 h old only to a clock 1 h ahead.
    const j = await jumpRun("+1h", { lockAgeMs: 0, not: false });
    // Before the jump the witness saw the real age.
    assertEquals(j.before.error, "lock file modified under 1s ago, not yet 30m");
    // 1h plus the seconds since the lock was written (start-up included): "1h", "1h2s".
    assertMatch(j.witness.detail, /^lock file exists \(modified 1h(\d+s)? ago, stale\)$/);
    // The process saw the jump at `seen`, so at least DEADLINE_S - seen were left then.
    assert(
      j.afterJump >= (DEADLINE_S - j.seen) * 1000 - 50,
      `exited ${
        j.afterJump.toFixed(0)
      } ms after the jump, seen at ${j.seen}s of a ${DEADLINE_S}s run`,
    );
  },
});

Deno.test({
  name: "fault: a wall-clock jump back (-1h) mid-run does not extend the deadline",
  ignore: ignoreWithout("libfaketime", faketimeMissing),
  ...opts,
  fn: async () => {
    // 40 min old on the real clock: stale (over 30m); on a clock 1 h behind it lies in the
    // future, age 0, not stale. `not`: the witness holds once the lock stops looking stale, i.e.
    // once the jump arrives.
    const j = await jumpRun("-1h", { lockAgeMs: 40 * 60_000, not: true });
    assertStringIncludes(j.before.error, "still holds: lock file exists (modified 40m");
    // Exit 1 at 2 s, not an hour later.
    assert(
      j.afterJump < DEADLINE_S * 1000 + 3000,
      `exited ${j.afterJump.toFixed(0)} ms after the jump`,
    );
    // The lock's mtime lay in the process's future.
    assertEquals(j.witness.detail, "lock file modified under 1s ago, not yet 30m");
  },
});

// ---------------------------------------------------------------------------
// A truncated DNS answer
// ---------------------------------------------------------------------------

/** Client connections (ESTABLISHED, any process) to 127.0.0.1:`port`, from `ss`. */
async function connectionsTo(port: number): Promise<number> {
  const out = await new Deno.Command("ss", {
    args: ["-tnH", "state", "established", `dport = :${port}`],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.trim() !== "").length;
}

/** The dns condition of `name` at fake server `f`, with its flags. */
function dnsAt(f: DnsFake, name: string, ...flags: string[]): string[] {
  return ["dns", name, "--server", f.server, ...flags];
}

/** The global flags of a run that must stay pending: 1.5 s, an attempt every 100 ms. */
const PENDING = ["-t", "1500ms", "-i", "100ms"];

/**
 * Runs `dns NAME` at `f` for 1.5 s with each of `flagSets` and asserts each run times out never
 * satisfied, its last error `lastError`, after at least 3 attempts (and, with `onTimeMs`, ends
 * within that many milliseconds).
 */
async function assertStaysPending(
  f: DnsFake,
  name: string,
  flagSets: string[][],
  lastError: string,
  onTimeMs?: number,
): Promise<void> {
  for (const flags of flagSets) {
    const started = performance.now();
    const r = await runJson([...PENDING, ...dnsAt(f, name, ...flags)]);
    const took = performance.now() - started;
    const c = r.json.conditions[0]!;
    const what = `${flags.join(" ") || "no flags"}: ${JSON.stringify(r.json)}`;
    assertEquals([r.code, r.json.status], [1, "timeout"], what);
    assertEquals([c.satisfied, c.detail], [false, ""], what);
    assertEquals(c.last_error, lastError, what);
    assert(c.attempts >= 3, what);
    if (onTimeMs !== undefined) assert(took < onTimeMs, `the run took ${took.toFixed(0)} ms`);
  }
}

/** Asserts the server's log shows `name` asked over `transport`: the fault was where it was meant. */
async function assertAsked(f: DnsFake, transport: "udp" | "tcp", name: string): Promise<void> {
  const q = await f.queries();
  assert(q.some((l) => l.startsWith(`query ${transport} ${name} A`)), q.join("\n"));
}

/**
 * A fault test against a fresh fake DNS server (`fake` its options), stopped when the test ends.
 */
function dnsFault(
  name: string,
  fn: (f: DnsFake) => Promise<void>,
  fake: Parameters<typeof startDnsFake>[0] = {},
): void {
  Deno.test({
    name: `fault: ${name}`,
    ...opts,
    fn: async () => {
      const f = await startDnsFake(fake);
      try {
        await fn(f);
      } finally {
        await f.stop();
      }
    },
  });
}

dnsFault(
  "a truncated DNS answer whose TCP retry is refused stays pending, never satisfied",
  async (f) => {
    // UDP only: the TCP retry meets a closed port.
    // --absent and --rcode NOERROR too: the truncated UDP answer says NOERROR with no records;
    // taken as the answer, it would make the name look gone, or the rcode look settled.
    await assertStaysPending(
      f,
      f.names.truncated,
      [[], ["--absent"], ["--rcode", "NOERROR"]],
      `truncated answer over UDP, retried over TCP: ${f.server} (tcp): connection refused`,
      6000,
    );
    await assertAsked(f, "udp", f.names.truncated);
  },
  { tcp: false },
);

dnsFault(
  "a truncated DNS answer whose TCP retry is silent: --attempt-timeout, ended on time",
  async (f) => {
    let midRun = -1;
    const started = performance.now();
    const r = await runJson([...timing("2s", "100ms", "300ms"), ...dnsAt(f, f.names.tcpSilent)], {
      started: async () => {
        // By 1.8 s four or more attempts have each opened a TCP connection; those cut by
        // --attempt-timeout must have closed theirs: at most the current one is open.
        await new Promise((r) => setTimeout(r, 1800));
        midRun = await connectionsTo(f.port);
      },
    });
    const took = performance.now() - started;
    const c = r.json.conditions[0]!;
    assertEquals([r.code, r.json.status], [1, "timeout"], JSON.stringify(r.json));
    assertEquals([c.satisfied, c.detail], [false, ""]);
    assertEquals(c.last_error, "attempt timed out after 300ms");
    // Each attempt is cut at 300 ms instead of waiting for the 5 s TCP timeout.
    assert(c.attempts >= 3, `attempts: ${c.attempts}`);
    assert(took < 6000, `the run took ${took.toFixed(0)} ms`);
    await assertAsked(f, "tcp", f.names.tcpSilent);
    assert(midRun >= 0 && midRun <= 2, `${midRun} TCP connections open mid-run`);

    // Without --attempt-timeout the deadline still ends the one attempt still waiting on TCP.
    const startedBare = performance.now();
    const bare = await runJson([...PENDING, ...dnsAt(f, f.names.tcpSilent)]);
    const tookBare = performance.now() - startedBare;
    assertEquals([bare.code, bare.json.conditions[0]!.satisfied], [1, false]);
    assertEquals(
      bare.json.conditions[0]!.last_error,
      "no answer before the deadline (attempt 1 still running)",
    );
    assert(tookBare < 5000, `the run took ${tookBare.toFixed(0)} ms`);
  },
);

dnsFault(
  "a truncated DNS answer whose TCP retry sends garbage is pending, never satisfied",
  async (f) => {
    await assertStaysPending(
      f,
      f.names.tcpGarbage,
      [[], ["--absent"]],
      `truncated answer over UDP, retried over TCP: ${f.server} (tcp): an unreadable answer`,
    );
    await assertAsked(f, "tcp", f.names.tcpGarbage);
  },
);

dnsFault(
  "a truncated answer's partial record set never satisfies --min-count or --equals",
  async (f) => {
    // partial.ZONE: UDP has TC set and 5 of the 40 A records; TCP has all 40.
    const udpOnly = await startDnsFake({ tcp: false });
    try {
      // With TCP refused, the 5 records of the truncated answer would satisfy both; they must not.
      await assertStaysPending(
        udpOnly,
        udpOnly.names.partial,
        [["--min-count", "3"], ["--equals", "127.0.1.1"]],
        `truncated answer over UDP, retried over TCP: ${udpOnly.server} (tcp): connection refused`,
      );
      await assertAsked(udpOnly, "udp", udpOnly.names.partial);

      // With TCP up, the answer is TCP's 40 records: not the 5, and not the 5 added to the 40.
      const full = await runJson([
        ...["-t", "8s", "-i", "100ms"],
        ...dnsAt(f, f.names.partial, "--min-count", "40", "--equals", "127.0.1.40"),
      ]);
      assertEquals(full.code, 0, JSON.stringify(full.json));
      assertEquals(
        full.json.conditions[0]!.detail,
        "A 127.0.1.1, 127.0.1.2, 127.0.1.3, 127.0.1.4, 127.0.1.5, … (40 records)",
      );
      const over = await runJson([...PENDING, ...dnsAt(f, f.names.partial, "--min-count", "41")]);
      assertEquals([over.code, over.json.conditions[0]!.satisfied], [1, false]);
      assertEquals(
        over.json.conditions[0]!.last_error,
        "40 A records, expected at least 41: " +
          "A 127.0.1.1, 127.0.1.2, 127.0.1.3, 127.0.1.4, 127.0.1.5, … (40 records)",
      );
      await assertAsked(f, "tcp", f.names.partial);
    } finally {
      await udpOnly.stop();
    }
  },
);
