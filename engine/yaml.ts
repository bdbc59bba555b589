/**
 * A YAML document's value, bounded: what the `yaml` package throws while it
 * builds the value (an alias bomb: `Excessive alias count indicates a
 * resource exhaustion attack`; nesting deeper than the stack) becomes one
 * short reason, for a usage error (docs/contract.md §1, recipes). Shared by
 * every reader of YAML a user hands over (recipes; Kubernetes manifests).
 *
 * @module
 */

import type { Document, LineCounter } from "yaml";
import { turn } from "./timers.ts";

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

/** How long the slices of {@link parseDocumentInSlices} run before the event loop has a turn. */
export const SLICE_MS = 20;

/** What {@link parseDocumentInSlices} needs of the `yaml` package. */
type YamlLibrary = Pick<typeof import("yaml"), "Composer" | "Lexer" | "Parser" | "YAMLParseError">;

/**
 * The one document of `text`, as the package's `parseDocument` makes it, but lexed and parsed
 * in slices of {@link SLICE_MS} with a turn of the event loop between them, so a signal during
 * a large recipe is answered (docs/contract.md §3). Errors keep their offsets (`pos`); `counter`
 * turns them into lines.
 */
export async function parseDocumentInSlices(
  yaml: YamlLibrary,
  text: string,
  counter: LineCounter,
  options: { uniqueKeys: boolean },
): Promise<Document.Parsed> {
  const parser = new yaml.Parser(counter.addNewLine);
  counter.addNewLine(0);
  const tokens = [];
  let since = performance.now();
  let n = 0;
  for (const lexeme of new yaml.Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    // The clock is read every 256 lexemes: reading it is not free either.
    if ((++n & 255) === 0 && performance.now() - since > SLICE_MS) {
      await turn();
      since = performance.now();
    }
  }
  for (const token of parser.end()) tokens.push(token);
  await turn();
  // Composing the document is one call of the package: for 30,000 conditions about 0.5 s
  // (docs/reliability.md), the longest stretch without a turn.
  let doc: Document.Parsed | undefined;
  for (const next of new yaml.Composer(options).compose(tokens, true, text.length)) {
    if (doc === undefined) doc = next;
    else {
      doc.errors.push(
        new yaml.YAMLParseError(
          [next.range[0], next.range[1]],
          "MULTIPLE_DOCS",
          "Source contains multiple documents; please use YAML.parseAllDocuments()",
        ),
      );
      break;
    }
  }
  await turn();
  return doc!;
}
