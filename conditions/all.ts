/**
 * Every kind's declaration, loaded: for help, completions, doctor, recipes
 * and the tests. The list itself is conditions/mod.ts.
 *
 * @module
 */

import type { Registry } from "../engine/registry.ts";
import { loadRegistry } from "./mod.ts";

/** The registry of every kind. */
export const registry: Registry = await loadRegistry();
