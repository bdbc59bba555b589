/**
 * Parses every registered kind's examples with no permissions at all (run
 * by conformance_test.ts as `deno run --no-prompt` without any --allow-*):
 * a `parse` that reads a file, the environment or the network fails here.
 * Prints one line per example: `ok <kind> <args>` or `FAIL <kind> <args>: <error>`.
 *
 * @module
 */

import { registry } from "../../conditions/all.ts";
import { UsageError } from "../../engine/errors.ts";
import { parseArgv } from "../../engine/grammar.ts";
import { EXAMPLE_ENV, shellWords } from "../_kit.ts";

for (const kind of registry.kinds) {
  for (const ex of kind.examples) {
    try {
      const c = parseArgv(shellWords(ex.args), registry, EXAMPLE_ENV);
      if (c.type !== "run") throw new Error(`parsed as ${c.type}`);
      console.log(`ok ${kind.name} ${ex.args}`);
    } catch (e) {
      const text = e instanceof UsageError ? e.format() : `${(e as Error).name}: ${e}`;
      console.log(`FAIL ${kind.name} ${ex.args}: ${text}`);
    }
  }
}
