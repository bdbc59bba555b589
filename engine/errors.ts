/**
 * The user's mistakes, as opposed to ours: a `UsageError` means exit 2 and
 * one line on stderr, before anything is probed.
 *
 * @module
 */

/** A bad flag, value, target or combination. `main` prints it and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
  /** Where: `condition 2 (http)`, `--timeout`, or empty. */
  readonly where: string;
  /** The help topic to point at: a kind name, or undefined for `waitcmd --help`. */
  readonly helpTopic: string | undefined;

  constructor(where: string, message: string, helpTopic?: string) {
    super(message);
    this.where = where;
    this.helpTopic = helpTopic;
  }

  /** The single line printed to stderr. */
  format(): string {
    const see = this.helpTopic ? `waitcmd help ${this.helpTopic}` : "waitcmd --help";
    const where = this.where ? `${this.where}: ` : "";
    return `waitcmd: ${where}${this.message} (see: ${see})`;
  }
}

/** Returns the text of any thrown value, for error lines (never a stack trace). */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
