/**
 * The worker that parses a large body and evaluates `--xpath` expressions on
 * it, off the main thread, so that the deadline and signals are never held
 * by it (docs/contract.md §9). Message in: `{ exprs, text, contentType,
 * where }`; out: what `evaluateXPaths` gives, or `{ failed }` with why it
 * could not.
 *
 * @module
 */

import { evaluateXPaths, type XPathRaw } from "./xpath.ts";

/** A request to the worker. */
interface XPathJob {
  readonly exprs: readonly string[];
  readonly text: string;
  readonly contentType: string | undefined;
  readonly where: string;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<XPathJob>) => void) | null;
  postMessage(v: XPathRaw | { readonly failed: string }): void;
};
scope.onmessage = async (e) => {
  const { exprs, text, contentType, where } = e.data;
  try {
    scope.postMessage(await evaluateXPaths(exprs, text, contentType, where));
  } catch (err) {
    scope.postMessage({ failed: err instanceof Error ? err.message : String(err) });
  }
};
