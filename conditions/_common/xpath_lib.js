// @ts-self-types="./xpath_lib.d.ts"
/**
 * The `xpath` package behind its own types (`xpath_lib.d.ts`): the package's
 * typings reference the DOM library, which would change the types of the
 * whole program when type-checked with it.
 *
 * @module
 */
export { default } from "xpath";
