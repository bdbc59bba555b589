/**
 * How an exec condition is shown: its command with its arguments, quoted as a POSIX shell
 * needs them and with the credentials they carry masked (docs/contract.md §9), so that two
 * `exec curl …` conditions can be told apart in every output.
 *
 * @module
 */

import { commandSecrets } from "../../engine/typed_secrets.ts";
import { redactText, SecretRegistry } from "../../engine/masking.ts";
import { quoteWord } from "../../engine/quote.ts";

/**
 * The MySQL and MariaDB clients' `-pPASSWORD` (`mysqladmin ping -uroot -psecret`, common in health
 * checks): the password glued to `-p`, under no credential name `commandSecrets` knows.
 */
function attachedPasswords(words: readonly string[]): string[] {
  const program = words[0]?.slice(words[0].lastIndexOf("/") + 1) ?? "";
  if (!program.startsWith("mysql") && !program.startsWith("mariadb")) return [];
  return words.slice(1).filter((w) => w.startsWith("-p") && w.length > 2).map((w) => w.slice(2));
}

/** The mask a secret is shown as (docs/contract.md §9). */
const MASK = "***";

/**
 * `curl -s --token *** -H 'Authorization: ***' http://localhost/health`: `words` (the program and
 * its arguments) as one line, every credential `commandSecrets` finds in them masked. A word
 * that needs quotes only for its mask is shown bare.
 */
export function commandDisplay(words: readonly string[]): string {
  const secrets = new SecretRegistry([...commandSecrets(words), ...attachedPasswords(words)]);
  return words.map((word) => {
    const masked = redactText(word, secrets);
    if (masked === word) return quoteWord(word);
    // A mask alone needs no quotes (`--password=***`); the rest of the word may.
    const bare = masked.split(MASK).join("");
    return quoteWord(bare) === bare ? masked : quoteWord(masked);
  }).join(" ");
}
