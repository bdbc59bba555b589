/**
 * libpq's keyword/value grammar (engine/keyword_value.ts), row by row as
 * libpq's documentation and `conninfo_parse` read it.
 */

import { assertEquals } from "../tests/_assert.ts";
import { looksLikeKeywordValues, maskKeywordValues, parseKeywordValues } from "./keyword_value.ts";

Deno.test("parseKeywordValues() reads libpq's keyword/value strings", async (t) => {
  const rows: [string, [string, string][] | string][] = [
    ["host=localhost port=5432 dbname=mydb connect_timeout=10", [
      ["host", "localhost"],
      ["port", "5432"],
      ["dbname", "mydb"],
      ["connect_timeout", "10"],
    ]],
    // Blanks around the equal sign are optional (libpq's documentation).
    ["host = db\tport =5433\n", [["host", "db"], ["port", "5433"]]],
    // A value with blanks in single quotes; \' and \\ inside.
    ["password='it\\'s a \\\\ test' user=u", [["password", "it's a \\ test"], ["user", "u"]]],
    // An empty value: '' (and `x=` at the end).
    ["password='' options=", [["password", ""], ["options", ""]]],
    // A backslash escapes outside quotes too.
    ["application_name=a\\ b", [["application_name", "a b"]]],
    // A blank after `=` is skipped: the value is the next word (libpq reads `host= db` so).
    ["host= db", [["host", "db"]]],
    // After a closing quote the next keyword may follow at once, as in libpq.
    ["dbname='a'user=u", [["dbname", "a"], ["user", "u"]]],
    // A keyword given twice is given twice; the later wins where it is used.
    ["port=1 port=2", [["port", "1"], ["port", "2"]]],
    ["", []],
    ["host=db user", 'missing = "user"'],
    ["host db", 'missing = "host"'],
    ["password='abc", "unterminated quote"],
    ["password='abc\\'", "unterminated quote"],
  ];
  for (const [text, want] of rows) {
    await t.step(JSON.stringify(text), () => {
      const r = parseKeywordValues(text);
      const got = "error" in r
        ? `${r.error}${r.word === undefined ? "" : ` ${JSON.stringify(r.word)}`}`
        : r.pairs.map((p) => [p.keyword, p.value]);
      assertEquals(got, want);
    });
  }
});

Deno.test("parseKeywordValues() is linear on long and hostile strings", () => {
  const long = "a=" + "x".repeat(1_000_000);
  const r = parseKeywordValues(long);
  assertEquals("pairs" in r && r.pairs[0]!.value.length, 1_000_000);
  const quotes = "a='" + "\\'".repeat(200_000);
  assertEquals(parseKeywordValues(quotes), { error: "unterminated quote" });
});

Deno.test("maskKeywordValues() masks credential values where they stand", () => {
  const isSecret = (k: string) => k === "password" || k === "sslpassword";
  assertEquals(
    maskKeywordValues("host=db password='a b' user=postgres sslpassword=k", isSecret, "***"),
    { display: "host=db password=*** user=postgres sslpassword=***", secrets: ["a b", "k"] },
  );
  // An empty password is shown as written; nothing to hide.
  assertEquals(maskKeywordValues("password= ", isSecret, "***"), {
    display: "password= ",
    secrets: [],
  });
  assertEquals(maskKeywordValues("password='x", isSecret, "***"), undefined);
  assertEquals(looksLikeKeywordValues("host=db"), true);
  assertEquals(looksLikeKeywordValues("postgres://db/x?a=b"), false);
  assertEquals(looksLikeKeywordValues("db:5432"), false);
});
