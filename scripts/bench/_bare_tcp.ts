/**
 * The runtime's floor for `bench cost`: a bare Deno program doing the job of
 * `waitcmd tcp ADDR -- tcp ADDR ...` and nothing else. Each target gets one
 * connection (closed at once) per attempt, retried every interval until it
 * opens; the run ends when all have, or at the deadline. It prints the JSON
 * report's `status` and per-condition `attempts`, like waitcmd, and exits 0
 * or 1. Run with the same Deno flags as scripts/waitcmd, the difference
 * between its figures and waitcmd's is waitcmd's own code.
 *
 * Usage: deno run --allow-net _bare_tcp.ts TIMEOUT_MS INTERVAL_MS HOST:PORT...
 *
 * @module
 */

const [timeoutArg, intervalArg, ...targets] = Deno.args;
const timeoutMs = Number(timeoutArg);
const intervalMs = Number(intervalArg);
const attempts = targets.map(() => 0);
let open = 0;

function report(status: string): void {
  const conditions = attempts.map((n) => ({ attempts: n }));
  console.log(JSON.stringify({ status, conditions }));
}

async function poll(i: number): Promise<void> {
  const at = targets[i]!.lastIndexOf(":");
  const hostname = targets[i]!.slice(0, at);
  const port = Number(targets[i]!.slice(at + 1));
  for (;;) {
    attempts[i]!++;
    try {
      (await Deno.connect({ hostname, port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

setTimeout(() => {
  report("timeout");
  Deno.exit(1);
}, timeoutMs);
await Promise.all(targets.map((_, i) => poll(i).then(() => open++)));
report(open === targets.length ? "satisfied" : "timeout");
Deno.exit(0);
