/**
 * The start-up trace (docs/performance.md, "Where the time to a verdict
 * goes"): with `WAITCMD_TRACE_STARTUP=1`, each thread writes the first time
 * it passes a fixed point of the start-up to stderr, one line a point:
 * `waitcmd-trace <thread> <point> <ms since the epoch>`, so that the bench
 * (scripts/bench/startup_bench.ts) can split the time to a verdict into its
 * parts, main thread and workers on one clock. Off (the default), a mark is
 * one test of a constant.
 *
 * It reads its variable itself, unlike every other module (main.ts reads the
 * environment): the first point is this module's own evaluation, before
 * main.ts's first line, and a worker's points come before any message from
 * the main thread could switch it on.
 *
 * @module
 */

/** The variable that switches the trace on. */
export const TRACE_VARIABLE = "WAITCMD_TRACE_STARTUP";

/** When this module was evaluated: the first of our code that runs in this thread. */
const FIRST = performance.now();

function enabled(): boolean {
  try {
    return Deno.env.get(TRACE_VARIABLE) === "1";
  } catch {
    return false; // no permission to read the environment: no trace
  }
}

const ON = enabled();
const THREAD = "WorkerGlobalScope" in globalThis ? "worker" : "main";
const seen = new Set<string>();

function write(point: string, at: number): void {
  // performance.timeOrigin differs per thread; the sum is on the wall clock that both share.
  const line = `waitcmd-trace ${THREAD} ${point} ${(performance.timeOrigin + at).toFixed(3)}\n`;
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(line));
  } catch {
    // stderr closed: the trace is lost, the run is not
  }
}

/** Writes the first passage of this thread at `point` (when the trace is on). */
export function mark(point: string): void {
  if (!ON || seen.has(point)) return;
  seen.add(point);
  write(point, performance.now());
}

if (ON) {
  write("origin", 0);
  write("first", FIRST);
  seen.add("first");
}
