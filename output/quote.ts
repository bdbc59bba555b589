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
