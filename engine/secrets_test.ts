import { assertEquals } from "../tests/_assert.ts";
import {
  argvSecrets,
  clip,
  commandSecrets,
  escapeControls,
  redactText,
  redactUrl,
  safeDecode,
  SecretRegistry,
} from "./secrets.ts";

Deno.test("redactUrl() hides user-info and credential query values, even in a malformed URL", () => {
  assertEquals(redactUrl("http://alice:PW@[::1/?token=TOK&password=X&page=2"), {
    display: "http://***@[::1/?token=***&password=***&page=2",
    secrets: ["PW", "TOK", "TOK", "X", "X"],
  });
  assertEquals(redactUrl("http://localhost:8080/health").secrets, []);
});

Deno.test("argvSecrets() finds secret flag values and URL secrets in a raw command line", () => {
  const flags = new Set(["password", "secret-access-key"]);
  assertEquals(
    argvSecrets(
      [
        ...["http", "ftp://alice:PW@127.0.0.1:1/?token=TOK"],
        ...["--", "ssh", "h:22", "--password", "S1", "--secret-access-key=S2"],
      ],
      flags,
    ),
    ["PW", "TOK", "TOK", "S1", "S2"],
  );
  assertEquals(argvSecrets(["--password"], flags), []);
});

Deno.test("safeDecode() keeps + in user-info and reads it as a space in a query", () => {
  assertEquals(safeDecode("p%40ss+word", false), "p@ss+word");
  assertEquals(safeDecode("a+b%20c"), "a b c");
  assertEquals(safeDecode("%zz"), "%zz");
});

Deno.test("commandSecrets() finds the credentials in a command's words", () => {
  assertEquals(commandSecrets(["psql", "postgres://u:pw123@h/db"]), ["pw123"]);
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

Deno.test("SecretRegistry masks what it was given and what is added later, longest first", () => {
  const r = new SecretRegistry(["abc", "abcdef", "x"]);
  assertEquals(r.mask("abcdef abc x"), "*** *** x");
  r.add("late-token");
  r.add(undefined);
  assertEquals(r.mask("Bearer late-token"), "Bearer ***");
  // Inside a URL a secret shows percent-encoded.
  r.add("p@ss word");
  assertEquals(r.mask("postgres://app:p%40ss%20word@db"), "postgres://app:***@db");
  assertEquals(new SecretRegistry().size, 0);
});

Deno.test("redactText() masks registered secrets and every URL's password, keeping its user", () => {
  assertEquals(
    redactText("connect to postgres://app:hunter2@db:5432/app failed; see https://h/x"),
    "connect to postgres://app:***@db:5432/app failed; see https://h/x",
  );
  assertEquals(redactText("amqp://u:p@h and redis://:pw@r"), "amqp://u:***@h and redis://:***@r");
  assertEquals(redactText("user@host and http://host:8080/"), "user@host and http://host:8080/");
  const form = "expected postgres://[user[:password]@]host, redis://[[user]:password@]host";
  assertEquals(redactText(form), form);
  assertEquals(redactText("token TOKEN9", new SecretRegistry(["TOKEN9"])), "token ***");
});

Deno.test("escapeControls() writes control characters as escapes and keeps tabs", () => {
  assertEquals(escapeControls("a\nb\r\x1b[1A\tc\u2028\x7f"), "a\\nb\\r\\x1b[1A\tc\\u2028\\x7f");
  assertEquals(escapeControls("plain text"), "plain text");
});

Deno.test("clip() redacts, then escapes, then cuts: no cut leaves a secret's start", () => {
  const secrets = new SecretRegistry(["Zq9Secret11"]);
  // Cut first, the line would end in "Zq9Secret…".
  const line = "0".repeat(190) + "Zq9Secret11";
  assertEquals(clip(line, 200, secrets), "0".repeat(190) + "***");
  assertEquals(clip("x".repeat(300), 200), "x".repeat(199) + "…");
  assertEquals(clip("a\nb", 10), "a\\nb");
  assertEquals(clip("db postgres://app:pw@h".repeat(20), 30).includes("pw"), false);
  // Never half a surrogate pair.
  assertEquals(clip("ab😀cd", 4), "ab…");
});
