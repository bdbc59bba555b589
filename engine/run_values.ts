/**
 * The run-level values that need more than their flag's type: `--jitter`,
 * `--backoff-factor` and `--start`'s commands (docs/contract.md §4). Each
 * failure is a `UsageError` naming the flag.
 *
 * @module
 */

import { UsageError } from "./errors.ts";
import { quoteMasked } from "./quote.ts";
import { maskWords } from "./typed_secrets.ts";
import { redactText, SecretRegistry } from "./masking.ts";
import { splitWords, WordsError } from "./words.ts";

/** One `--start` command: its text as given and its words (engine/words.ts). */
export interface StartCommand {
  /** As given. */
  readonly text: string;
  readonly argv: readonly string[];
  /** As shown: its words quoted, its secrets masked where they stand (docs/contract.md §9). */
  readonly shown: string;
}

/** `--jitter`: `20%` or `0.2`, from 0 to 100% (docs/contract.md §4). */
export function parseJitter(raw: string): number {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(raw.trim());
  const value = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(
      "--jitter",
      `expected a share from 0% to 100% (like 20% or 0.2), got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

/** `--backoff-factor`: a finite number of at least 1, `1.5` or `2` (docs/contract.md §4). */
export function parseBackoffFactor(raw: string): number {
  const m = /^(\d+(?:\.\d+)?|\.\d+)$/.exec(raw.trim());
  const value = m ? Number(m[1]) : NaN;
  if (!Number.isFinite(value) || value < 1) {
    throw new UsageError(
      "--backoff-factor",
      `expected a number of at least 1 (like 1.5 or 2), got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

/** One `--start` value as its words; empty or unclosed text is a usage error naming the flag. */
export function startCommand(text: string, i: number): StartCommand {
  const where = `--start (start ${i + 1})`;
  let argv: string[];
  try {
    argv = splitWords(text);
  } catch (e) {
    if (!(e instanceof WordsError)) throw e;
    throw new UsageError(where, `${e.message}: ${text}`);
  }
  if (argv.length === 0) {
    throw new UsageError(where, "expected a command, e.g. --start 'npm run start:api'");
  }
  return { text, argv, shown: startShown(text, argv) };
}

/**
 * A started command as shown (docs/contract.md §9): as written when it holds no secret; else its
 * words quoted with each secret masked where it stands, and the same values masked inside the
 * other words too (`sh -c 'echo --password=x' --password=x`).
 */
function startShown(text: string, argv: readonly string[]): string {
  const m = maskWords(argv);
  if (m.secrets.length === 0) return text;
  return redactText(quoteMasked(argv, m.display), new SecretRegistry(m.secrets));
}
