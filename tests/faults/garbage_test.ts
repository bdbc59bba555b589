/**
 * Hostile servers that once held waitcmd past its deadline and its signals,
 * or took gigabytes, each reproduced through the CLI (docs/reliability.md;
 * the whole behaviour × kind matrix is tests/faults/garbage_matrix.ts, run
 * by `deno task faults`):
 *
 * - a "mongodb" server answering 16 zero bytes (the driver looped on a
 *   zero-length message: no deadline, no SIGTERM, gigabytes);
 * - a "mysql" server streaming zeros at 100 KB/s (the thread spun; SIGTERM
 *   took 24 s; the driver printed "got packets out of order" on stderr);
 * - a postgres `R` message announcing 1 GiB (the driver kept reading);
 * - a kafka frame announcing 2 GiB (an "internal error", exit 3, over a GB);
 * - a redis bulk string of 300 MB ("Fatal process out of memory: Zone", exit 133) and a
 *   postgres error message of 300 MB: the worker's sockets read at most the kind's cap
 *   (engine/socket_cap.ts).
 *
 * Each ends within its deadline (or its SIGTERM) plus 100 ms, measured from
 * the outside from the run's `start` event to the exit. CI_MARGIN_MS is
 * added for the shared, loaded machines tests run on: what these tests
 * catch are overruns of seconds. The peak RSS stays under the memory cap
 * (512 MiB), nothing prints a trace, a server's bytes give exit 1 (never
 * 3), and no process outlives the run.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import {
  be32,
  bytes,
  type FaultRun,
  faultRun,
  type Framing,
  garbageServer,
  lastError,
  le32,
  showsTrace,
} from "./_garbage.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** What the shared machine may add to a measured exit, beyond the promised 100 ms. */
const CI_MARGIN_MS = 400;
/** The memory cap of every run (the default). */
const CAP = 512 * 2 ** 20;

/** The reproductions: a server's framing, the condition pointed at it, what it should say. */
const CASES: {
  name: string;
  framing: Framing;
  args: (port: number) => string[];
  error: string;
}[] = [
  {
    name: 'a "mongodb" server answering 16 zero bytes',
    framing: { huge: le32(0x7ffffff0), zero: new Uint8Array(16), zeroOnce: true },
    args: (port) => ["mongodb", `mongodb://127.0.0.1:${port}`],
    error: "shorter than a MongoDB message header",
  },
  {
    name: 'a "mysql" server streaming zeros at 100 KB/s',
    framing: { huge: bytes([0xff, 0xff, 0xff, 0]), zero: new Uint8Array(4), zeroRate: 100_000 },
    args: (port) => ["mysql", `mysql://app@127.0.0.1:${port}/app`],
    error: "",
  },
  {
    name: "a postgres R message announcing 1 GiB",
    framing: { huge: bytes("R", be32(2 ** 30 + 4)), zero: bytes("N", be32(4)) },
    args: (port) => ["postgres", `postgres://app@127.0.0.1:${port}/app?sslmode=disable`],
    error: "",
  },
  {
    name: "a redis bulk string of 300 MB",
    framing: { huge: bytes("$300000000\r\n"), zero: bytes("$0\r\n\r\n") },
    args: (port) => ["redis", `redis://127.0.0.1:${port}`],
    error: "the server sent more than 4 MiB in one session",
  },
  {
    name: "a postgres error message of 300 MB",
    framing: { huge: bytes("E", be32(300_000_004), "SERROR\0M"), zero: bytes("N", be32(4)) },
    args: (port) => ["postgres", `postgres://app@127.0.0.1:${port}/app?sslmode=disable`],
    error: "the server sent more than 4 MiB in one session",
  },
  {
    name: "a kafka frame announcing 2 GiB",
    framing: { huge: be32(0x7ffffff0), zero: be32(0) },
    args: (port) => ["kafka", `127.0.0.1:${port}`],
    error: "",
  },
];

/** What every run against a hostile server must hold to. */
function assertContained(r: FaultRun, what: string): void {
  assert(!showsTrace(r), `${what}: a trace or a crash:\n${r.stderr}${r.stdout.slice(-2000)}`);
  assertEquals(r.stderr, "", `${what}: stderr (a library's console output?)`);
  assert(
    r.peakRss > 0 && r.peakRss < CAP,
    `${what}: peak RSS ${Math.round(r.peakRss / 2 ** 20)} MiB`,
  );
  assertEquals(r.leftovers, [], `${what}: processes left behind`);
}

for (const c of CASES) {
  const behaviour = c.name.includes("zero") ? "zero" : "huge";
  Deno.test({
    name: `garbage: ${c.name} ends at the deadline, exit 1, memory under the cap`,
    ...opts,
    fn: async () => {
      const server = garbageServer(behaviour, c.framing);
      try {
        const r = await faultRun(["-t", "3s", ...c.args(server.port)]);
        assertContained(r, c.name);
        assertEquals(r.code, 1, `${c.name}: exit code (never 3 for a server's bytes)`);
        assert(
          r.startToExitMs <= 3000 + 100 + CI_MARGIN_MS,
          `${c.name}: exited ${Math.round(r.startToExitMs - 3000)} ms after the deadline`,
        );
        if (c.error) assertStringIncludes(lastError(r), c.error);
      } finally {
        server.close();
      }
    },
  });
  Deno.test({
    name: `garbage: ${c.name}, SIGTERM during the wait ends the run at once (exit 143)`,
    ...opts,
    fn: async () => {
      const server = garbageServer(behaviour, c.framing);
      try {
        const r = await faultRun(["-t", "60s", ...c.args(server.port)], {
          signal: { name: "SIGTERM", afterMs: 1500 },
        });
        assertContained(r, c.name);
        assertEquals(r.code, 143, `${c.name}: exit code`);
        assert(
          r.signalToExitMs <= 100 + CI_MARGIN_MS,
          `${c.name}: exited ${Math.round(r.signalToExitMs)} ms after SIGTERM`,
        );
      } finally {
        server.close();
      }
    },
  });
}
