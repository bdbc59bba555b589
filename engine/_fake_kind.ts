/**
 * A kind for engine tests: `factory` makes its probes, and nothing else of
 * it is used (parsing throws).
 *
 * @module
 */

import type { ConditionKind, ProbeFactory } from "./types.ts";

/** A kind named `name` whose probe module's `create` is `factory` (none: loading throws). */
export function fakeKind(name = "fake", factory?: ProbeFactory<unknown>): ConditionKind {
  return {
    name,
    aliases: [],
    summary: "",
    description: "",
    target: { shape: "required", placeholder: "X", description: "" },
    flags: [],
    examples: [],
    parse: () => {
      throw new Error("not used");
    },
    load: () => factory ? Promise.resolve(factory) : Promise.reject(new Error("not used")),
  };
}
