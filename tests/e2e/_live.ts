/**
 * Runs the waitcmd CLI as a subprocess and lets a test react to its output
 * while it runs (wait for the first attempt line, then change a file), for
 * tests where the order of events matters.
 *
 * @module
 */

import { type CliResult, type JsonReportShape, WAITCMD } from "./_cli.ts";

/** A running waitcmd process. */
export interface LiveCli {
  readonly child: Deno.ChildProcess;
  /** Lines seen so far on each stream. */
  readonly lines: { readonly stdout: string[]; readonly stderr: string[] };
  /** Resolves with the first line (seen before or later) of `stream` that `match` accepts. */
  waitFor(
    stream: "stdout" | "stderr",
    match: RegExp | ((line: string) => boolean),
    timeoutMs?: number,
  ): Promise<string>;
  /** Waits for the exit; `exitedAt` is `performance.now()` when the exit was noticed. */
  done(): Promise<CliResult & { exitedAt: number }>;
}

/** Starts `waitcmd ...args` (or `wrapper... waitcmd ...args`) with NO_COLOR. */
export function startCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; wrapper?: string[] } = {},
): LiveCli {
  const wrapper = opts.wrapper ?? [];
  const cmd = wrapper.length > 0 ? wrapper[0]! : WAITCMD;
  const argv = wrapper.length > 0 ? [...wrapper.slice(1), WAITCMD, ...args] : args;
  const child = new Deno.Command(cmd, {
    args: argv,
    cwd: opts.cwd,
    env: { NO_COLOR: "1", WAITCMD_CI: "off", ...opts.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const raw = { stdout: "", stderr: "" };
  const waiters = new Set<() => void>();
  const pump = async (name: "stdout" | "stderr", stream: ReadableStream<Uint8Array>) => {
    let rest = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      raw[name] += text;
      rest += text;
      const parts = rest.split("\n");
      rest = parts.pop()!;
      lines[name].push(...parts);
      for (const w of [...waiters]) w();
    }
    if (rest) lines[name].push(rest);
  };
  let exitedAt = 0;
  const status = child.status.then((s) => {
    exitedAt = performance.now();
    return s;
  });
  const pumps = Promise.all([pump("stdout", child.stdout), pump("stderr", child.stderr)]);
  /** Set once the process exited and all its output was read. */
  let finished = false;
  Promise.all([status, pumps]).then(() => {
    finished = true;
    for (const w of [...waiters]) w();
  });

  return {
    child,
    lines,
    waitFor(stream, match, timeoutMs = 20_000) {
      const test = typeof match === "function" ? match : (l: string) => match.test(l);
      return new Promise<string>((resolve, reject) => {
        let timer: ReturnType<typeof setTimeout> | undefined = undefined;
        const check = () => {
          const hit = lines[stream].find(test);
          if (hit !== undefined || finished) {
            waiters.delete(check);
            clearTimeout(timer);
            if (hit !== undefined) resolve(hit);
            else {
              reject(
                new Error(
                  `waitcmd exited before a line matching ${match} on ${stream}:\n${raw[stream]}`,
                ),
              );
            }
          }
        };
        timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no line matching ${match} on ${stream} within ${timeoutMs} ms:\n${raw[stream]}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async done() {
      const s = await status;
      await pumps;
      let json: JsonReportShape | undefined;
      try {
        json = JSON.parse(raw.stdout);
      } catch {
        json = undefined;
      }
      return { code: s.code, stdout: raw.stdout, stderr: raw.stderr, json, exitedAt };
    },
  };
}

/** What `runOnTerminal` saw. */
export interface TerminalRun {
  /** Everything written to the terminal, escapes included. */
  readonly raw: string;
  /** Each line the live view drew (after an erase-line escape), escapes removed. */
  readonly drawn: string[];
}

/** Removes ANSI escape sequences. */
export function stripAnsi(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
}

/**
 * Runs `waitcmd ...args` under a pseudo-terminal (util-linux `script`) of
 * `columns` columns, so stderr is a terminal and the live view draws.
 * NO_COLOR is unset unless `env` sets it.
 */
export async function runOnTerminal(
  args: string[],
  opts: { columns?: number; env?: Record<string, string> } = {},
): Promise<TerminalRun> {
  const env = opts.env ?? {};
  const quoted = [WAITCMD, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
  const cmd = `stty cols ${opts.columns ?? 160} rows 40; ${
    "NO_COLOR" in env ? "" : "env -u NO_COLOR "
  }${quoted}`;
  const out = await new Deno.Command("script", {
    args: ["-qefc", cmd, "/dev/null"],
    env: { TERM: "xterm", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const raw = new TextDecoder().decode(out.stdout);
  const drawn = raw.split("\x1b[2K").slice(1).map((seg) =>
    stripAnsi(seg.split("\n")[0]!).replace(/\r$/, "")
  );
  return { raw, drawn };
}
