/**
 * The exports of a CommonJS package loaded with `import()`.
 *
 * Deno gives a CommonJS module's exports as named exports and as `default`
 * when it runs the sources, but an `import()` of one from the release bundle
 * gives `module.exports` as `default` alone (docs/development.md, "Layout").
 * `default` is read first, so both give the same object.
 *
 * @module
 */

/** `mod`'s `module.exports`: its `default` when it has one, else `mod` itself. */
export function commonJsExports<T>(mod: T): T {
  return (mod as unknown as { default?: T }).default ?? mod;
}
