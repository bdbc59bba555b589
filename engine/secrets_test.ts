import { assertEquals } from "../tests/_assert.ts";
import { argvSecrets, redactUrl, safeDecode } from "./secrets.ts";

Deno.test("redactUrl() hides user-info and credential query values, even in a malformed URL", () => {
  assertEquals(redactUrl("http://alice:PW@[::1/?token=TOK&password=X&page=2"), {
    display: "http://***@[::1/?token=***&password=***&page=2",
    secrets: ["alice:PW", "PW", "TOK", "TOK", "X", "X"],
  });
  assertEquals(redactUrl("http://localhost:8080/health").secrets, []);
});

Deno.test("argvSecrets() finds secret flag values and URL secrets in a raw command line", () => {
  const flags = new Set(["password", "secret-access-key"]);
  assertEquals(
    argvSecrets(
      [
        "http",
        "ftp://alice:PW@127.0.0.1:1/?token=TOK",
        "--",
        "ssh",
        "h:22",
        "--password",
        "S1",
        "--secret-access-key=S2",
      ],
      flags,
    ),
    ["alice:PW", "PW", "TOK", "TOK", "S1", "S2"],
  );
  assertEquals(argvSecrets(["--password"], flags), []);
});

Deno.test("safeDecode() keeps + in user-info and reads it as a space in a query", () => {
  assertEquals(safeDecode("p%40ss+word", false), "p@ss+word");
  assertEquals(safeDecode("a+b%20c"), "a b c");
  assertEquals(safeDecode("%zz"), "%zz");
});
