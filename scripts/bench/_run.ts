/**
 * Running a command and timing it from spawn to exit, interleaved samples of
 * several commands, and temporary directories.
 *
 * Benchmarks measure; nothing here asserts a timing.
 *
 * @module
 */

/** What one run of a command gave. */
export interface RunResult {
  readonly code: number;
  /** From just before spawn to the moment its exit status was known. */
  readonly wallMs: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of `runTimed`. */
export interface RunOptions {
  readonly cwd?: string;
  readonly env?: Record<string, string>;
  /** Capture stdout and stderr (default: discard them, the cheapest for timing). */
  readonly capture?: boolean;
  /** Kill the child after this long (default 120 s); the result then has code 124. */
  readonly timeoutMs?: number;
}

/** Runs `cmd` and times it from spawn to exit. */
export async function runTimed(cmd: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const capture = opts.capture ?? false;
  const t0 = performance.now();
  const child = new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
    stdout: capture ? "piped" : "null",
    stderr: capture ? "piped" : "null",
  }).spawn();
  const timer = setTimeout(() => killQuietly(child), opts.timeoutMs ?? 120_000);
  try {
    if (capture) {
      const out = await child.output();
      const wallMs = performance.now() - t0;
      return {
        code: out.signal ? 124 : out.code,
        wallMs,
        stdout: new TextDecoder().decode(out.stdout),
        stderr: new TextDecoder().decode(out.stderr),
      };
    }
    const status = await child.status;
    const wallMs = performance.now() - t0;
    return { code: status.signal ? 124 : status.code, wallMs, stdout: "", stderr: "" };
  } finally {
    clearTimeout(timer);
  }
}

/** Sends `sig` to `child`, ignoring a child already gone. */
export function killQuietly(child: Deno.ChildProcess, sig: Deno.Signal = "SIGKILL"): void {
  try {
    child.kill(sig);
  } catch {
    // Already gone.
  }
}

/**
 * Runs each named command `n` times, interleaved (round-robin, the order
 * rotating every round) so that load on a shared machine hits all alike.
 * `warmup` rounds run first and are discarded. A run that exits with a code
 * other than `expectCode` makes it throw: a timing of a failed run means nothing.
 */
export async function interleave(
  commands: Record<string, readonly string[]>,
  n: number,
  opts: RunOptions & { warmup?: number; expectCode?: number } = {},
): Promise<Record<string, number[]>> {
  const names = Object.keys(commands);
  const out: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const warmup = opts.warmup ?? 2;
  for (let round = 0; round < warmup + n; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      const r = await runTimed(commands[name]!, opts);
      if (r.code !== (opts.expectCode ?? 0)) {
        const again = await runTimed(commands[name]!, { ...opts, capture: true });
        throw new Error(
          `${name}: ${commands[name]!.join(" ")} exited ${r.code}: ${
            again.stderr.trim().slice(-300)
          }`,
        );
      }
      if (round >= warmup) out[name]!.push(r.wallMs);
    }
  }
  return out;
}

/** A temporary directory removed by the returned function. */
export async function tempDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await Deno.makeTempDir({ prefix });
  return { path, remove: () => Deno.remove(path, { recursive: true }).catch(() => {}) };
}
