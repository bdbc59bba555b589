/**
 * The `xpath` package as `xpath_lib.js` exports it: typed `unknown` here,
 * the caller (`xpath.ts`) names the part it uses.
 *
 * @module
 */
declare const xpath: unknown;
export default xpath;
