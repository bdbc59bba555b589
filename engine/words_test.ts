import { assertEquals, assertStringIncludes, assertThrows } from "../tests/_assert.ts";
import { splitWords, WordsError } from "./words.ts";

Deno.test("splitWords splits on blanks and keeps quoted text whole", () => {
  assertEquals(splitWords("npm run start:api"), ["npm", "run", "start:api"]);
  assertEquals(splitWords("  a\t b \n c  "), ["a", "b", "c"]);
  assertEquals(splitWords(`sh -c 'echo "$HOME" && exit 3'`), [
    "sh",
    "-c",
    'echo "$HOME" && exit 3',
  ]);
  assertEquals(splitWords(`echo "a \\"b\\" \\$x \\n"`), ["echo", 'a "b" $x \\n']);
  assertEquals(splitWords(`a\\ b c\\'d`), ["a b", "c'd"]);
  assertEquals(splitWords(`''`), [""]);
  assertEquals(splitWords(`x'y'"z"`), ["xyz"]);
  assertEquals(splitWords("a \\\nb"), ["a", "b"]);
});

Deno.test("splitWords expands nothing", () => {
  assertEquals(splitWords("echo $HOME ~ *.ts a|b;c"), ["echo", "$HOME", "~", "*.ts", "a|b;c"]);
});

Deno.test("splitWords refuses unclosed quotes and a trailing backslash", () => {
  assertStringIncludes(
    assertThrows(() => splitWords("echo 'a"), WordsError).message,
    "unclosed single quote",
  );
  assertStringIncludes(
    assertThrows(() => splitWords('echo "a'), WordsError).message,
    "unclosed double quote",
  );
  assertStringIncludes(
    assertThrows(() => splitWords('echo "a\\"'), WordsError).message,
    "unclosed double quote",
  );
  assertStringIncludes(assertThrows(() => splitWords("echo \\"), WordsError).message, "backslash");
  assertEquals(splitWords("   "), []);
});
