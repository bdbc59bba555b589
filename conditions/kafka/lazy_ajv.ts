/**
 * Compiles `@platformatic/kafka`'s JSON schemas when they are first used, not when the library
 * is imported (docs/performance.md, "Where the time to a verdict goes"): the library compiles
 * 39 option schemas with ajv at its import, about 200 ms of the kind's start, where an attempt
 * uses three. Imported by the probe before the library, so in the kind's worker only (an isolate
 * of its own: no other code shares its ajv). A validator that `compile` returns is compiled at
 * its first call, then answers as ajv's would: its result, and its `errors` after the call. A
 * schema ajv refuses is refused at that first call instead of at the import.
 *
 * @module
 */

import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

type Compile = (this: Ajv2020, schema: unknown, meta?: boolean) => ValidateFunction;

const compileNow = Ajv2020.prototype.compile as Compile;

/** `compile`, deferred: the schema is compiled at the validator's first call. */
function compileLater(this: Ajv2020, schema: unknown, meta?: boolean): ValidateFunction {
  const compile = () => compileNow.call(this, schema, meta);
  let compiled: ValidateFunction | undefined;
  const validate = function (this: unknown, ...args: unknown[]): boolean {
    compiled ??= compile();
    const valid = (compiled as (...a: unknown[]) => boolean).apply(this, args);
    validate.errors = compiled.errors;
    return valid;
  } as ValidateFunction;
  return validate;
}

(Ajv2020.prototype as { compile: Compile }).compile = compileLater;
