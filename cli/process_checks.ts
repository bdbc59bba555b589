/**
 * What the process itself says before a run (docs/contract.md §1, §3): the
 * open-files limit, and the words and variables whose bytes are not UTF-8.
 * Read from /proc at the edge; nothing where /proc cannot be read.
 *
 * @module
 */

import { isUtf8 } from "../engine/files.ts";
import type { NotUtf8 } from "./command.ts";

/** The fewest open files a run needs: the runtime, its signal handlers, a command's pipes. */
const MIN_OPEN_FILES = 32;

/**
 * The line to exit 3 with when the open-files limit (`ulimit -n`) is too low for the runtime
 * itself (docs/contract.md §3), or undefined. The runtime panics when it cannot get a
 * descriptor it needs (a signal handler's, a child's pipes): so the limit is said before.
 */
export function openFilesProblem(limits: string): string | undefined {
  const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
  if (soft === undefined || Number(soft) >= MIN_OPEN_FILES) return undefined;
  return `waitcmd: fatal: the open files limit (ulimit -n) is ${soft}; ` +
    `waitcmd needs at least ${MIN_OPEN_FILES}\n`;
}

/**
 * What the raw command line (/proc/self/cmdline) and environment (/proc/self/environ) hold
 * that is not UTF-8; nothing where /proc cannot be read. Every such word or value holds U+FFFD
 * once decoded, so the bytes are looked at only then (a typed U+FFFD is valid): a loop over
 * every byte at each start cost 5 MB of peak memory, the compiler's (docs/performance.md).
 * Of the environment, only `WAITCMD_*` variables count.
 */
export function findNotUtf8(args: readonly string[]): NotUtf8 {
  const read = (path: string) => {
    try {
      return Deno.readFileSync(path);
    } catch {
      return new Uint8Array();
    }
  };
  /** The NUL-terminated entries of `raw`, as bytes. */
  const entries = (raw: Uint8Array) => {
    const out: Uint8Array[] = [];
    for (let from = 0; from < raw.length;) {
      const end = raw.indexOf(0, from);
      out.push(raw.subarray(from, end < 0 ? raw.length : end));
      from = end < 0 ? raw.length : end + 1;
    }
    return out;
  };
  const badArgs: number[] = [];
  if (args.some((a) => a.includes("\uFFFD"))) {
    // The runtime's own words (deno run … main.ts) come first; the arguments are the last ones.
    const words = entries(read("/proc/self/cmdline")).slice(-args.length);
    if (words.length === args.length) words.forEach((w, i) => isUtf8(w) || badArgs.push(i));
  }
  const badEnv: string[] = [];
  const raw = read("/proc/self/environ");
  const suspect = new TextDecoder().decode(raw).split("\0").some((e) =>
    e.startsWith("WAITCMD_") && e.includes("\uFFFD")
  );
  if (suspect) {
    for (const entry of entries(raw)) {
      const text = new TextDecoder().decode(entry);
      if (text.startsWith("WAITCMD_") && !isUtf8(entry)) badEnv.push(text.replace(/=.*$/s, ""));
    }
  }
  return { args: badArgs, env: badEnv };
}

/** The text of `/proc/self/<name>`, or "" where it cannot be read (not Linux, no /proc). */
export function readSelf(name: string): string {
  try {
    return Deno.readTextFileSync(`/proc/self/${name}`);
  } catch {
    return "";
  }
}
