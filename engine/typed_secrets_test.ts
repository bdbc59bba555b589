import { assertEquals } from "../tests/_assert.ts";
import {
  argvSecrets,
  commandSecrets,
  isCredentialName,
  maskArgvText,
  maskWords,
  redactUrl,
  safeDecode,
} from "./typed_secrets.ts";

Deno.test("redactUrl() hides a URL's password and credential query values, keeping the user", () => {
  assertEquals(redactUrl("http://alice:PW@[::1/?token=TOK&password=X&page=2"), {
    display: "http://alice:***@[::1/?token=***&password=***&page=2",
    secrets: ["PW", "PW", "TOK", "TOK", "X", "X"],
  });
  assertEquals(redactUrl("http://localhost:8080/health").secrets, []);
  assertEquals(
    redactUrl("postgres://postgres:postgres@127.0.0.1:5432/postgres").display,
    "postgres://postgres:***@127.0.0.1:5432/postgres",
  );
  assertEquals(redactUrl("amqp://guest@mq/").display, "amqp://guest@mq/");
  assertEquals(
    redactUrl("mongodb://u:p@h/?authSource=admin&authMechanism=SCRAM-SHA-256&pass=x").display,
    "mongodb://u:***@h/?authSource=admin&authMechanism=SCRAM-SHA-256&pass=***",
  );
  // The user-info ends at the last `@` before the path.
  assertEquals(redactUrl("redis://u:p@ss@h:1/0").display, "redis://u:***@h:1/0");
});

Deno.test("isCredentialName(): the credential names and endings of docs/contract.md §9, nothing else", () => {
  const yes = [
    ..."password passwd pass pwd secret token key apikey auth sig signature credential".split(" "),
    ...["sslpassword", "PASSWORD", "Token", "API_TOKEN", "gh-token", "aws_secret_access_key"],
    ...["X-Api-Key", "client_secret", "client-secret", "PGPASSWORD", "db_password", "X-Auth-Token"],
    ...["X-Amz-Signature", "request_signature"],
  ];
  const no = [
    ...["authSource", "authMechanism", "keyspace", "tokenizer", "sslmode", "user", "passes"],
    ...["keys", "tokens", "signed", "author", "MYSQL_PWD_FILE", "password_file", "keyfile", ""],
  ];
  for (const name of yes) assertEquals(isCredentialName(name), true, name);
  for (const name of no) assertEquals(isCredentialName(name), false, name);
});

Deno.test("argvSecrets() finds secret flag values and URL secrets in a raw command line", () => {
  const flags = new Set(["password", "secret-access-key"]);
  assertEquals(
    argvSecrets(
      [
        ...["http", "ftp://alice:PW@127.0.0.1:1/?token=TOK"],
        ...["--", "ssh", "h:22", "--password", "-S1", "--secret-access-key=S2"],
      ],
      flags,
    ),
    ["PW", "PW", "TOK", "TOK", "-S1", "S2"],
  );
  assertEquals(argvSecrets(["--password"], flags), []);
});

Deno.test("maskArgvText() masks a usage error's argv secrets where they stand, not the kind word", () => {
  const argv = ["postgres", "postgres://postgres:postgres@db:5432/postgres", "--bogus"];
  assertEquals(
    maskArgvText(`waitcmd: condition 1 (postgres): bad "${argv[1]}"`, argv, new Set()),
    'waitcmd: condition 1 (postgres): bad "postgres://postgres:***@db:5432/postgres"',
  );
  const flags = new Set(["password"]);
  assertEquals(
    maskArgvText("x: --password hunter2 is hunter2x", ["ssh", "--password", "hunter2"], flags),
    "x: --password *** is hunter2x",
  );
});

Deno.test("safeDecode() keeps + in user-info and reads it as a space in a query", () => {
  assertEquals(safeDecode("p%40ss+word", false), "p@ss+word");
  assertEquals(safeDecode("a+b%20c"), "a b c");
  assertEquals(safeDecode("%zz"), "%zz");
});

Deno.test("commandSecrets() finds the credentials in a command's words", () => {
  assertEquals(commandSecrets(["psql", "postgres://u:pw123@h/db"]), ["pw123", "pw123"]);
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
  assertEquals(
    commandSecrets(["mongosh", "--authenticationDatabase", "admin", "--keyspace=k"]),
    [],
  );
});

Deno.test("maskWords() masks then's secrets where they stand and keeps every other word", () => {
  assertEquals(
    maskWords([
      ...["env", "PGPASSWORD=pw", "psql", "postgres://postgres:postgres@h/postgres"],
      ...["--token", "t", "--auth=a", "-u", "bob:x", "-H", "X-Api-Key: k", "--user", "app"],
      ...["mongodb://h/?authSource=admin&authMechanism=SCRAM-SHA-256"],
    ]).display,
    [
      ...["env", "PGPASSWORD=***", "psql", "postgres://postgres:***@h/postgres"],
      ...["--token", "***", "--auth=***", "-u", "bob:***", "-H", "X-Api-Key: ***", "--user", "app"],
      ...["mongodb://h/?authSource=admin&authMechanism=SCRAM-SHA-256"],
    ],
  );
});

Deno.test("maskWords() masks the credential values of a keyword/value word where they stand", () => {
  const m = maskWords(["psql", "host=db user=postgres password=p dbname=postgres", "-c", "a b=c"]);
  assertEquals(m.display, [
    "psql",
    "host=db user=postgres password=*** dbname=postgres",
    "-c",
    "a b=c",
  ]);
  assertEquals(m.secrets, ["p"]);
  assertEquals(
    maskWords(["host=db password='two words' sslpassword=k"]).display,
    ["host=db password=*** sslpassword=***"],
  );
});

Deno.test("maskWords() masks a JSON word's credential-named members where they stand", () => {
  const m = maskWords(["--request", '{"name":"web","auth":{"api_key":"k-123"},"token":7}']);
  assertEquals(m.display, ["--request", '{"name":"web","auth":{"api_key":"***"},"token":"***"}']);
  assertEquals(m.secrets, ["k-123", "7"]);
  // Without a credential name, the word is kept as typed (its spacing too).
  assertEquals(maskWords(['{ "name": "web" }']).display, ['{ "name": "web" }']);
  assertEquals(maskWords(["{not json}"]).display, ["{not json}"]);
  assertEquals(maskWords(['--request={"token":"k-123"}']).display, ['--request={"token":"***"}']);
});
