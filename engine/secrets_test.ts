import { assertEquals } from "../tests/_assert.ts";
import { argvSecrets, commandSecrets, redactUrl, safeDecode } from "./secrets.ts";

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

Deno.test("commandSecrets() finds the credentials in a command's words", () => {
  assertEquals(commandSecrets(["psql", "postgres://u:pw123@h/db"]), ["u:pw123", "pw123"]);
  assertEquals(
    commandSecrets(["curl", "-H", "Authorization: Bearer tok987", "https://h/?token=abc&x=1"]),
    ["Bearer tok987", "tok987", "abc", "abc"],
  );
  assertEquals(commandSecrets(["mysql", "--password=s3cr3t", "--user", "app"]), ["s3cr3t"]);
  assertEquals(commandSecrets(["tool", "--api-token", "zz9", "--verbose"]), ["zz9"]);
  assertEquals(commandSecrets(["tool", "--secret", "--verbose"]), []);
  assertEquals(commandSecrets(["env", "PGPASSWORD=hunter2", "HOME=/root", "psql"]), ["hunter2"]);
  assertEquals(commandSecrets(["curl", "-u", "bob:letmein", "http://h/"]), ["letmein"]);
  assertEquals(commandSecrets(["sh", "-c", "echo stack is up"]), []);
});
