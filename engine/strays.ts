/**
 * Errors that escape every await: an unhandled rejection or an uncaught
 * exception, usually from a library's background socket. Deno would exit 1
 * on them, which in waitcmd means "timed out"; `main` turns them into an
 * internal error (exit 3) instead, unless a kind declared them harmless.
 *
 * @module
 */

const harmless: ((reason: unknown) => boolean)[] = [];

/** Declares stray errors matching `predicate` harmless (e.g. a library's known unawaited promise). */
export function ignoreStrays(predicate: (reason: unknown) => boolean): void {
  harmless.push(predicate);
}

/** Whether a stray error was declared harmless. */
export function isHarmlessStray(reason: unknown): boolean {
  return harmless.some((p) => p(reason));
}
