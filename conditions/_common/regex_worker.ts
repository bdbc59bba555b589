/**
 * The worker that runs one user regular expression on a large text, off the
 * main thread, so that the deadline and signals are never held by a match
 * (docs/contract.md §9). Message in: `{ source, flags, text }`; out: what the match
 * captured, or `null` when it does not match.
 *
 * @module
 */

import type { Captures } from "./captures.ts";
import { compileRegex } from "./regex.ts";

/** A request to the worker. */
interface RegexJob {
  readonly source: string;
  readonly flags: string;
  readonly text: string;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<RegexJob>) => void) | null;
  postMessage(v: Captures | null): void;
};
scope.onmessage = (e) => {
  const { source, flags, text } = e.data;
  scope.postMessage(compileRegex(source, flags).exec(text) ?? null);
};
