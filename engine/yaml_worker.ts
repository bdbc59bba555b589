/**
 * The worker that reads a long YAML text (engine/yaml.ts, `readYaml`) off the
 * main thread, so that composing it holds no signal (docs/contract.md §3).
 * Message in: a `YamlJob`; out: a `YamlReply`.
 *
 * @module
 */

import { commonJsExports } from "./commonjs.ts";
import { toPieces } from "./pieces.ts";
import { documentsOf, type YamlJob, type YamlReply } from "./yaml.ts";

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<YamlJob>) => void) | null;
  postMessage(v: YamlReply): void;
};
scope.onmessage = async (e) => {
  const yaml = commonJsExports(await import("yaml"));
  try {
    scope.postMessage({ docs: toPieces(documentsOf(yaml, e.data.text, e.data.opts)) });
  } catch (err) {
    // The package recurses once per level: a text nested deeper than the stack.
    scope.postMessage({ fault: err instanceof Error ? err.message : String(err) });
  }
};
