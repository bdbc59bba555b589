/**
 * `--start CMD`'s text as words, split as a POSIX shell splits a simple command
 * (docs/contract.md §4, `--start`): blanks separate words; single quotes keep
 * everything up to the next single quote; double quotes keep everything up to
 * the next unescaped double quote, where a backslash escapes only `$`, `` ` ``,
 * `"`, `\` and a newline; outside quotes a backslash keeps the next character
 * (and a backslash-newline joins lines). Nothing is expanded: no variables, no
 * globs, no `~`, no operators; a command that needs a shell is written
 * `sh -c '…'`. One pass over the text, no pattern.
 *
 * @module
 */

/** Why a text cannot be split into words. */
export class WordsError extends Error {
  override name = "WordsError";
}

/** The words of `text`; throws a {@link WordsError} for an unclosed quote or a trailing backslash. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === " " || ch === "\t" || ch === "\n") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new WordsError("unclosed single quote");
      word += text.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new WordsError("unclosed double quote");
        const c = text[i]!;
        if (c === '"') break;
        if (c === "\\" && i + 1 < text.length && '$`"\\\n'.includes(text[i + 1]!)) {
          if (text[i + 1] !== "\n") word += text[i + 1];
          i += 2;
          continue;
        }
        word += c;
        i++;
      }
      i++;
    } else if (ch === "\\") {
      if (i + 1 >= text.length) throw new WordsError("a backslash ends the command");
      // A backslash-newline is a line continuation, not part of a word.
      if (text[i + 1] !== "\n") word += text[i + 1];
      else if (word === "") inWord = false;
      i += 2;
    } else {
      word += ch;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}
