/**
 * Words quoted as a POSIX shell needs them, so that a printed command can be
 * copied back into a shell as it is (`sh -c 'echo stack is up'`).
 *
 * @module
 */

/** Characters a word may hold and still need no quotes. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word for a POSIX shell: as it is when safe, else in single quotes. */
export function quoteWord(word: string): string {
  if (PLAIN.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Words joined as a POSIX shell command line. */
export function shellQuote(words: readonly string[]): string {
  return words.map(quoteWord).join(" ");
}

/**
 * Words shown as a POSIX shell command line with their secrets masked where they stand
 * (docs/contract.md §9): `shown` is `given` as `maskWords` shows it; a word it left as it was is
 * quoted as given, a masked one quoted as shown.
 */
export function quoteMasked(given: readonly string[], shown: readonly string[]): string {
  return shown.map((w, i) => quoteWord(given[i] ?? w) === given[i] ? w : quoteWord(w)).join(" ");
}
