/**
 * A YAML document's value, bounded: what the `yaml` package throws while it
 * builds the value (an alias bomb: `Excessive alias count indicates a
 * resource exhaustion attack`; nesting deeper than the stack) becomes one
 * short reason, for a usage error (docs/contract.md §1, recipes). Shared by
 * every reader of YAML a user hands over (recipes; Kubernetes manifests).
 *
 * @module
 */

import type { Document } from "yaml";

/** Why a document has no value we can use, as one short lower-case text. */
export class YamlValueError extends Error {
  override name = "YamlValueError";
}

/**
 * Aliases resolved per document at most (the package's own default): a billion-laughs
 * document of a few hundred bytes would otherwise expand to gigabytes.
 */
const MAX_ALIAS_COUNT = 100;

/** The value of `doc` (`toJS`); throws a `YamlValueError` saying why it has none. */
export function documentValue(doc: Document.Parsed | Document): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    const text = e instanceof Error ? e.message : String(e);
    if (/alias count/i.test(text)) {
      throw new YamlValueError("its aliases expand too far (an alias bomb?)");
    }
    if (e instanceof RangeError) throw new YamlValueError("it is nested too deeply");
    throw new YamlValueError(text.charAt(0).toLowerCase() + text.slice(1).split("\n")[0]);
  }
}
